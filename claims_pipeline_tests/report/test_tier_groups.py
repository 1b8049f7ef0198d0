"""The report groups figures absent from their page by the source's tier: official first, then secondary sources
and the project's own pages under their own headings; a report citing only official sources has no such heading."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from claims_pipeline.priors import build_prior
from claims_pipeline.report import write_reports
from claims_pipeline.report.audit import build_audit
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value

URL = "https://www.tax.gov.zz/fees"
BLOG = "https://blog.example.net/fees"
OWN = "https://kb.example.org/fees"


def reports(tmp_path: Path, tiers: dict[str, str]) -> tuple[str, str]:
    claims = [replace(claim(f"Fee €{n},700", [value("money", f"€{n},700")], url=url, scope="yy", line_no=n), source_tier=t)
              for n, (url, t) in enumerate(tiers.items(), 1)]
    pages = {u: page(u, FILLER + "The fee is 2,5 %. " + FILLER) for u in tiers}
    priors = {c.id: build_prior(c, pages[c.source_url], rules_of()) for c in claims}
    audit = build_audit(claims, pages, priors, run_at=datetime(2026, 7, 1, tzinfo=UTC))
    paths = write_reports(audit, tmp_path)
    return paths["report.md"].read_text(encoding="utf-8"), paths["report.html"].read_text(encoding="utf-8")


def test_absent_figures_are_grouped_by_source_tier(tmp_path):
    md, html_doc = reports(tmp_path, {BLOG: "secondary", URL: "primary-gov", OWN: "own"})
    section = md.split("## Figure NOT on cited page")[1].split("\n## ")[0]
    headings = [line for line in section.splitlines() if line.startswith("### ")]
    assert headings == ["### From official sources (1)",
                        "### From secondary sources: a lead to check against an official page, not a finding (1)",
                        "### From the project's own pages: the figure is only checked against another copy of itself (1)"]
    assert section.index("tax.gov.zz") < section.index("blog.example.net") < section.index("kb.example.org")
    assert "<h3>From secondary sources: a lead to check against an official page, not a finding (1)</h3>" in html_doc


def test_only_official_sources_no_tier_heading(tmp_path):
    md, html_doc = reports(tmp_path, {URL: "primary-gov", "https://www.cnil.fr/fees": "primary-allowlist"})
    assert "### From" not in md and "<h3>From" not in html_doc
    assert "## Figure NOT on cited page — `TOKENS_ABSENT` (2)" in md
