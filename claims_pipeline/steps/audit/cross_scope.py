"""The cross-scope audit from the stored per-scope values: claims, fetched pages and priors of every scope.

Called by the audit_tables asset (defs/audit); the tables it writes are what the checks verify and the report
shows (steps/audit/tables.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.priors.build import PriorRules
from claims_pipeline.report.audit import Audit
from claims_pipeline.steps.audit.tables import write_tables
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import ScopePriors
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState


@dataclass
class AuditOfScopes:
    audit: Audit
    reread: int  # claims read again on a newer fetch of their page by another scope
    tables: dict[str, Path]


def audit_scopes(home: Path, rules: PriorRules, claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages],
                 priors: dict[str, ScopePriors], cache: PageCache, now: datetime, known_scopes: list[str]) -> AuditOfScopes:
    """Every scope's claims, pages and priors as one audit, written as parquet tables under <home>/audit/tables.

    The claims and priors are read as the stored values they are (build_audit_of_values); only a claim read
    again on a newer state of its page (combine_scopes) becomes a record, for build_prior.
    known_scopes: every scope the corpus has; those with no stored value are listed as missing, not hidden."""
    with _inputs_out_of_gc():
        return _audit_scopes(home, rules, claims, fetched_pages, priors, cache, now, known_scopes)


@contextmanager
def _inputs_out_of_gc() -> Iterator[None]:
    """The cyclic garbage collector leaves what exists already (the step's inputs: at 100k claims millions of
    dicts and lists, walked again by every full collection, a quarter of the step's CPU) until the audit is
    built; what the audit allocates is collected as usual. gc.freeze is process-wide: the objects of other
    threads are left alone for as long too, then unfrozen like the rest."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _audit_scopes(home: Path, rules: PriorRules, claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages],
                  priors: dict[str, ScopePriors], cache: PageCache, now: datetime, known_scopes: list[str]) -> AuditOfScopes:
    from claims_pipeline.common.urls import normalize_url
    from claims_pipeline.report.audit import build_audit_of_values, combine_scopes
    from claims_pipeline.store.recent_changes import load_reported, with_diffs_since_report

    all_claims = [c for scope in sorted(claims) for c in claims[scope].claims]
    keys = {u: normalize_url(u) for u in sorted({c["source_url"] for c in all_claims})}
    by_scope = {scope: pages.pages for scope, pages in fetched_pages.items()}
    stored_priors = {row["id"]: row for scope in priors.values() for row in scope.rows}
    identity = cache.identity()
    current, text_chars = _current_states(cache, keys, _own_states(claims, by_scope))
    reported = load_reported(home, identity)
    pages, prior_of, reread = combine_scopes({scope: claims[scope].claims for scope in sorted(claims)}, by_scope,
                                             current, stored_priors, rules, reported, keys)
    pages = with_diffs_since_report(pages, keys, reported, cache)  # a page changed twice: both in its diff
    audit = build_audit_of_values(all_claims, pages, prior_of, run_at=now, text_chars=text_chars)
    audit.scopes_missing = sorted(set(known_scopes) - set(claims))
    audit.scopes = sorted(claims)
    audit.covered_changes = {keys[u]: p.change_fetch_id for u, p in current.items() if p.change_fetch_id is not None}
    audit.shown_changes = sorted(keys[u] for u, p in pages.items() if p.content_changed and u in current)
    audit.cache_identity = identity
    tables = write_tables(audit.to_tables(), HomeLayout(home).tables_dir)
    return AuditOfScopes(audit, reread, tables)


# the page cache's states are read this many pages at a time: their texts are measured, and kept only where a
# claim is read again on them (at 100k claims every text at once held 0.13 GB)
_STATES_CHUNK = 500


def _own_states(claims: dict[str, ScopeClaims],
                by_scope: dict[str, dict[str, PageState]]) -> dict[str, set[tuple[str | None, str] | None]]:
    """Per cited URL, the states of it the citing scopes hold: (text_hash, fetch_status), None where one holds none."""
    out: dict[str, set[tuple[str | None, str] | None]] = {}
    for scope, value in claims.items():
        own = by_scope.get(scope, {})
        for c in value.claims:
            p = own.get(c["source_url"])
            out.setdefault(c["source_url"], set()).add(None if p is None else (p.text_hash, p.fetch_status))
    return out


def _current_states(cache: PageCache, keys: dict[str, str],
                    own: dict[str, set[tuple[str | None, str] | None]]) -> tuple[dict[str, PageState], dict[str, int]]:
    """The cache's state of every cited URL it holds (by cited URL), and each one's text length. A state keeps its
    text only when a citing scope held another state of the page (read_again: its claims are read again)."""
    from dataclasses import replace

    by_key: dict[str, list[str]] = {}
    for u, k in keys.items():
        by_key.setdefault(k, []).append(u)
    ordered = sorted(by_key)
    found: dict[str, PageState] = {}
    text_chars: dict[str, int] = {}
    for i in range(0, len(ordered), _STATES_CHUNK):
        known = cache.states(ordered[i:i + _STATES_CHUNK])
        for k, state in known.items():
            cited = by_key[k]
            reread = any(s is None or s != (state.text_hash, state.fetch_status) for u in cited for s in own.get(u, ()))
            kept = state if reread or not state.text else replace(state, text=None)
            for u in cited:
                found[u] = kept
                text_chars[u] = len(state.text) if state.text else 0
    return {u: found[u] for u in keys if u in found}, text_chars  # in cited-URL order, as the ledger records them
