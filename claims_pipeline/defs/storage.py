"""The IO manager of the per-scope assets: each scope's record stored and read back by the step that owns it.

Every per-scope asset returns {scope: record} for the scopes of its run (one scope, or many in a single-run
backfill); this IO manager has the asset's step (steps/step_of_asset.py) write each scope to its own file, and loads
{scope: record} for whatever partitions the consumer asks for (the cross-scope audit asks for all of them). The
audit writes its own parquet tables and reports (defs/audit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from claims_pipeline.common import stopping
from claims_pipeline.steps.step_of_asset import stored_step


class ScopeStoreIOManager(dg.IOManager):
    def __init__(self, home: Path):
        self.home = home

    def handle_output(self, context: dg.OutputContext, obj: dict[str, Any] | None) -> None:
        if obj is None:
            return
        if not context.has_asset_partitions:
            raise TypeError(f"{context.asset_key.to_user_string()}: only per-scope assets are stored by this IO manager")
        step = stored_step(context.asset_key.to_user_string())
        missing = set(context.asset_partition_keys) - set(obj)
        if missing:
            raise ValueError(f"{context.asset_key.to_user_string()}: no value for scopes {', '.join(sorted(missing))}")
        for scope in context.asset_partition_keys:
            step.write(self.home, scope, obj[scope])

    def load_input(self, context: dg.InputContext) -> dict[str, Any]:
        stopping.check()  # a stop asked between two steps: the next one does not start
        key = context.asset_key.to_user_string()
        found, absent = stored_step(key).read_scopes(self.home, list(context.asset_partition_keys))
        if absent:  # a scope never materialized: go on with the others, but say so
            context.log.warning(f"{key}: not yet materialized for scopes {', '.join(absent)}; they are left out")
        return found


# The home comes from the run's claims_config resource (required here rather than held as a field: the resources
# module builds this IO manager, so this module does not import it).
@dg.io_manager(required_resource_keys={"claims_config"},
               description="Each scope's record of a per-scope asset, as JSON under <home>/assets/<asset>/<scope>.json")
def scope_store_io_manager(init_context: dg.InitResourceContext) -> ScopeStoreIOManager:
    return ScopeStoreIOManager(init_context.resources.claims_config.load().home_dir)
