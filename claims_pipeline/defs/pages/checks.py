"""The checks on the cited pages of each scope: claims whose page changed after they were last verified, and
sources that became unreadable. Each covers every scope, from the metadata of each scope's latest
materialization (defs/scope_state.py says why they are not partitioned checks)."""

import dagster as dg

from claims_pipeline.defs.metadata import top_scopes
from claims_pipeline.defs.pages.assets import (
    NEWLY_UNREADABLE_KEY,
    STALE_CHANGED_KEY,
    UNREADABLE_KEY,
    fetched_pages,
    page_changes,
)
from claims_pipeline.defs.scope_state import count, latest_by_scope, scope_result


@dg.asset_check(asset=page_changes, description=(
    "Fails when any scope has claims whose cited page changed after they were last verified (stale_changed), "
    "and names those scopes: re-verify their claims first. Covers every scope, not only this run's."))
def stale_changed_by_scope(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    latest = latest_by_scope(context.instance, page_changes.key)
    return scope_result({s: count(m, STALE_CHANGED_KEY) for s, m in latest.items()}, "stale_changed",
                        checked=len(latest))


@dg.asset_check(asset=fetched_pages, description=(
    "Fails when any scope has cited sources that became unreadable on their latest fetch (readable before, or "
    "never fetched), and names those scopes; sources unreadable on both fetches are counted in the metadata, not "
    "failed again. Covers every scope, not only this run's."))
def newly_unreadable_by_scope(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    latest = latest_by_scope(context.instance, fetched_pages.key)
    result = scope_result({s: count(m, NEWLY_UNREADABLE_KEY) for s, m in latest.items()}, "sources newly unreadable",
                          detail={s: f"{count(m, UNREADABLE_KEY)} unreadable in all" for s, m in latest.items()},
                          checked=len(latest))
    unreadable = {s: count(m, UNREADABLE_KEY) for s, m in latest.items() if count(m, UNREADABLE_KEY)}
    return result.with_metadata({**result.metadata, "unreadable_by_scope": dg.MetadataValue.json(top_scopes(unreadable)),
                                 "unreadable": sum(unreadable.values())})
