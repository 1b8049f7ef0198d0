"""Each scope's state at a glance, on the per-scope assets: what the checks on fetched_pages (sources that became
unreadable) and page_changes (claims whose page changed after they were last verified), in defs/pages/checks.py,
and on priors (figures not on their page), in defs/priors/checks.py, share: each names the scopes in trouble in
its one-line result ("xa: 2 stale_changed").

Each check covers every scope, from the metadata of each scope's latest materialization, so it says the same
after a run of one scope as after the monthly run of all of them. Not a partitioned check: Dagster 1.13's
`@asset_check(partitions_def=…)` is a preview, and records a single result without a partition for a run over a
partition range, which is how the monthly audit runs. So where the trouble is is said three times instead: the
check's description names the scopes ("xa: 1 stale_changed"), its metadata lists every failing partition key
(`failing_partitions`), and each scope's own materialization, in the partitions view, opens with its `state`
line ("in trouble: 1 stale_changed (check stale_changed_by_scope fails)", or "ok"; defs/scoped.py). Severity ERROR, not blocking: the run goes on and succeeds; Dagster's open-source UI
colours a node, and the collapsed group around it, only for a failed ERROR check (a WARN leaves them green).
"""


from typing import Any

import dagster as dg

from claims_pipeline.defs.metadata import md_table, some_scopes, top_scopes
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME

PAGE = 1000  # materialization records read per query, newest first, until every scope has its latest
MAX_PAGES = 50  # bounded: a scope not found in that many records counts as not yet materialized


def latest_by_scope(instance: dg.DagsterInstance, asset_key: dg.AssetKey) -> dict[str, dict[str, Any]]:
    """{scope: metadata of its latest materialization} for every current scope that has one; values as plain
    Python (numbers, text)."""
    scopes = set(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    found: dict[str, dict[str, Any]] = {}
    cursor = None
    for _ in range(MAX_PAGES):
        if len(found) == len(scopes):
            break
        result = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=asset_key), limit=PAGE,
                                                 cursor=cursor, ascending=False)
        for record in result.records:
            m = record.asset_materialization
            if m is not None and m.partition in scopes and m.partition not in found:
                found[m.partition] = {k: getattr(v, "value", v) for k, v in m.metadata.items()}
        if not result.has_more:
            break
        cursor = result.cursor
    return found


def count(metadata: dict[str, Any], key: str) -> int:
    """A count from a scope's metadata: 0 when it is missing or not a number."""
    try:
        return int(metadata.get(key) or 0)
    except (TypeError, ValueError):
        return 0


def scope_result(by_scope: dict[str, int], what: str, *, detail: dict[str, str] | None = None,
                 checked: int = 0) -> dg.AssetCheckResult:
    """Failed (ERROR, not blocking) when any scope has some; its description names them, the scopes with the
    most first; the metadata has a two-column table of them."""
    trouble = {s: n for s, n in by_scope.items() if n}
    description = (some_scopes(trouble, what) if trouble
                   else f"no scope has {what} ({checked} scope{'s' if checked != 1 else ''} checked)")
    rows = [[s, n, (detail or {}).get(s, "")] for s, n in sorted(trouble.items(), key=lambda kv: (-kv[1], kv[0]))]
    return dg.AssetCheckResult(
        passed=not trouble, severity=dg.AssetCheckSeverity.ERROR, description=description,
        metadata={"scopes_in_trouble": len(trouble), "total": sum(trouble.values()),
                  "failing_partitions": dg.MetadataValue.json(sorted(trouble)),
                  "scopes": dg.MetadataValue.json(top_scopes(trouble)),
                  "by_scope": md_table(["scope", what, "detail"] if detail else ["scope", what],
                                       ([r[0], r[1], r[2]] if detail else r[:2] for r in rows), limits=[40, 20, 60])},
    )


# findings, not faults: a command that runs these checks does not count them as failures (orchestration/runner.py);
# defs/pages/checks.py and defs/priors/checks.py define them (test_scope_state checks that these names are theirs)
FINDING_CHECKS = frozenset({"stale_changed_by_scope", "tokens_absent_by_scope", "newly_unreadable_by_scope"})
