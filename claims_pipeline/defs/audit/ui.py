"""What the audit assets and checks show in the UI: the headline, each scope's findings, the flagged claims.

Markdown is built by the report package (pure, escaped); this module only wraps it as Dagster metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg

from claims_pipeline.defs.metadata import (
    CLAIM_LIMIT,
    WHERE_LIMIT,
    first,
    home_entry,
    home_path,
    md_table,
)
from claims_pipeline.report.audit import Audit
from claims_pipeline.report.md_tables import Link, prose, where
from claims_pipeline.steps.audit.publish import PublishedReport

ABSENT_HEADERS = ["scope", "where", "claim", "missing", "url"]
STALE_HEADERS = ["scope", "where", "claim", "verified → changed", "url"]
CHANGED_HEADERS = ["scope", "url", "changed", "claims citing it"]
# characters per column of the claim tables above (the url column: URL_LIMIT), so each fits the UI's cell
CLAIM_LIMITS = [30, WHERE_LIMIT, CLAIM_LIMIT, 40]
# the findings by scope (WEAK_MATCH, not a finding, is in the report and audit_report's list of its own): short
# headers and a scope cut at SCOPE_LIMIT, so the table shows whole in the lineage's side panel too (about 290 px
# beside the key column; Dagster keeps a table's first column on one line); the legend under it names each figure.
# Changed pages by scope: the changed_pages table; claims: the headline.
SCOPE_HEADERS = ["scope", "stale", "absent"]
SCOPE_LIMIT = 18
SCOPE_LEGEND = "stale: stale_changed claims  \nabsent: TOKENS_ABSENT claims"


def absent_rows(priors_df: Any) -> list[list[Any]]:
    df = priors_df[priors_df["prior"] == "TOKENS_ABSENT"]
    return [[r.scope, where(r.file, r.line_no), prose(r.claim), ", ".join(json.loads(r.missing)[:6]), Link(r.url)]
            for r in df.itertuples()]


def stale_rows(priors_df: Any) -> list[list[Any]]:
    df = priors_df[priors_df["stale_changed"]]
    return [[r.scope, where(r.file, r.line_no), prose(r.claim), f"{r.last_verified or 'never'} → {str(r.changed_at)[:10]}",
             Link(r.url)] for r in df.itertuples()]


def changed_page_rows(priors_df: Any) -> list[list[Any]]:
    """One row per (scope, page) whose change this audit reports, with how many of the scope's claims cite it."""
    df = priors_df[priors_df["content_changed"]]
    rows = []
    for (scope, url), group in df.groupby(["scope", "url"], sort=True):
        rows.append([scope, Link(url), str(group["changed_at"].iloc[0])[:10], len(group)])
    return rows


def scope_rows(audit: Audit) -> list[list[Any]]:
    """One row per scope with something to review first, then the quiet ones."""
    from claims_pipeline.report.ui_summary import scope_status_rows

    rows = scope_status_rows(audit)
    rows.sort(key=lambda r: (-(r["stale_changed"] + r["tokens_absent"] + r["changed_pages"]), r["scope"]))
    return [[r["scope"], r["stale_changed"], r["tokens_absent"]] for r in rows]


def _shown(path: Path, home: Path | None) -> str:
    value = home_path(path, home)
    return str(value.value)


def audit_metadata(audit: Audit, tables_dir: Path, home: Path | None = None) -> dict[str, Any]:
    """The headline, then the top rows of each table with a pointer to the full one (priors.parquet has every
    claim): bounded whatever the audit's size. `home`: paths under it show as '<home>/…' (home_path)."""
    h = audit.headline
    full = _shown(tables_dir / "priors.parquet", home)
    return {
        "run_at": audit.run_at,  # which audit's tables these are: the report checks it (audit_report)
        "scopes": len(audit.scopes),
        "scopes_missing": dg.MetadataValue.json(first(audit.scopes_missing)),
        "claims": h["total"],
        "flagged": h["flagged"],
        "tokens_absent": h["tokens_absent"],
        "content_changed": h["content_changed"],
        "stale_changed": h["stale_changed"],
        "by_prior": dg.MetadataValue.json(h["by_prior"]),
        "by_scope": md_table(SCOPE_HEADERS, scope_rows(audit), full=full, limits=[SCOPE_LIMIT], note=SCOPE_LEGEND),
        "changed_pages": md_table(CHANGED_HEADERS, changed_page_rows(audit.priors), full=full, limits=[30]),
        "headline": dg.MetadataValue.json(h),
        **(home_entry(home) if home is not None else {}),
        "tables": home_path(tables_dir, home),
        "stale_changed_claims": md_table(STALE_HEADERS, stale_rows(audit.priors), full=full, limits=CLAIM_LIMITS,
                                         cut_note=True),
        "tokens_absent_claims": md_table(ABSENT_HEADERS, absent_rows(audit.priors), full=full, limits=CLAIM_LIMITS,
                                         cut_note=True),
    }


def report_metadata(published: PublishedReport, home: Path | None = None) -> dict[str, Any]:
    from claims_pipeline.report.ui_summary import flagged_claims_markdown, headline_markdown

    audit = published.audit
    return {
        "summary": dg.MetadataValue.md(headline_markdown(audit)),
        "flagged": audit.headline["flagged"],
        # as many rows as `flagged`; the WEAK_MATCH claims (not flagged: worth a look) in a list of their own
        "flagged_claims": dg.MetadataValue.md(flagged_claims_markdown(audit)),
        "weak_match_claims": dg.MetadataValue.md(
            "_Not flagged: some of the claim's figures are on the page, or only weakly. Worth a look._\n\n"
            + flagged_claims_markdown(audit, weak_match=True)),
        **(home_entry(home) if home is not None else {}),
        "report_dir": home_path(published.out_dir, home),
        **{f"report_{k}": home_path(v, home) for k, v in sorted(published.files.items())},
        "headline": dg.MetadataValue.json(audit.headline),
        "previous_run": published.previous_run or "(none)",
    }
