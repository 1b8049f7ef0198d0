"""Scopes, file selection, and bad input (issue item 8): warnings name file:line and extraction goes on."""

from __future__ import annotations

import codecs
from datetime import UTC

import pytest

from claims_pipeline.corpus.extract import extract_corpus, list_scopes, resolve_scope_filter

from .conftest import make_corpus

GOOD = "## Tax\n- VAT **18 %** ([t](https://tax.gov.xx/v))\n"


def test_scopes_countries_first_and_shared_keep_subfolders(corpus):
    root = corpus("countries/fr/playbook.md", GOOD)
    corpus("shared/exit/western-balkans.md", GOOD)
    corpus("shared/western-balkans.md", GOOD)
    corpus("countries/fr/test-fixtures.md", GOOD)  # skip_files
    corpus("countries/fr/node_modules/x.md", GOOD)  # exclude_dirs
    scopes = list_scopes(make_corpus(root))
    assert list(scopes) == ["fr", "shared/exit/western-balkans", "shared/western-balkans"]
    assert [p.name for p in scopes["fr"]] == ["playbook.md"]


def test_scope_filter_exact_or_suffix(corpus):
    root = corpus("countries/fr/playbook.md", GOOD)
    corpus("shared/exit/western-balkans.md", GOOD)
    s = make_corpus(root)
    assert resolve_scope_filter(s, "western-balkans") == ["shared/exit/western-balkans"]
    assert resolve_scope_filter(s, "fr") == ["fr"]
    ex = extract_corpus(s, scopes=resolve_scope_filter(s, "exit/western-balkans"))
    assert [c.scope for c in ex.claims] == ["shared/exit/western-balkans"]


def test_section_filter(corpus):
    root = corpus("countries/fr/playbook.md", GOOD + "## Rent\n- cap **3.5 %** ([r](https://rent.gouv.xx/c))\n")
    ex = extract_corpus(make_corpus(root), section="rent")
    assert [c.section for c in ex.claims] == ["Rent"]


def test_binary_md_skipped_with_warning(corpus):
    root = corpus("countries/aa/playbook.md", b"\x89PNG\r\n\x1a\n\x00\x00junk")
    corpus("countries/bb/playbook.md", GOOD)
    ex = extract_corpus(make_corpus(root))
    assert [c.scope for c in ex.claims] == ["bb"]
    (w,) = ex.warnings
    assert w.file == "countries/aa/playbook.md" and "binary" in w.message and "countries/aa/playbook.md:3" in str(w)  # the first NUL byte is on line 3


def test_non_utf8_decoded_with_replacement(corpus):
    text = ("## Tax\n- caf\xe9 tax note\n- VAT **18 %** ([t](https://tax.gov.xx/v))\n").encode("latin-1")
    root = corpus("countries/aa/playbook.md", text)
    ex = extract_corpus(make_corpus(root))
    assert [c.line_no for c in ex.claims] == [3]
    (w,) = ex.warnings
    assert (w.line_no, "UTF-8" in w.message) == (2, True)


def test_huge_single_line_cut_with_warning(corpus):
    big = "- " + "figure 12 % and text " * 600_000 + "([t](https://tax.gov.xx/v))\n"  # ~12 MB on one line
    root = corpus("countries/aa/playbook.md", "## Tax\n" + big + GOOD)
    ex = extract_corpus(make_corpus(root, max_line_chars=200_000))
    assert any(w.line_no == 2 and "cut" in w.message for w in ex.warnings)
    assert [c.line_no for c in ex.claims] == [4]  # the cut line lost its link; the next line still counts


