"""Portal-root linter (the earlier verifier's citation check)."""

from __future__ import annotations

from claims_pipeline.config.settings import LinterSettings
from claims_pipeline.corpus.linter import lint_corpus, lint_line

from .conftest import make_corpus


def test_root_citation_next_to_figure_flagged():
    line = "- median **€185,000** ([stats.gov.xx](https://stats.gov.xx/))"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == [("https://stats.gov.xx/", "stats.gov.xx")]


def test_a_root_url_is_flagged_whatever_the_link_says():
    # the reference rule flagged only a label naming the host; a descriptive one cites the home page all the same
    line = "- The standard rate is **21 %** ([the tax portal](http://www.tax.gov.qq/))"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == [("http://www.tax.gov.qq/", "the tax portal")]
    assert lint_line(line, allowlist=[], root_allowlist=["tax.gov.qq"]) == []  # a deliberate root stays allowed


def test_a_home_page_named_in_running_text_is_still_a_finding():
    # extraction takes no claim from a site named in the running text (it is the subject, not the source); a figure
    # beside a home page's link is what the linter reports all the same
    for line in ("- [Land Office](http://www.land.gov.qq/) lists a 3 % transfer duty for new owners.",
                 "The [Land Office](http://www.land.gov.qq/) charges a 3 % transfer duty on every sale."):
        assert lint_line(line, allowlist=[], root_allowlist=[]) == [("http://www.land.gov.qq/", "Land Office")], line


def test_deep_link_pointer_and_no_figure_not_flagged():
    assert lint_line("- median **€185,000** ([stats](https://stats.gov.xx/hpi/2025))", allowlist=[], root_allowlist=[]) == []
    assert lint_line("- **5 %** (verify at [legal.gov.xx](https://legal.gov.xx/))", allowlist=[], root_allowlist=[]) == []
    assert lint_line("- portal [stats.gov.xx](https://stats.gov.xx/)", allowlist=[], root_allowlist=[]) == []


def test_figure_inside_url_does_not_count():
    line = "- portal [stats.gov.xx](https://stats.gov.xx/) and [r](https://x.org/rate-5%25)"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == []


def test_allowlists():
    line = "- fee **US$500** ([worc.ky](https://worc.ky/))"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == []
    assert lint_line(line, allowlist=["worc.ky"], root_allowlist=[]) == [("https://worc.ky/", "worc.ky")]
    assert lint_line(line, allowlist=["worc.ky"], root_allowlist=["worc.ky"]) == []


def test_lint_corpus_names_file_line_scope(corpus):
    root = corpus("countries/xa/playbook.md", "# T\n\n- median **€185,000** ([stats.gov.xa](https://stats.gov.xa/))\n"
                  "```\n- **5 %** ([tax.gov.xa](https://tax.gov.xa/))\n```\n")
    (f,) = lint_corpus(make_corpus(root), LinterSettings())
    assert (f.file, f.line, f.url, f.scope) == ("countries/xa/playbook.md", 3, "https://stats.gov.xa/", "xa")


def test_linter_agrees_with_extraction_on_attribution_and_pointers():
    # the figure goes to the deep link: the portal root after it is a co-citation, not the figure's source
    assert lint_line("- Fee **€300** ([d](https://tax.gov.xx/fees/2026)); portal: [legal.gov.xx](https://legal.gov.xx/)",
                     allowlist=[], root_allowlist=[]) == []
    # a pointer clause elsewhere on the line no longer hides a root citation of the figure
    line = "- Fee **US$300,000** ([cip.gov.xx](https://cip.gov.xx/)); verify the rest at [legal](https://legal.gov.xx/x)"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == [("https://cip.gov.xx/", "cip.gov.xx")]


def test_bare_and_backticked_root_citations_are_linted():
    assert lint_line("- VAT **18 %** (`https://tax.gov.xx/`)", allowlist=[], root_allowlist=[]) == [("https://tax.gov.xx/", "")]
    assert lint_line("- VAT **18 %** https://tax.gov.xx", allowlist=[], root_allowlist=[]) == [("https://tax.gov.xx", "")]


def test_root_allowlist_ignores_www_and_trailing_slash():
    line = "- DMTO **5.8 %** ([impots.gouv.fr](https://www.impots.gouv.fr/))"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == [("https://www.impots.gouv.fr/", "impots.gouv.fr")]
    for entry in ("impots.gouv.fr", "https://www.impots.gouv.fr", "www.impots.gouv.fr/"):
        assert lint_line(line, allowlist=[], root_allowlist=[entry]) == [], entry


def test_lint_corpus_reads_fences_like_extraction(corpus):
    root = corpus("countries/xa/playbook.md", "# T\n```curl -s https://x.gov.xa/api``` returns JSON\n"
                  "- median **€185,000** ([stats.gov.xa](https://stats.gov.xa/))\n")
    (f,) = lint_corpus(make_corpus(root), LinterSettings())
    assert (f.line, f.url) == (3, "https://stats.gov.xa/")


def test_overlapping_scope_dirs_lint_each_file_once(corpus):
    root = corpus("countries/xa/playbook.md", "# T\n- median **€185,000** ([stats.gov.xa](https://stats.gov.xa/))\n")
    assert len(lint_corpus(make_corpus(root, scope_dirs=["countries", "countries"]), LinterSettings())) == 1
