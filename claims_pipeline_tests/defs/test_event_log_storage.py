"""The batching event log stores exactly what the stock SQLite event log stores, and the template selects it."""


from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg

from claims_pipeline.orchestration.event_log_storage import EVENT_BATCH_SIZE_ENV, BatchingSqliteEventLogStorage

parts = dg.DynamicPartitionsDefinition(name="t_scope")
KEYS = ["aa", "ab", "ac", "ad", "ae"]


@dg.asset(partitions_def=parts, backfill_policy=dg.BackfillPolicy.single_run(), io_manager_key="mem")
def upstream(context: dg.AssetExecutionContext) -> dg.Output[dict[str, int]]:
    return dg.Output({k: len(k) for k in context.partition_keys}, data_version=dg.DataVersion("v1"),
                     metadata={"n": len(context.partition_keys)})


@dg.asset(partitions_def=parts, backfill_policy=dg.BackfillPolicy.single_run(), io_manager_key="mem")
def downstream(upstream: dict[str, int]) -> dict[str, int]:
    return {k: v + 1 for k, v in upstream.items()}


@dg.asset_check(asset=downstream)
def downstream_ok() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def _storage_override(kind: str, base: Path) -> dict[str, Any]:
    if kind == "stock":
        return {}
    return {"event_log_storage": {"module": "claims_pipeline.orchestration.event_log_storage",
                                  "class": "BatchingSqliteEventLogStorage", "config": {"base_dir": str(base / "runs")}}}


def _run_and_summarize(kind: str, tmp_path: Path) -> dict:
    base = tmp_path / kind
    base.mkdir()
    with dg.instance_for_test(temp_dir=str(base), overrides=_storage_override(kind, base)) as instance:
        instance.add_dynamic_partitions("t_scope", KEYS)
        result = dg.materialize([upstream, downstream, downstream_ok], instance=instance,
                                resources={"mem": dg.InMemoryIOManager()},
                                tags={"dagster/asset_partition_range_start": KEYS[0],
                                      "dagster/asset_partition_range_end": KEYS[-1]})
        assert result.success
        logs = instance.all_logs(result.run_id)
        events = Counter(
            (e.dagster_event.event_type_value, e.dagster_event.asset_key and e.dagster_event.asset_key.to_user_string(),
             e.dagster_event.partition)
            for e in logs if e.dagster_event
        )
        summary = {
            "storage": type(instance.event_log_storage).__name__,
            "events": events,
            "materialized": {k: sorted(instance.get_materialized_partitions(dg.AssetKey(k))) for k in ("upstream", "downstream")},
            "indexed": {k: sorted(r.partition_key for r in instance.fetch_materializations(dg.AssetKey(k), limit=100).records)
                        for k in ("upstream", "downstream")},
            "planned_in_index": sorted(
                r.partition_key for r in instance.fetch_planned_materializations(dg.AssetKey("upstream"), limit=100).records),
            "data_version": sorted({r.asset_materialization.tags.get("dagster/data_version")
                                    for r in instance.fetch_materializations(dg.AssetKey("upstream"), limit=100).records}),
            "last_run": instance.get_asset_records([dg.AssetKey("downstream")])[0].asset_entry.last_materialization.run_id,
            "run_id": result.run_id,
            "asset_rows": _asset_rows(instance, {result.run_id: "run 1"}),
            "check": [c.passed for c in result.get_asset_check_evaluations()],
        }
        # a second, later run still appends to the same index (record ids keep growing across batches)
        again = dg.materialize([upstream], instance=instance, resources={"mem": dg.InMemoryIOManager()}, partition_key="ac")
        assert again.success
        records = instance.fetch_materializations(dg.AssetKey("upstream"), limit=100).records
        summary["latest_ac_run"] = next(r.run_id for r in records if r.partition_key == "ac") == again.run_id
        summary["ids_unique"] = len({r.storage_id for r in records}) == len(records)
        summary["asset_rows_after"] = _asset_rows(instance, {result.run_id: "run 1", again.run_id: "run 2"})
        return summary


def _asset_rows(instance: dg.DagsterInstance, run_names: dict) -> dict:
    """The cross-run asset_keys rows (what the UI's asset records read), run ids named for comparison."""
    from dagster._core.storage.event_log.schema import AssetKeyTable
    from dagster._serdes import deserialize_value

    with instance.event_log_storage.index_connection() as conn:
        rows = conn.execute(AssetKeyTable.select()).fetchall()
    out = {}
    for r in rows:
        last = deserialize_value(r.last_materialization) if r.last_materialization else None
        out[dg.AssetKey.from_db_string(r.asset_key).to_user_string()] = (
            run_names.get(r.last_run_id, r.last_run_id),
            (last.storage_id, last.partition_key, run_names.get(last.run_id)) if last else None,
            r.last_materialization_timestamp is not None,
        )
    return out


