"""Markdown cells of the reports: cutting, URL links GitHub renders right, claims as prose."""

from __future__ import annotations

import pytest

from claims_pipeline.report.escape import claim_prose, cut, link_labels, md_cell, md_link


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("short", 10, "short"),
        ("The levy is 0.8 % of the value; companies pay at 18%", 50, "The levy is 0.8 % of the value; companies pay at…"),
        ("年収1,200万円以上の外国人は不動産取得税を支払う", 10, "年収1,200万円…"),  # no space: cut at the limit
        ("Taux réduit e\u0301tabli", 14, "Taux réduit…"),  # the cut falls inside "é" (e + combining accent)
        ("abcdefg e\u0301", 9, "abcdefg…"),
        ("ab\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea", 4, "ab…"),  # never half a flag
        ("ab\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea", 5, "ab\U0001f1eb\U0001f1f7…"),
        ("ab\U0001f468\u200d\U0001f469\u200d\U0001f467x", 5, "ab…"),  # not inside a ZWJ sequence
    ],
)
def test_cut(text: str, limit: int, expected: str) -> None:
    got = cut(text, limit)
    assert got == expected and len(got) <= limit


def test_md_link_is_an_explicit_link_with_the_row_breakers_encoded() -> None:
    url = "https://www.legifrance.gouv.fr/article_lc/X?a=1&b=2#x(y)|z<w>\\v"
    cell = md_link(url)
    label, dest = cell[1:].split("](<", 1)
    assert dest.endswith(">)") and "\\" not in dest and "|" not in dest and "<" not in dest[:-2]
    assert dest[:-2] == "https://www.legifrance.gouv.fr/article_lc/X?a=1&b=2#x(y)%7Cz%3Cw%3E%5Cv"
    assert "\\|" in label and "\\_" in label  # the label is escaped text
    assert md_link("javascript:alert(1)") == "javascript:alert\\(1\\)"  # never a link


def test_a_url_inside_a_cell_is_not_autolinked_with_its_escapes() -> None:
    cell = md_cell("see https://x.gouv.fr/a_b and www.y.gouv.fr/q_1")
    assert "https\\://x.gouv.fr/a\\_b" in cell and "www\\.y.gouv.fr/q\\_1" in cell
    assert "://" not in cell.replace("\\://", "") and "www." not in cell


def test_claims_show_links_as_their_labels() -> None:
    text = '**Levy 0.8 %** ([MLIT source](https://www.mlit.go.jp/a_(b)/c.html)), ![logo](x.png), [t](<a b> "T")'
    assert link_labels(text) == "**Levy 0.8 %** (MLIT source), logo, t"
    assert link_labels("[" * 5000 + "](") == "[" * 5000 + "]("  # bounded: no link, nothing lost


@pytest.mark.parametrize("line, shown", [
    ("- **Levy 0.8 %** ([src](https://a.gov.xa/l))", "**Levy 0.8 %** (src)"),
    ("  12. Duty 4.5 % applies", "Duty 4.5 % applies"),
    ("> - Note: 7 % since 2024", "Note: 7 % since 2024"),
    ("-5 % is the cut", "-5 % is the cut"),  # a minus sign, not a list marker
    ("2024. A year", "A year"),
])
def test_claim_prose_drops_the_line_marker(line: str, shown: str) -> None:
    assert claim_prose(line) == shown


def test_claim_plain_for_html_drops_bold_markers_too() -> None:
    from claims_pipeline.report.escape import claim_plain

    assert claim_plain("- **Levy 0.8 %** of the __cadastral__ value ([src](https://a.gov.xa/l)), 2 ** 3") == \
        "Levy 0.8 % of the cadastral value (src), 2 ** 3"


def test_autolink_guard_is_case_blind_and_covers_an_underscore_before_www() -> None:
    assert md_cell("see WWW.x.gov/a_b") == "see WWW\\.x.gov/a\\_b"
    assert md_cell("a_www.evil.gov.xa/a_b") == "a\\_www\\.evil.gov.xa/a\\_b"
    assert md_cell("HTTPS://x.gov/a") == "HTTPS\\://x.gov/a"


def test_claim_prose_shows_a_linked_image_as_its_alt_text() -> None:
    assert claim_prose("- Levy 0.8 % [![logo](https://cdn.x/l.png)](https://a.gov.xa/p) and ![chart](c.png)") == \
        "Levy 0.8 % logo and chart"
    assert claim_prose('[![logo](https://cdn.x/l.png "t")](https://a.gov.xa/p) 0.8 %') == "logo 0.8 %"
