"""The batching event log keeps the dynamic partitions it read for a moment (a run over many scopes asks for them
once per scope and asset): one read serves the lookups, its own adds and deletes are seen at once, a key another
process added is never missed, and another process's delete is seen once the moment has passed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from claims_pipeline.orchestration.event_log_storage import BatchingSqliteEventLogStorage

NAME = "scope"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every read of the partitions table (the stock storage's own get/has), by kind."""
    seen: list[str] = []
    get, has = SqliteEventLogStorage.get_dynamic_partitions, SqliteEventLogStorage.has_dynamic_partition

    def counted_get(self, name):
        seen.append("get")
        return get(self, name)

    def counted_has(self, name, key):
        seen.append("has")
        return has(self, name, key)

    monkeypatch.setattr(SqliteEventLogStorage, "get_dynamic_partitions", counted_get)
    monkeypatch.setattr(SqliteEventLogStorage, "has_dynamic_partition", counted_has)
    return seen


def test_one_read_serves_the_lookups_and_changes_are_seen(tmp_path: Path, reads: list[str],
                                                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(BatchingSqliteEventLogStorage, "PARTITIONS_TTL_S", 0.5)
    here = BatchingSqliteEventLogStorage(base_dir=str(tmp_path / "runs"))
    other = BatchingSqliteEventLogStorage(base_dir=str(tmp_path / "runs"))  # another process's view of the same files
    keys = [f"s{i:03d}" for i in range(300)]
    here.add_dynamic_partitions(NAME, keys)

    reads.clear()
    assert here.get_dynamic_partitions(NAME) == keys  # in the order added
    for k in keys:
        assert here.has_dynamic_partition(NAME, k)
        assert here.get_dynamic_partitions(NAME)[-1] == "s299"
    assert reads == ["get"]  # 601 questions, one read

    # its own changes: seen at once
    here.add_dynamic_partitions(NAME, ["new"])
    here.delete_dynamic_partition(NAME, "s000")
    assert here.get_dynamic_partitions(NAME) == [*keys[1:], "new"]
    assert not here.has_dynamic_partition(NAME, "s000")

    # another process adds a key: never missed, even while the list is kept
    other.add_dynamic_partitions(NAME, ["added-elsewhere"])
    assert here.has_dynamic_partition(NAME, "added-elsewhere")
    assert not here.has_dynamic_partition(NAME, "never-added")

    # another process deletes one: seen once the kept list is older than the TTL
    other.delete_dynamic_partition(NAME, "s001")
    time.sleep(0.6)
    assert not here.has_dynamic_partition(NAME, "s001")
    assert here.get_dynamic_partitions(NAME) == [*keys[2:], "new", "added-elsewhere"]
