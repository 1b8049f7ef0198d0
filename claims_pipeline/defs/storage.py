"""The IO manager of the per-scope assets: a run's records of one asset stored as one file, read back by scope.

Every per-scope asset returns {scope: record} for the scopes of its run (one scope, or many in a single-run
backfill); this IO manager has the asset's step (steps/step_of_asset.py) store them in one columnar file, the scope
a column (steps/stored.py), and loads {scope: record} for whatever partitions the consumer asks for (the
cross-scope audit asks for all of them). Within a run the files read stay open, memory-mapped, so a file that
three steps load is read once. The audit writes its own parquet tables and reports (defs/audit).
"""

# No `from __future__ import annotations`: Dagster reads the ResourceDependency field's annotation as a type.
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from claims_pipeline.common import stopping
from claims_pipeline.steps.step_of_asset import stored_step
from claims_pipeline.steps.stored import ScopeStore


class ScopeStoreIOManager(dg.ConfigurableIOManager):
    """Each scope's record of a per-scope asset, in <home>/assets/<asset>.store/ (one Arrow file per run)."""

    # The run's settings, for its home: a resource field (the run's claims_config resource itself, a ClaimsConfig),
    # as Dagster's project_fully_featured declares an IO manager's dependencies. Typed Any: defs/resources.py builds
    # this IO manager beside the ClaimsConfig it is given, and naming that class here would make an import cycle.
    claims_config: dg.ResourceDependency[Any]

    _store: ScopeStore | None = PrivateAttr(default=None)

    def _scope_store(self) -> ScopeStore:
        if self._store is None:  # one per run (a resource lives for one run): its files read once
            self._store = ScopeStore(self.claims_config.home_dir)
        return self._store

    def handle_output(self, context: dg.OutputContext, obj: dict[str, Any] | None) -> None:
        if obj is None:
            return
        if not context.has_asset_partitions:
            raise TypeError(f"{context.asset_key.to_user_string()}: only per-scope assets are stored by this IO manager")
        key = context.asset_key.to_user_string()
        missing = set(context.asset_partition_keys) - set(obj)
        if missing:
            raise ValueError(f"{key}: no value for scopes {', '.join(sorted(missing))}")
        scopes = list(context.asset_partition_keys)
        self._scope_store().write(stored_step(key), {scope: obj[scope] for scope in scopes})

    def load_input(self, context: dg.InputContext) -> dict[str, Any]:
        stopping.check()  # a stop asked between two steps: the next one does not start
        key = context.asset_key.to_user_string()
        found, absent = self._scope_store().read(stored_step(key), list(context.asset_partition_keys))
        if absent:  # a scope never materialized: go on with the others, but say so
            context.log.warning(f"{key}: not yet materialized for scopes {', '.join(absent)}; they are left out")
        return found
