"""report.json: the headline numbers plus the rows of every bucket (the original's audit_report shape)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from claims_pipeline.audit import Audit
from claims_pipeline.report.escape import s

BUCKETS = ("stale_changed", "content_changed", "tokens_absent", "pdf_no_text", "source_unavailable", "source_binary")


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in df.itertuples(index=False):
        out.append(
            {
                "id": r.claim_id,
                "scope": r.scope,
                "line_no": int(r.line_no),
                "file": s(r.file),
                "claim": str(r.claim)[:140],
                "url": r.url,
                "prior": r.prior,
                "missing": json.loads(r.missing)[:6],
                "stamp": s(r.last_verified),
                "changed_at": s(r.changed_at),
                "fetch_note": s(r.fetch_note),
            }
        )
    return out


def report_json(audit: Audit, previous_run: str | None = None) -> dict[str, Any]:
    h = audit.headline
    doc: dict[str, Any] = {
        "run_at": audit.run_at,
        "previous_run": previous_run,
        "headline": h,
        "total": h["total"],
        "flagged": h["flagged"],
        "by_prior": h["by_prior"],
        "scopes": audit.audited_scopes(),
        "scopes_missing": list(audit.scopes_missing),
    }
    for name in BUCKETS:
        doc[name] = _rows(audit.bucket(name))
    return doc
