"""One partition per corpus scope (an iso2 such as `fr`, or a shared path such as `shared/exit/nordics`).

Dynamic partitions, so a new country folder becomes a partition without a code change: the corpus sensor
(automation.py) adds and removes keys to match `list_scopes(corpus)`.
"""

from __future__ import annotations

import dagster as dg

SCOPE_PARTITIONS_NAME = "scope"
scope_partitions = dg.DynamicPartitionsDefinition(name=SCOPE_PARTITIONS_NAME)

# Per-scope assets run several scopes in one run when a backfill or the schedule asks for a range: the
# per-run start-up cost (process, resources, cache open) is paid once, not once per scope.
single_run_backfill = dg.BackfillPolicy.single_run()


def range_tags(keys: list[str]) -> dict[str, str]:
    """Run tags that make one run cover every partition from keys[0] to keys[-1] (partition order)."""
    return {
        "dagster/asset_partition_range_start": keys[0],
        "dagster/asset_partition_range_end": keys[-1],
    }
