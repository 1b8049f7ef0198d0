"""What each per-scope step produces, as plain JSON-ready values keyed by scope.

The Dagster assets (defs/corpus, defs/pages) call one function here each and only add metadata; the values
are what the IO manager stores under <home>/assets/<asset>/<scope>.json. Every function takes the scopes of
one run (one scope, or many in a single-run backfill) and returns {scope: value} for exactly those.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from claims_pipeline.common import stopping
from claims_pipeline.config.settings import Settings
from claims_pipeline.corpus.hashes import combined_hash, scope_file_hashes
from claims_pipeline.corpus.records import ClaimRecord
from claims_pipeline.steps.records_json import claims_from_json, page_from_json, page_to_json
from claims_pipeline.store.records import PageState

log = logging.getLogger(__name__)


@dataclass
class ScopeDocuments:
    values: dict[str, dict[str, Any]]
    empty_scopes: list[str]  # partitions whose folder holds no markdown file (removed meanwhile?)


def documents_by_scope(settings: Settings, scopes: list[str]) -> ScopeDocuments:
    """Each scope's markdown files and their content hashes (the hash is the scope's data version)."""
    from claims_pipeline.corpus.extract import list_scopes

    listed = list_scopes(settings)
    values: dict[str, dict[str, Any]] = {}
    for scope in scopes:
        hashes = scope_file_hashes(listed.get(scope, []), settings.corpus_dir)
        values[scope] = {"corpus_dir": str(settings.corpus_dir), "files": hashes, "hash": combined_hash(hashes)}
    return ScopeDocuments(values, [s for s in scopes if not listed.get(s)])


@dataclass
class ScopeClaims:
    values: dict[str, dict[str, Any]]  # scope -> {"claims": [claim dict], "warnings": [str]}
    records: dict[str, list[ClaimRecord]]
    warnings: list[str]  # every warning of the extraction, named by file and line
    skipped_pointer_links: int

    def data_hash(self, scope: str) -> str:
        return hashlib.sha256(repr(self.values[scope]["claims"]).encode()).hexdigest()[:16]


def claims_by_scope(settings: Settings, scopes: list[str]) -> ScopeClaims:
    """Claims extracted from the scopes' files, with each extraction warning filed under its file's scope."""
    from claims_pipeline.corpus.extract import extract_corpus

    extraction = extract_corpus(settings, scopes=scopes)
    values: dict[str, dict[str, Any]] = {s: {"claims": [], "warnings": []} for s in scopes}
    records: dict[str, list[ClaimRecord]] = defaultdict(list)
    for c in extraction.claims:
        values.setdefault(c.scope, {"claims": [], "warnings": []})["claims"].append(c.to_dict())
        records[c.scope].append(c)
    scope_of_file = {f: s for s, files in extraction.scopes.items() for f in files}
    for w in extraction.warnings:
        scope = scope_of_file.get(w.file)
        if scope in values:
            values[scope]["warnings"].append(str(w))
    return ScopeClaims(values, records, [str(w) for w in extraction.warnings], extraction.skipped_pointer_links)


def lint_by_scope(settings: Settings, scopes: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Citations that point at a primary portal's root next to a figure (advisory)."""
    from claims_pipeline.corpus.linter import lint_corpus

    out: dict[str, list[dict[str, Any]]] = {s: [] for s in scopes}
    for f in lint_corpus(settings, scopes=scopes):
        out.setdefault(f.scope, []).append({"file": f.file, "line": f.line, "url": f.url, "context": f.context, "scope": f.scope})
    return out


@dataclass
class ScopePages:
    values: dict[str, dict[str, dict[str, Any]]]  # scope -> {cited url -> page state as JSON}
    states: dict[str, PageState]  # cited url -> state
    missing: list[tuple[str, str]] = field(default_factory=list)  # (scope, url) that came back without a state

    def data_hash(self, scope: str) -> str:
        """Hash of sorted (url, text hash): changes exactly when a cited page's text (or its set of URLs) changes."""
        h = hashlib.sha256()
        pages = self.values[scope]
        for url in sorted(pages):
            h.update(f"{url}\0{pages[url].get('text_hash') or pages[url].get('fetch_status')}\n".encode())
        return h.hexdigest()[:16]


def refresh_scope_pages(settings: Settings, claims: dict[str, Any], cache: Any, fetch: Callable[[list[str]], dict[str, Any]]) -> ScopePages:
    """Every page the scopes cite, fetched once per run however many scopes cite it (`fetch(urls)`: the
    fetcher's states by normalized URL), recorded in the cache.

    Keyed by the URL exactly as the corpus cites it (the core's lookups use claim.source_url); a change counts
    when confirmed after what the last report saw, by this fetch or another (store/recent_changes.py)."""
    from claims_pipeline.common.urls import normalize_url
    from claims_pipeline.store.recent_changes import load_reported, mark_unreported

    urls_by_scope = {s: sorted({c["source_url"] for c in v["claims"]}) for s, v in claims.items()}
    all_urls = sorted({u for urls in urls_by_scope.values() for u in urls})
    fetched = fetch(all_urls) if all_urls else {}
    keys = {u: normalize_url(u) for u in all_urls}
    states = mark_unreported({u: fetched[k] for u, k in keys.items() if k in fetched}, keys,
                             load_reported(settings.home_dir, cache.identity()))
    values = {s: {u: page_to_json(states[u]) for u in urls if u in states} for s, urls in urls_by_scope.items()}
    missing = [(s, u) for s, urls in urls_by_scope.items() for u in urls if u not in states]
    return ScopePages(values, states, missing)


