"""The project's one use of Dagster internals (guarded: tests name each import). Dagster's SQLite event log, with
batched writes for the per-partition events of a single-run backfill.

Why: a run over N scopes records, per asset, N ASSET_MATERIALIZATION_PLANNED events and N materializations.
Dagster already hands those to the storage as one batch (when DAGSTER_EVENT_BATCH_SIZE > 0), but the stock
SqliteEventLogStorage writes a batch one event at a time: a new SQLAlchemy engine, SQL compilation, two
transactions and two fsyncs per event (a 120-scope backfill writes about 1,500: benchmarks/README.md). Here a
batch is two transactions in all (its run's shard, then the cross-run index), with the same rows as the
stock path writes, so every event, asset record, partition status and data version is kept; SQLite's default
durability (WAL, synchronous=FULL) is unchanged.

The instance template (claims_pipeline/orchestration/dagster.yaml) selects this class; the database layout is the
stock one ($DAGSTER_HOME/history/runs/<run>.db + index.db), so an instance can switch back and forth.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import sqlalchemy.exc as db_exc
from dagster import DagsterInstance, EventLogEntry, Field, StringSource
from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, EVENT_TYPE_TO_PIPELINE_RUN_STATUS
from dagster._core.storage.event_log.schema import AssetKeyTable, SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._serdes import ConfigurableClassData

# How many events Dagster buffers before handing them over (it also flushes at the end of every batch,
# i.e. after each step's per-partition events). Read by Dagster from the environment of the process that
# creates the run (planned events) and of the one executing it (materializations).
EVENT_BATCH_SIZE_ENV = "DAGSTER_EVENT_BATCH_SIZE"
DEFAULT_EVENT_BATCH_SIZE = "1000"


def enable_event_batching() -> None:
    """Ask Dagster to hand per-partition events over in batches (unless the user set a size already)."""
    os.environ.setdefault(EVENT_BATCH_SIZE_ENV, DEFAULT_EVENT_BATCH_SIZE)


def _dagster_home_runs_dir() -> str:
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        raise ValueError("BatchingSqliteEventLogStorage: set base_dir, or DAGSTER_HOME for the default layout")
    return os.path.join(os.path.expanduser(home), "history", "runs")


class BatchingSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage whose store_event_batch writes a batch of asset events in one transaction per
    database instead of one per event. Anything else (checks, run status, single events) takes the stock path."""

    def __init__(self, base_dir: str | None = None, inst_data: ConfigurableClassData | None = None):
        super().__init__(base_dir or _dagster_home_runs_dir(), inst_data=inst_data)
        self._partitions: dict[str, tuple[float, tuple[str, ...], frozenset[str]]] = {}  # name -> (read at, keys, set)
        # Every process that opens this instance (CLI, webserver, daemon, run worker) then hands its
        # per-partition events over in batches; a batch only waits for events Dagster emits back to back.
        enable_event_batching()

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        # optional: the default is the stock layout under $DAGSTER_HOME (a YAML value cannot join env + path)
        return {"base_dir": Field(StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: Any) -> BatchingSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    # Dynamic partitions, read once per moment. In a run over N scopes, each scope's metadata
    # (context.add_asset_metadata(partition_key=...)) makes Dagster check the run's partition range again: the
    # list of every key and a lookup of each end, each on a new SQLite engine after a has_table check. With 1,000
    # scopes that is most of each per-scope step (benchmarks/bench_scopes_1000.py). So a process keeps the list
    # it read for PARTITIONS_TTL_S: its own adds and deletes drop it, a key not in it is looked up afresh (one
    # another process just added is never missed), and another process's delete is seen within the TTL.
    PARTITIONS_TTL_S = 2.0

    def _cached_partitions(self, partitions_def_name: str) -> tuple[tuple[str, ...], frozenset[str]] | None:
        hit = self._partitions.get(partitions_def_name)
        if hit is None or time.monotonic() - hit[0] >= self.PARTITIONS_TTL_S:
            return None
        return hit[1], hit[2]

    def get_dynamic_partitions(self, partitions_def_name: str) -> Sequence[str]:
        cached = self._cached_partitions(partitions_def_name)
        if cached is not None:
            return list(cached[0])
        read_at = time.monotonic()
        keys = tuple(super().get_dynamic_partitions(partitions_def_name))
        self._partitions[partitions_def_name] = (read_at, keys, frozenset(keys))
        return list(keys)

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        cached = self._cached_partitions(partitions_def_name)
        if cached is not None and partition_key in cached[1]:
            return True
        return super().has_dynamic_partition(partitions_def_name, partition_key)

    def add_dynamic_partitions(self, partitions_def_name: str, partition_keys: Sequence[str]) -> None:
        self._partitions.pop(partitions_def_name, None)
        super().add_dynamic_partitions(partitions_def_name, partition_keys)

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        self._partitions.pop(partitions_def_name, None)
        super().delete_dynamic_partition(partitions_def_name, partition_key)

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        # Consecutive asset events (planned, materialized, observed) of one run go in bulk; anything else
        # (check evaluations, run status) takes the stock path. Storage order = the order Dagster gave.
        pending: list[EventLogEntry] = []
        for event in events:
            if _is_plain_asset_event(event) and (not pending or pending[0].run_id == event.run_id):
                pending.append(event)
                continue
            self._flush(pending)
            pending = []
            if _is_plain_asset_event(event):
                pending.append(event)
            else:
                self.store_event(event)
        self._flush(pending)

    def _flush(self, events: list[EventLogEntry]) -> None:
        if len(events) == 1:
            self.store_event(events[0])
        elif events:
            self._store_asset_events(events)

    def _store_asset_events(self, events: list[EventLogEntry]) -> None:
        # Same rows as SqliteEventLogStorage.store_event: the event in its run's shard, then mirrored into
        # the index shard with its tags and the asset record update. Run shard first, as there.
        rows = [self._event_to_row(event) for event in events]  # each event serialized once, as there
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(SqlEventLogStorageTable.insert(), rows)  # one executemany
        with self.index_transaction() as conn:
            returning = SqlEventLogStorageTable.insert().returning(SqlEventLogStorageTable.c.id, sort_by_parameter_order=True)
            event_ids = [r[0] for r in conn.execute(returning, rows)]  # ids in the order of the events
            self._store_asset_event_tags(conn, events, event_ids)  # one executemany (and one table probe)
            self._store_asset_records(conn, events, event_ids)

    def _store_asset_records(self, conn: Any, events: list[EventLogEntry], event_ids: list[int]) -> None:
        """The asset-key rows as _store_asset_event leaves them after the batch, in one write per asset.

        Each event overwrites a fixed set of columns given by its type (materialization: last
        materialization + run id + timestamp; planned: run id + timestamp; observation: timestamp), so an
        event followed in the batch by one of the same type and asset changes nothing the later one does
        not overwrite: only the last of each (asset, type) is applied, in batch order."""
        last_of: dict[tuple[str, Any], int] = {}
        for i, event in enumerate(events):
            if not (event.dagster_event and event.dagster_event.asset_key):
                continue  # as _store_asset_event: no asset row to update
            last_of[(event.dagster_event.asset_key.to_string(), event.dagster_event_type)] = i
        has_cols = self._has_asset_key_index_cols_on_connection(conn)
        merged: dict[str, dict[str, Any]] = {}
        for (key, _), i in sorted(last_of.items(), key=lambda kv: kv[1]):
            values = self._get_asset_entry_values(events[i], event_ids[i], has_cols)
            merged.setdefault(key, {}).update(values)
        for asset_key, values in merged.items():
            if not values:
                continue
            try:  # as _store_asset_event: insert, or update the existing row
                conn.execute(AssetKeyTable.insert().values(asset_key=asset_key, **values))
            except db_exc.IntegrityError:
                conn.execute(AssetKeyTable.update().values(**values).where(AssetKeyTable.c.asset_key == asset_key))


def _is_plain_asset_event(event: EventLogEntry) -> bool:
    t = event.dagster_event_type if event.is_dagster_event else None
    return t in ASSET_EVENTS and t not in ASSET_CHECK_EVENTS and t not in EVENT_TYPE_TO_PIPELINE_RUN_STATUS


# The instance-wide "auto-materialize paused" flag of Dagster's pre-sensor asset daemon. With automation sensors
# (the project's audit_automation, RUNNING by default) the daemon ignores it, but the UI's job pages still show
# an orange "Auto-materialize off" badge while it is unset. Set to off once, as the UI's own toggle on the
# Deployment → Daemons page would (Dagster has no public Python call for it); a value someone set stays.
_PAUSED_KEY = "ASSET_DAEMON_PAUSED"


def show_automation_on(instance: DagsterInstance) -> None:
    try:
        from dagster._daemon.asset_daemon import set_auto_materialize_paused

        if instance.daemon_cursor_storage.get_cursor_values({_PAUSED_KEY}).get(_PAUSED_KEY) is None:
            set_auto_materialize_paused(instance, False)
    except Exception:  # a badge only: never a reason for a command to fail
        return
