"""What every per-scope asset returns: {scope: value} for the scopes of its run, a data version, and metadata
that says which scope it describes.

A run covers one scope, or many in a single-run backfill (the monthly audit). With many, each scope's
materialization gets its own metadata (Dagster's per-partition asset metadata), so a partition never shows
another's numbers; the asset's overview shows the latest materialization, so its metadata names its scope
first and points to the cross-scope audit for the whole corpus.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import dagster as dg

from claims_pipeline.defs.groups import SCOPES_GROUP
from claims_pipeline.defs.metadata import table_rows
from claims_pipeline.defs.partitions import scope_partitions, single_run_backfill

WHOLE_CORPUS_NOTE = "one scope per materialization; audit_tables and audit_report cover every scope"
# Rows of each table on one scope's materialization in a run of many scopes (the monthly audit): its counts
# whole, its tables a glimpse, so the run's history stays small (benchmarks/bench_run_store.py measures it); a run
# of the one scope shows up to 50, and the report has every row.
MANY_SCOPES_TABLE_ROWS = 3


def data_version(per_scope: dict[str, str]) -> dg.DataVersion:
    """One scope: its own hash. Several scopes in one run: Dagster records one version per run, so a hash
    over all of them (the next single-scope run gives each scope its own again)."""
    if len(per_scope) == 1:
        return dg.DataVersion(next(iter(per_scope.values())))
    h = hashlib.sha256("\n".join(f"{k}={v}" for k, v in sorted(per_scope.items())).encode()).hexdigest()[:16]
    return dg.DataVersion(h)


R = TypeVar("R")


def scope_asset(kinds: set[str]) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """The decorator of a per-scope asset: one partition per scope, a backfill of many scopes in one run."""
    return dg.asset(group_name=SCOPES_GROUP, code_version="1", kinds=kinds, partitions_def=scope_partitions,
                    backfill_policy=single_run_backfill)


# The counts that put a scope in trouble, by metadata key: (what the line calls them, the check that fails on them,
# defs/pages/checks.py, defs/priors/checks.py). A scope's own materialization says it in its `state` line, so the partitions view, where
# every materialized scope is green, shows which scope the failed check means when one opens it.
SCOPE_TROUBLE = {"stale_changed": ("stale_changed", "stale_changed_by_scope"),
                 "tokens_absent": ("TOKENS_ABSENT", "tokens_absent_by_scope"),
                 "newly_unreadable": ("sources newly unreadable", "newly_unreadable_by_scope")}


def scope_state_line(metadata: dict[str, Any]) -> str:
    """'in trouble: 1 stale_changed (check stale_changed_by_scope fails)', or 'ok' when none of its counts is."""
    trouble = [f"{n} {what} (check {check} fails)" for key, (what, check) in SCOPE_TROUBLE.items()
               if isinstance(n := metadata.get(key), int) and n > 0]
    return "in trouble: " + "; ".join(trouble) if trouble else "ok"


def scoped_output(context: dg.AssetExecutionContext, values: dict[str, R],
                  metadata_of: Callable[[str], dict[str, Any]],
                  version: dict[str, str] | None = None) -> dg.Output[dict[str, R]]:
    """The Output of a per-scope asset: each scope's metadata on its own partition, headed by its scope."""
    def headed(scope: str) -> dict[str, Any]:
        own = metadata_of(scope)
        return {"scope": scope, "state": scope_state_line(own), "shows": WHOLE_CORPUS_NOTE, **own}

    scopes = list(values)
    if len(scopes) == 1:
        metadata = headed(scopes[0])
    else:
        with table_rows(MANY_SCOPES_TABLE_ROWS):
            for scope in scopes:
                context.add_asset_metadata(headed(scope), partition_key=scope)
        metadata = {"scopes_in_run": len(scopes)}
    with warnings.catch_warnings():  # Output's data_version is marked beta in Dagster 1.13; used on purpose
        warnings.simplefilter("ignore", category=dg.BetaWarning)
        return dg.Output(values, metadata=metadata, data_version=data_version(version) if version else None)
