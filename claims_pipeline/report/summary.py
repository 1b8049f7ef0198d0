"""report.json: the headline numbers plus the rows of every bucket (the reference audit_report shape, docs/decisions/0001), every
claim with its prior (`claims`), and what report.md and report.html show besides: the changed pages with their diff and claims, the change notes, times
in UTC (report/sections.py)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from claims_pipeline.report.audit import Audit
from claims_pipeline.report.escape import cell_text
from claims_pipeline.report.sections import (
    change_note,
    changed_page_count,
    changed_pages,
    json_list,
    table_rows,
    unconfirmed_note,
    utc_time,
)

BUCKETS = ("stale_changed", "content_changed", "tokens_absent", "weak_match", "pdf_no_text", "source_unavailable",
           "source_binary")


def _unconfirmed(r: Any) -> dict[str, str]:
    """The keys of a claim whose page's new text is not confirmed yet (present only then): when it was first read,
    and the report's words for it."""
    note = unconfirmed_note(r)
    return {"page_unconfirmed_since": cell_text(r.unconfirmed_since), "page_unconfirmed_note": note} if note else {}


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in table_rows(df):
        out.append(
            {
                "id": r.claim_id,
                "scope": r.scope,
                "line_no": int(r.line_no),
                "file": cell_text(r.file),
                "claim": str(r.claim)[:140],
                "url": r.url,
                "prior": r.prior,
                "missing": json_list(r.missing)[:6],
                "stamp": cell_text(r.last_verified),
                "changed_at": cell_text(r.changed_at),
                "changed_at_utc": utc_time(r.changed_at),
                "change_note": change_note(r) if r.stale_changed else "",
                "change_reported_at": cell_text(getattr(r, "change_reported_at", None)),
                "matched": json_list(r.matched)[:6],
                "fetch_note": cell_text(r.fetch_note),
                **_unconfirmed(r),
            }
        )
    return out


def report_json(audit: Audit, previous_run: str | None = None) -> dict[str, Any]:
    h = audit.headline
    doc: dict[str, Any] = {
        "run_at": audit.run_at,
        "previous_run": previous_run,
        "run_at_utc": utc_time(audit.run_at),
        "previous_run_utc": utc_time(previous_run),
        "headline": h,
        "changed_pages_count": changed_page_count(audit),
        "total": h["total"],
        "flagged": h["flagged"],
        "by_prior": h["by_prior"],
        "scopes": audit.audited_scopes(),
        "scopes_missing": list(audit.scopes_missing),
    }
    for name in BUCKETS:
        doc[name] = _rows(audit.bucket(name))
    # every claim, the ones no bucket lists too (TOKENS_PRESENT): report.md and report.html count a large
    # audit's unflagged claims by scope, this file keeps each one
    p = audit.priors
    doc["claims"] = [
        {"id": r.claim_id, "scope": r.scope, "file": cell_text(r.file), "line_no": int(r.line_no), "url": r.url,
         "prior": r.prior, "stale_changed": bool(r.stale_changed), "content_changed": bool(r.content_changed),
         "missing": json_list(r.missing)[:6], **_unconfirmed(r)}
        for r in table_rows(p[["claim_id", "scope", "file", "line_no", "url", "prior", "stale_changed",
                               "content_changed", "missing", "unconfirmed_since"]])
    ]
    doc["changed_pages"] = [
        {"url": g.url, "new": g.new, "changed_at": g.changed_at, "changed_at_utc": utc_time(g.changed_at),
         "change_reported_at": g.reported_at, "change_reported_at_utc": utc_time(g.reported_at), "diff": g.diff,
         "claims": [r.claim_id for r in g.claims]}
        for g in changed_pages(audit)
    ]
    return doc
