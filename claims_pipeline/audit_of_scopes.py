"""The cross-scope audit from the stored per-scope values: claims, fetched pages and priors of every scope.

Called by the audit_tables asset (defs/audit); the tables it writes are what the checks verify and the report
shows (audit_tables.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from claims_pipeline.audit import Audit
from claims_pipeline.audit_tables import write_tables
from claims_pipeline.home import HomeLayout
from claims_pipeline.records_json import claims_from_json, page_from_json
from claims_pipeline.settings import Settings


@dataclass
class AuditOfScopes:
    audit: Audit
    reread: int  # claims read again on a newer fetch of their page by another scope
    tables: dict[str, Path]


def audit_scopes(settings: Settings, claims: dict[str, Any], fetched_pages: dict[str, Any], priors: dict[str, Any],
                 cache: Any, now: datetime, known_scopes: list[str]) -> AuditOfScopes:
    """Every scope's claims, pages and priors as one audit, written as parquet tables under <home>/audit/tables.

    known_scopes: every scope the corpus has; those with no stored value are listed as missing, not hidden."""
    from claims_pipeline.audit import build_audit, combine_scopes
    from claims_pipeline.priors import Prior
    from claims_pipeline.store.recent_changes import load_reported, with_diffs_since_report
    from claims_pipeline.urls import normalize_url

    claims_by_scope = {scope: claims_from_json(claims[scope]["claims"]) for scope in sorted(claims)}
    all_claims = [c for scope_claims in claims_by_scope.values() for c in scope_claims]
    keys = {u: normalize_url(u) for u in sorted({c.source_url for c in all_claims})}
    by_scope = {scope: {u: page_from_json(p) for u, p in pages.items()} for scope, pages in fetched_pages.items()}
    stored_priors = {row["id"]: Prior.from_dict(row) for scope in priors.values() for row in scope}
    identity = cache.identity()
    known = cache.states(sorted(set(keys.values())))
    current = {u: known[k] for u, k in keys.items() if k in known}
    reported = load_reported(settings.home_dir, identity)
    pages, prior_of, reread = combine_scopes(claims_by_scope, by_scope, current, stored_priors, settings, reported, keys)
    pages = with_diffs_since_report(pages, keys, reported, cache)  # a page changed twice: both in its diff
    audit = build_audit(all_claims, pages, prior_of, run_at=now)
    audit.scopes_missing = sorted(set(known_scopes) - set(claims))
    audit.scopes = sorted(claims)
    audit.covered_changes = {keys[u]: p.change_fetch_id for u, p in current.items() if p.change_fetch_id is not None}
    audit.shown_changes = sorted(keys[u] for u, p in pages.items() if p.content_changed and u in current)
    audit.cache_identity = identity
    tables = write_tables(audit.to_tables(), HomeLayout(settings.home_dir).tables_dir)
    return AuditOfScopes(audit, reread, tables)