READABLE_STATUSES = ("OK", "NOT_MODIFIED")  # a page whose text was read (a 304 keeps the text read before)


def statuses_before(claims: dict[str, Any], cache: Any) -> dict[str, str]:
    """Each cited URL's fetch status as the cache has it before this run fetches (a URL never fetched has none):
    what tells a source that just became unreadable from one that has been so for months."""
    from claims_pipeline.common.urls import normalize_url

    keys = {u: normalize_url(u) for u in sorted({c["source_url"] for v in claims.values() for c in v["claims"]})}
    states = cache.states(sorted(set(keys.values())), with_text=False)
    return {u: str(states[k].fetch_status) for u, k in keys.items() if k in states}


def newly_unreadable(before: dict[str, str], pages: dict[str, dict[str, Any]]) -> list[str]:
    """The scope's cited URLs unreadable now that were readable on their previous fetch or never fetched before
    (news for the reader); a source unreadable on both fetches is not new."""
    return sorted(url for url, p in pages.items() if str(p.get("fetch_status")) not in READABLE_STATUSES
                  and before.get(url, "OK") in READABLE_STATUSES)


def page_changes_by_scope(claims: dict[str, Any], fetched_pages: dict[str, Any]) -> dict[str, Any]:
    """Per scope: cited pages whose change the audit reports (with the text diff), and the claims whose page
    changed after they were last verified (stale_changed, the audit's rule)."""
    from claims_pipeline.steps.audit.build import is_stale_changed

    out: dict[str, Any] = {}
    for scope, pages in fetched_pages.items():
        changed = {u: p for u, p in pages.items() if p.get("content_changed")}
        stale = []
        for c in claims_from_json(claims.get(scope, {}).get("claims", [])):
            page = pages.get(c.source_url)
            if page and is_stale_changed(c.last_verified, page.get("changed_at"), bool(page.get("content_changed"))):
                stale.append({"id": c.id, "file": c.file, "line_no": c.line_no, "claim": c.claim_text, "url": c.source_url,
                              "last_verified": c.last_verified, "changed_at": page.get("changed_at")})
        out[scope] = {
            "changed_pages": [{"url": u, "changed_at": p.get("changed_at"), "diff": p.get("diff")} for u, p in sorted(changed.items())],
            "stale_changed": stale,
        }
    return out


def _scope_priors(settings: Settings, claim_rows: list[dict[str, Any]], pages_json: dict[str, Any],
                  cache: Any) -> list[dict[str, Any]]:
    from claims_pipeline.priors import build_prior

    pages = {u: page_from_json(p, cache) for u, p in pages_json.items()}
    return [{"id": c.id, **build_prior(c, pages.get(c.source_url), settings).to_dict()}
            for c in claims_from_json(claim_rows)]


def _local_blobs(cache: Any) -> bool:
    """Forked workers read page texts from the inherited cache: only a local blob store is safe to share (an
    object store's client and its connections are not)."""
    from claims_pipeline.store.blobs import BlobStore

    return isinstance(getattr(cache, "blobs", None), BlobStore)


@dataclass
class ScopePriors:
    values: dict[str, list[dict[str, Any]]]  # scope -> [{"id": claim id, **prior}]
    claims: dict[str, Any]  # the claims asset's values the priors were computed from (scope -> {"claims": [...]})

    def claim_rows(self, scope: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(claim as JSON, prior) of one scope, in order: what the asset's metadata shows, without rebuilding
        every claim as a ClaimRecord (a serial second of the 100k audit's priors step per 10,000 claims)."""
        return list(zip(self.claims[scope]["claims"], self.values[scope], strict=True))


def priors_by_scope(settings: Settings, claims: dict[str, Any], fetched_pages: dict[str, Any], cache: Any) -> ScopePriors:
    """Per claim: does the cited page still carry the figure? (priors/build.py) A big batch is computed by a
    fork pool (`priors.workers`, priors/pool.py); the values are the serial ones, in the same order."""
    from claims_pipeline.priors.gc_passes import fewer_gc_passes
    from claims_pipeline.priors.pool import map_scopes, pool_size

    def one_scope(scope: str) -> list[dict[str, Any]]:
        stopping.check()  # a stop ends the priors at the next scope (in a forked worker it is never set)
        return _scope_priors(settings, claims[scope]["claims"], fetched_pages.get(scope, {}), cache)

    scopes = list(claims)
    workers = pool_size(settings.priors.workers, len(scopes), sum(len(v["claims"]) for v in claims.values()))
    with fewer_gc_passes():  # the forked workers inherit it
        if workers > 1 and _local_blobs(cache):
            try:
                return ScopePriors(dict(zip(scopes, map_scopes(one_scope, scopes, workers), strict=True)), claims)
            except Exception as exc:  # a worker killed, a result that cannot be pickled: the serial loop gives the same
                log.warning("priors pool of %d failed (%r); computing serially", workers, exc)
        return ScopePriors({scope: one_scope(scope) for scope in scopes}, claims)
