"""Portal-root linter (original §9, last part)."""

from __future__ import annotations

from claims_pipeline.corpus.linter import lint_corpus, lint_line

from .conftest import make_settings


def test_root_citation_next_to_figure_flagged():
    line = "- median **€185,000** ([stats.gov.xx](https://stats.gov.xx/))"
    assert lint_line(line, allowlist=[], root_allowlist=[]) == [("https://stats.gov.xx/", "stats.gov.xx")]


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
    (f,) = lint_corpus(make_settings(root))
    assert (f.file, f.line, f.url, f.scope) == ("countries/xa/playbook.md", 3, "https://stats.gov.xa/", "xa")