def test_batched_writes_store_the_same_events_and_asset_records(tmp_path, monkeypatch):
    monkeypatch.setenv(EVENT_BATCH_SIZE_ENV, "1000")  # both arms hand events over in batches
    bulk_sizes: list[int] = []
    original = BatchingSqliteEventLogStorage._store_asset_events

    def spy(self, events):  # the bulk path really ran (not only the per-event fallback)
        bulk_sizes.append(len(events))
        return original(self, events)

    monkeypatch.setattr(BatchingSqliteEventLogStorage, "_store_asset_events", spy)
    stock = _run_and_summarize("stock", tmp_path)
    assert bulk_sizes == []
    batched = _run_and_summarize("batching", tmp_path)
    # planned events of both assets (10) in one go; each step's 5 materializations in one go
    assert sorted(bulk_sizes) == [5, 5, 10], bulk_sizes
    assert stock["storage"] == "SqliteEventLogStorage"
    assert batched["storage"] == "BatchingSqliteEventLogStorage"
    # one planned event and one materialization per asset per partition, as with the stock class
    assert batched["events"][("ASSET_MATERIALIZATION", "upstream", "ad")] == 1
    assert batched["events"][("ASSET_MATERIALIZATION_PLANNED", "downstream", "ae")] == 1
    assert batched["events"] == stock["events"]
    assert batched["asset_rows"]["downstream"][1][1] in KEYS and batched["asset_rows"]["downstream"][1][2] == "run 1"
    assert batched["asset_rows"]["upstream"][0] == "run 1" and batched["asset_rows_after"]["upstream"][0] == "run 2"
    for key in ("asset_rows", "asset_rows_after", "materialized", "indexed", "planned_in_index", "data_version", "check", "latest_ac_run", "ids_unique"):
        assert batched[key] == stock[key], key
    assert batched["materialized"]["downstream"] == KEYS
    assert batched["planned_in_index"] == KEYS
    assert batched["data_version"] == ["v1"]
    assert batched["last_run"] == batched["run_id"]
    assert batched["latest_ac_run"] and batched["ids_unique"]


def test_instance_template_selects_the_batching_log(tmp_path, monkeypatch):
    import os

    from claims_pipeline.orchestration.instance import open_instance

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.delenv(EVENT_BATCH_SIZE_ENV, raising=False)
    instance = open_instance(tmp_path / "unused")  # the home is only used when DAGSTER_HOME is unset
    try:
        assert isinstance(instance.event_log_storage, BatchingSqliteEventLogStorage)
        # the stock layout under $DAGSTER_HOME: switching back to the stock class keeps the history
        assert Path(instance.event_log_storage._base_dir) == tmp_path / "dagster_home" / "history" / "runs"
        assert os.environ.get(EVENT_BATCH_SIZE_ENV) == "1000"  # opening the instance turns batching on
    finally:
        instance.dispose()


def test_the_private_dagster_parts_the_batching_log_relies_on_are_still_there():
    """orchestration/event_log_storage.py is the one module that uses Dagster internals (for a measured reason:
    a 120-scope backfill's events, 10.5 s -> 2.9 s). A Dagster upgrade that moves any of them fails here, by
    name, before a run would fail halfway."""
    import inspect

    from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, EVENT_TYPE_TO_PIPELINE_RUN_STATUS
    from dagster._core.storage.event_log.schema import AssetKeyTable, SqlEventLogStorageTable
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

    assert ASSET_EVENTS and ASSET_CHECK_EVENTS and EVENT_TYPE_TO_PIPELINE_RUN_STATUS
    assert {"asset_key", "last_materialization"} <= set(AssetKeyTable.c.keys())
    assert {"id", "run_id", "event", "dagster_event_type"} <= set(SqlEventLogStorageTable.c.keys())
    relied_on = {  # method -> the parameters our calls pass
        "_event_to_row": ["event"],
        "index_transaction": [],
        "run_connection": ["run_id"],
        "_store_asset_event_tags": ["conn", "events", "event_ids"],
        "_get_asset_entry_values": ["event", "event_id", "has_asset_key_index_cols"],
        "_has_asset_key_index_cols_on_connection": ["conn"],
        "store_event": ["event"],
        "store_event_batch": ["events"],
    }
    for name, params in relied_on.items():
        method = getattr(SqliteEventLogStorage, name, None)
        assert callable(method), f"Dagster no longer has SqliteEventLogStorage.{name}"
        got = [p for p in inspect.signature(method).parameters if p != "self"]
        assert got[: len(params)] == params, f"SqliteEventLogStorage.{name}{inspect.signature(method)} changed"


# the Dagster internals that orchestration/event_log_storage.py imports: none of them is exported by `dagster`
PRIVATE_IMPORTS = {
    ("dagster._core.events", "ASSET_CHECK_EVENTS"),
    ("dagster._core.events", "ASSET_EVENTS"),
    ("dagster._core.events", "EVENT_TYPE_TO_PIPELINE_RUN_STATUS"),
    ("dagster._core.storage.event_log.schema", "AssetKeyTable"),
    ("dagster._core.storage.event_log.schema", "SqlEventLogStorageTable"),
    ("dagster._core.storage.event_log.sqlite.sqlite_event_log", "SqliteEventLogStorage"),
    ("dagster._serdes", "ConfigurableClassData"),
    ("dagster._daemon.asset_daemon", "set_auto_materialize_paused"),  # the UI's "Auto-materialize off" badge
}


def test_only_the_batching_log_imports_dagster_internals_and_only_those_without_a_public_name():
    """A name `dagster` exports (Field, StringSource, EventLogEntry…) is imported from `dagster`; the rest are
    listed above, each still importable (an upgrade that moves one fails here by name), and no other module of
    the package imports from dagster._*."""
    import ast
    import importlib

    import claims_pipeline

    found: dict[str, set[tuple[str, str]]] = {}
    for path in Path(claims_pipeline.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[tuple[str, str]] = []
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dagster._"):
                names = [(node.module or "", a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                names = [(a.name, "") for a in node.names if a.name.startswith("dagster._")]
            if names:
                found.setdefault(path.name, set()).update(names)
    assert set(found) == {"event_log_storage.py"}, sorted(found)
    public = sorted(name for _, name in found["event_log_storage.py"] if hasattr(dg, name))
    assert not public, f"import these from dagster, not its internals: {public}"
    assert found["event_log_storage.py"] == PRIVATE_IMPORTS
    for module, name in sorted(PRIVATE_IMPORTS):
        assert hasattr(importlib.import_module(module), name), f"Dagster no longer has {module}.{name}"