def test_unbalanced_brackets_and_unsafe_schemes_warn(corpus):
    text = ("- VAT **18 %** ([t](https://tax.gov.xx/v\n"
            "- PIT **10 %** ([x](javascript:alert(1))) and [y](file:///etc/passwd) and [z](data:text/html,hi)\n"
            "- CIT **22 %** ([c](https://tax.gov.xx/c))\n")
    root = corpus("countries/aa/playbook.md", text)
    ex = extract_corpus(make_corpus(root))
    msgs = [(w.line_no, w.message.split(" ")[0]) for w in ex.warnings]
    assert (1, "unbalanced") in msgs
    assert sorted(m for n, m in [(w.line_no, w.message) for w in ex.warnings] if n == 2 and "target" in m).__len__() == 3
    assert [c.source_url for c in ex.claims] == ["https://tax.gov.xx/v", "https://tax.gov.xx/c"]


def test_link_warnings_kept_on_lines_without_any_digit(corpus):
    # Lines with no digit skip the figure work; their link warnings must still be reported.
    text = ("- See the tax office ([t](https://tax.gov.xx/v\n"
            "- Forms ([x](javascript:alert) and [y](https://tax.gov.xx/forms))\n"
            "- Bare portal https://tax.gov.xx/portal\n"
            "- CIT **22 %** ([c](https://tax.gov.xx/c))\n")
    root = corpus("countries/aa/playbook.md", text)
    ex = extract_corpus(make_corpus(root))
    assert [(w.line_no, w.message.split(" ")[0]) for w in ex.warnings] == [(1, "unbalanced"), (2, "link")]
    assert [c.line_no for c in ex.claims] == [4]


def test_digitless_bare_url_lines_left_out_keep_long_line_warning_and_sections(corpus):
    # A line with a URL but no digit and no "](" is not visited at all: it still warns when too long, and the
    # sections of the lines after it (a heading holding such a URL, a skipped heading) stay the same.
    long_line = "- Portal https://tax.gov.xx/portal " + "see the site " * 120 + "\n"  # > 1,000 chars, no digit
    text = ("## Tax https://tax.gov.xx/\n"
            + long_line
            + "- Bare portal https://tax.gov.xx/portal\n"
            "- VAT **18 %** ([t](https://tax.gov.xx/v))\n"
            "## Sources\n- Portal https://tax.gov.xx/list\n- CIT **22 %** ([c](https://tax.gov.xx/c))\n"
            "### Portals\n- CIT **22 %** ([c](https://tax.gov.xx/c2))\n"  # a subsection of "Sources" is skipped too
            "## Rates https://rates.gov.xx/ (see https://tax.gov.xx/)\n- PIT **10 %** ([p](https://tax.gov.xx/p))\n")
    root = corpus("countries/aa/playbook.md", text)
    ex = extract_corpus(make_corpus(root, max_line_chars=1000))
    assert [(w.line_no, w.message) for w in ex.warnings] == [(2, f"line of {len(long_line) - 1:,} chars cut to 1,000")]
    assert [(c.line_no, c.section) for c in ex.claims] == [(4, "Tax https://tax.gov.xx/"),
                                                           (11, "Rates https://rates.gov.xx/ (see https://tax.gov.xx/)")]


def test_configured_scope_dirs_skip_files_and_exclude_dirs(corpus):
    root = corpus("regions/north/playbook.md", GOOD)
    corpus("regions/north/draft.md", GOOD)
    corpus("regions/north/archive/old.md", GOOD)
    corpus("countries/fr/playbook.md", GOOD)  # not a configured scope dir any more
    s = make_corpus(root, scope_dirs=["regions"], skip_files=["draft.md"], exclude_dirs=["archive"])
    scopes = list_scopes(s)
    assert {k: [p.relative_to(root).as_posix() for p in v] for k, v in scopes.items()} == {
        "regions/north/playbook": ["regions/north/playbook.md"]}
    assert [c.scope for c in extract_corpus(s).claims] == ["regions/north/playbook"]


