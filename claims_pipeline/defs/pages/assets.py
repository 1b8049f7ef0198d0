"""The cited pages, per scope: fetched politely into the cache with their history → the confirmed changes and
the claims they make stale."""


from typing import Any

import dagster as dg

from claims_pipeline.defs.fetch_runs import fetch_run_id
from claims_pipeline.defs.metadata import (
    CLAIM_LIMIT,
    NOTE_LIMIT,
    WHERE_LIMIT,
    counts,
    first_lines,
    md_table,
    shown_diffs,
)
from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource, PageCacheResource
from claims_pipeline.defs.scoped import scope_asset, scoped_output
from claims_pipeline.report.md_tables import Link, md_cell, md_code_block, prose, where
from claims_pipeline.steps.changes import ScopeChanges, page_changes_by_scope
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import (
    PagesOfScopes,
    ScopePages,
    is_readable,
    newly_unreadable,
    refresh_scope_pages,
    statuses_before,
)

# metadata keys the scope checks read back (defs/pages/checks.py): named once, here where they are written
UNREADABLE_KEY = "unreadable"  # sources unreadable on this fetch
NEWLY_UNREADABLE_KEY = "newly_unreadable"  # of those, readable before (or never fetched)
STALE_CHANGED_KEY = "stale_changed"  # claims whose page changed after they were last verified


@scope_asset(kinds={"sqlite"})
def fetched_pages(context: dg.AssetExecutionContext, claims_config: ClaimsConfig, fetcher: FetcherResource,
                  page_cache: PageCacheResource, claims: dict[str, ScopeClaims]) -> dg.Output[dict[str, ScopePages]]:
    """Every cited page re-fetched politely and recorded in the cache with its history (each URL once per run).

    Data version = hash of the sorted (url, text hash) pairs, so downstream assets show as unsynced exactly
    when a cited page really changed (a re-fetch of the same text leaves them synced)."""
    home, now, run_id = claims_config.home_dir, claims_config.now(), fetch_run_id(context.run)
    with page_cache.open() as cache:
        before = statuses_before(claims, cache)
        pages = refresh_scope_pages(home, claims, cache, lambda urls: fetcher.refresh(urls, cache, now, run_id=run_id))
    for scope, url in pages.missing:
        context.log.warning(f"{scope}: {url} came back without a page state")

    return scoped_output(context, pages.values, lambda scope: scope_pages_metadata(pages, before, scope),
                         {s: v.data_hash() for s, v in pages.values.items()})


def scope_pages_metadata(pages: PagesOfScopes, before: dict[str, str], scope: str) -> dict[str, Any]:
    """A scope's fetched_pages metadata in the UI: its pages by status, and its unreadable ones (bounded)."""
    own = pages.values[scope].pages
    states = [own[u] for u in sorted(own)]
    new = set(newly_unreadable(before, pages.values[scope]))
    unreadable = [(u, own[u]) for u in sorted(own) if not is_readable(own[u])]
    return {
        "pages": len(states),
        "by_fetch_status": dg.MetadataValue.json(counts(str(p.fetch_status) for p in states)),
        "changed": sum(1 for p in states if p.content_changed),
        UNREADABLE_KEY: len(unreadable),
        NEWLY_UNREADABLE_KEY: len(new),
        "unreadable_pages": md_table(["url", "status", "note"],
                                     ([Link(u), f"{p.fetch_status} (new)" if u in new else p.fetch_status, p.note]
                                      for u, p in unreadable), limits=[None, 30, NOTE_LIMIT]),
    }


@scope_asset(kinds={"python"})
def page_changes(context: dg.AssetExecutionContext, claims: dict[str, ScopeClaims],
                 fetched_pages: dict[str, ScopePages]) -> dg.Output[dict[str, ScopeChanges]]:
    """Per scope: cited pages whose change the audit reports (CONTENT_CHANGED, with the text diff), and the
    claims whose page changed after they were last verified (stale_changed): re-verify those first."""
    changes = page_changes_by_scope(claims, fetched_pages)

    def metadata_of(scope: str) -> dict[str, Any]:
        changed, stale = changes[scope].changed_pages, changes[scope].stale_changed
        most, lines = shown_diffs()
        diffs = "\n\n".join(f"**{md_cell(c.url, 300)}** (changed {md_cell(str(c.changed_at)[:10])})\n"
                            f"{md_code_block(first_lines(c.diff or '', lines), 'diff')}" for c in changed[:most])
        if len(changed) > most:  # bounded: the report has every diff
            diffs += f"\n\n_…and {len(changed) - most} more changed pages: their diffs are in the report_"
        return {
            "changed_pages": len(changed),  # pages; the audit's content_changed counts claims
            STALE_CHANGED_KEY: len(stale),
            "stale_changed_claims": md_table(
                ["where", "claim", "verified → changed", "url"],
                ([where(c.file, c.line_no), prose(c.claim),
                  f"{c.last_verified or 'never'} → {str(c.changed_at)[:10]}", Link(c.url)] for c in stale),
                limits=[WHERE_LIMIT, CLAIM_LIMIT], cut_note=True),
            "changed_pages_diffs": dg.MetadataValue.md(diffs or "_(no confirmed change)_"),
        }

    return scoped_output(context, changes, metadata_of)
