"""What the daemon does with a sensor result's partition requests, for tests and benchmarks that evaluate the
corpus sensor directly (dg.build_sensor_context) on a real instance."""

from __future__ import annotations

import dagster as dg


def apply_partition_requests(instance: dg.DagsterInstance, result: dg.SensorResult) -> None:
    """Add and delete the dynamic partitions the result asks for, in order."""
    for req in result.dynamic_partitions_requests or []:
        if isinstance(req, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        else:
            for k in req.partition_keys:
                instance.delete_dynamic_partition(req.partitions_def_name, k)