def test_files_sharing_a_scope_never_share_a_claim_id(corpus):
    """countries/fr/**.md all have scope fr and count lines per file: line 2 of two files citing one URL were one
    id, so the audit kept one claim and gave it the other's prior. Ids of a scope's files now name the file."""
    from datetime import datetime

    from claims_pipeline.priors import build_prior
    from claims_pipeline.report.audit import build_audit
    from claims_pipeline_tests.report.factories import page, rules_of

    root = corpus("countries/fr/playbook.md", "## Tax\n- Rate **5 %** ([x](https://tax.gouv.fr/r))\n")
    corpus("countries/fr/notes/extra.md", "## Tax\n- Rate **7 %** ([x](https://tax.gouv.fr/r))\n")
    corpus("countries/de/playbook.md", GOOD)  # a scope of one file keeps the earlier verifier's id form
    s = make_corpus(root)
    ex = extract_corpus(s)
    assert sorted(c.id for c in ex.claims) == [
        "de:2:" + ex.claims[0].id.rsplit(":", 1)[1], "fr:notes/extra.md:2:" + ex.claims[1].id.rsplit(":", 1)[1],
        "fr:playbook.md:2:" + ex.claims[2].id.rsplit(":", 1)[1]]
    url = "https://tax.gouv.fr/r"
    text = "The transfer tax rate is 5 % of the price. " * 20
    pages = {url: page(url, text), "https://tax.gov.xx/v": page("https://tax.gov.xx/v", "VAT is 18 %. " * 30)}
    priors = {c.id: build_prior(c, pages[c.source_url], rules_of()) for c in ex.claims}
    audit = build_audit(ex.claims, pages, priors, run_at=datetime(2026, 7, 1, tzinfo=UTC))
    by_file = dict(zip(audit.priors["file"], audit.priors["prior"]))
    assert audit.headline["total"] == 3 and audit.headline["flagged"] == 1
    assert by_file == {"countries/de/playbook.md": "TOKENS_PRESENT", "countries/fr/notes/extra.md": "TOKENS_ABSENT",
                       "countries/fr/playbook.md": "TOKENS_PRESENT"}


def test_hidden_files_are_skipped_and_any_case_of_md_is_read(corpus):
    root = corpus("countries/fr/playbook.md", GOOD)
    corpus("countries/fr/NOTES.MD", GOOD)
    corpus("countries/.obsidian/x.md", GOOD)  # would have become scope ".obsidian"
    corpus("countries/fr/.drafts/draft.md", GOOD)
    corpus("countries/fr/.hidden.md", GOOD)
    scopes = list_scopes(make_corpus(root))
    assert {k: [p.name for p in v] for k, v in scopes.items()} == {"fr": ["NOTES.MD", "playbook.md"]}


def test_overlapping_scope_dirs_read_each_file_once(corpus):
    root = corpus("countries/fr/playbook.md", GOOD)
    ex = extract_corpus(make_corpus(root, scope_dirs=["countries", "countries"]))
    assert len(ex.claims) == 1 and ex.files == ["countries/fr/playbook.md"]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "utf-32-le"])
def test_utf16_and_utf32_with_a_byte_order_mark_are_text_not_binary(codec, tmp_path):
    """A Windows editor's "Unicode" save: NUL bytes throughout, after a byte-order mark (issue 35: "binary")."""
    from claims_pipeline.corpus.reading import read_markdown

    text = "## Tax\n- VAT **18 %** ([t](https://tax.gov.xx/v)) — café\n" * 2000  # past the first 8 KB
    bom = {"utf-16-be": codecs.BOM_UTF16_BE, "utf-32-le": codecs.BOM_UTF32_LE}.get(codec, b"")
    path = tmp_path / "wide.md"
    path.write_bytes(bom + text.encode(codec))
    assert read_markdown(path, "wide.md") == (text, [])
    # a broken tail is repaired and named, as bad UTF-8 is
    bad = {"utf-16": b"\x00\xd8A\x00", "utf-16-be": b"\xd8\x00\x00A"}.get(codec, b"\xff\xff\xff\xff")  # a lone surrogate
    path.write_bytes(bom + text.encode(codec) + bad)
    got, warnings = read_markdown(path, "wide.md")
    assert got is not None and got.startswith(text) and [w.line_no for w in warnings] == [4001]
