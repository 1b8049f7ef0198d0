"""Where a step's per-scope records are stored, and how: one Arrow IPC file per materialization, the scope a column.

Each step module declares one `StoredStep`: the name of its asset, its record type and that record's form, the
Arrow type of what `to_json()` returns (None: its JSON text, for a small record of a deep form). A run that materializes 1,000 scopes writes one file of 1,000 rows
under <home>/assets/<asset>.store/, and that folder's index.json names the file that holds each scope's latest
record; a reader opens only the files that hold the scopes it asks for, memory-mapped (Arrow IPC, uncompressed:
read without a copy or a parse; benchmarks/bench_run_store.py measured it against Parquet and JSON), and keeps
them for the run (`ScopeStore`), so a run reads each file once however many steps load it.

The IO manager (defs/storage.py) writes and reads through it; so do the sensor, the checks and the CLI, so no
module outside this one knows a stored file's path or shape. `pyarrow` or any Arrow tool reads the files;
`claims-pipeline` homes from before kept one JSON file per scope under <home>/assets/<asset>/: those are still
read, for the scopes no newer run stored, and removed once their scope is stored again.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, Self, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.priors.gc_passes import fewer_gc_passes
from claims_pipeline.store.files import locked, replace_atomically, write_text_atomically


class Record(Protocol):
    """A step's per-scope record: its plain form (dicts, lists, str, int, float, bool, None) and back. A mapping
    of its form (an Arrow map) comes back as a list of (key, value) pairs: from_json takes dict() of it (Arrow's
    maps_as_pydicts costs 8x the whole read)."""

    def to_json(self) -> Any: ...

    @classmethod
    def from_json(cls, data: Any) -> Self: ...


R = TypeVar("R", bound=Record)

INDEX = "index.json"  # {scope: the file holding its latest record}
_READ_ATTEMPTS = 3  # a writer may drop a file between our reading the index and opening it: read the index again


class StoredValueDamaged(ValueError):
    """A stored record that cannot be read back (cut short, edited, of another form); the message names the file
    and the fix."""


def _damaged(path: Path, asset: str, exc: BaseException) -> StoredValueDamaged:
    return StoredValueDamaged(
        f"{path}: the stored value of {asset} is damaged ({type(exc).__name__}: "
        f"{(str(exc).splitlines() or [''])[0][:200]}); run `claims-pipeline audit` to rebuild it")


@dataclass(frozen=True)
class StoredStep(Generic[R]):
    """One step's records: `asset` names the Dagster asset (and its folders under <home>/assets/); `form` is the
    Arrow type of `record.to_json()`'s value, declared beside the record so that its stored columns are its own
    (None: the value's JSON text, for the verdicts: few, and nested deeply)."""

    asset: str
    record: type[R]
    form: pa.DataType | None

    @property
    def column_type(self) -> pa.DataType:
        return self.form if self.form is not None else pa.large_string()

    def encode(self, value: R) -> Any:
        data = value.to_json()
        return data if self.form is not None else json.dumps(data, ensure_ascii=False, default=str)

    def decode(self, data: Any) -> R:
        return self.record.from_json(data if self.form is not None else json.loads(data))

    def folder(self, home: Path) -> Path:
        return HomeLayout(home).store_dir(self.asset)

    def legacy_path(self, home: Path, scope: str) -> Path:
        """A home of an earlier version: the scope's record as one JSON file."""
        return HomeLayout(home).scope_file(self.asset, scope)

    def read(self, home: Path, scope: str) -> R | None:
        """The scope's stored record; None when the scope was never materialized."""
        return ScopeStore(home).read(self, [scope])[0].get(scope)

    def read_scopes(self, home: Path, scopes: list[str]) -> tuple[dict[str, R], list[str]]:
        """({scope: record} of those stored, the scopes never materialized)."""
        return ScopeStore(home).read(self, scopes)

    def write(self, home: Path, scope: str, value: R) -> None:
        ScopeStore(home).write(self, {scope: value})

    def has_any(self, home: Path, scopes: list[str]) -> bool:
        """Whether any of `scopes` has a stored record (in the index, or an earlier version's JSON file)."""
        try:
            index = _read_index(self.folder(home))
        except StoredValueDamaged:
            return True  # there is something: the run that reads it names the damage
        return any(s in index or self.legacy_path(home, s).is_file() for s in scopes)


def _read_index(folder: Path) -> dict[str, str]:
    path = folder / INDEX
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoredValueDamaged(f"{path}: the index of stored values is damaged ({exc}); delete the folder "
                                 f"{folder} and run `claims-pipeline audit` to rebuild it") from None
    if not isinstance(data, dict):
        raise StoredValueDamaged(f"{path}: the index of stored values is not a JSON object; delete the folder "
                                 f"{folder} and run `claims-pipeline audit` to rebuild it")
    return {str(k): str(v) for k, v in data.items()}


@dataclass
class ScopeStore:
    """The stored records of one home, read and written for one run: each file read at most once (the files never
    change once written: a new materialization writes a new file), kept memory-mapped until the store is dropped."""

    home: Path
    _tables: dict[Path, pa.Table] = field(default_factory=dict)

    def write(self, step: StoredStep[Any], values: dict[str, Any]) -> Path:
        """One file for every scope of `values`; the index then names it for them. Files no scope names any more
        are removed, and so are the scopes' JSON files of an earlier version."""
        folder = step.folder(self.home)
        scopes = list(values)
        try:
            table = pa.table({"scope": pa.array(scopes, pa.string()),
                              "record": pa.array([step.encode(values[s]) for s in scopes], type=step.column_type)})
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # a record whose value is not of its declared form
            raise TypeError(f"{step.asset}: a record does not fit its stored form (steps/stored.py): {exc}") from exc
        name = f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.arrow"
        # Under the folder's lock: a file written by another run meanwhile is in the index before any sweep.
        with locked(folder / "index.lock"):
            replace_atomically(folder / name, lambda tmp: _write_ipc(tmp, table))
            index = _read_index(folder)
            index.update(dict.fromkeys(scopes, name))
            write_text_atomically(folder / INDEX, json.dumps(index, ensure_ascii=False, sort_keys=True))
            live = set(index.values())
            for old in folder.glob("*.arrow"):
                if old.name not in live:
                    old.unlink(missing_ok=True)
        for scope in scopes:
            step.legacy_path(self.home, scope).unlink(missing_ok=True)
        return folder / name

    def read(self, step: StoredStep[R], scopes: list[str]) -> tuple[dict[str, R], list[str]]:
        """({scope: record} of those stored, the scopes never materialized), in the order of `scopes`."""
        folder = step.folder(self.home)
        for attempt in range(_READ_ATTEMPTS):
            index = _read_index(folder)
            try:
                rows = self._rows(step, folder, index, scopes)
                break
            except FileNotFoundError:
                if attempt == _READ_ATTEMPTS - 1:
                    raise
        found: dict[str, R] = {}
        absent: list[str] = []
        for scope in scopes:
            value = rows.get(scope)
            if value is None:
                value = self._legacy(step, scope)
            if value is None:
                absent.append(scope)
            else:
                found[scope] = value
        return found, absent

    def _rows(self, step: StoredStep[R], folder: Path, index: dict[str, str], scopes: list[str]) -> dict[str, R]:
        by_file: dict[str, list[str]] = defaultdict(list)
        for scope in scopes:
            if scope in index:
                by_file[index[scope]].append(scope)
        out: dict[str, R] = {}
        for name, wanted in by_file.items():
            path = folder / name
            table = self._table(path, step)
            try:
                rows = table.filter(pc.is_in(table["scope"], value_set=pa.array(wanted, pa.string())))
                with fewer_gc_passes():  # 100k claims are millions of new objects, none of them garbage
                    records = rows["record"].to_pylist()
                    for key, data in zip(rows["scope"].to_pylist(), records, strict=True):
                        out[str(key)] = step.decode(data)
            except (pa.ArrowException, ValueError, KeyError, TypeError, AttributeError) as exc:
                raise _damaged(path, step.asset, exc) from None
        return out

    def _table(self, path: Path, step: StoredStep[Any]) -> pa.Table:
        table = self._tables.get(path)
        if table is None:
            try:
                table = _open(path)
            except pa.ArrowInvalid as exc:
                raise _damaged(path, step.asset, exc) from None
            if table.schema.names != ["scope", "record"] or table.schema.field("record").type != step.column_type:
                # written by a version whose record had another form: read as damaged, rebuilt by the next run
                raise _damaged(path, step.asset, TypeError("not the record's form (written by another version?)"))
            self._tables[path] = table
        return table

    def _legacy(self, step: StoredStep[R], scope: str) -> R | None:
        path = step.legacy_path(self.home, scope)
        if not path.is_file():
            return None
        try:
            return step.record.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise _damaged(path, step.asset, exc) from None


def _open(path: Path) -> pa.Table:
    """The file's table, memory-mapped: its buffers are the file's pages, not a copy."""
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def _write_ipc(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def write_json_file(step: StoredStep[R], home: Path, scope: str, value: R) -> None:
    """The record as an earlier version stored it, one JSON file per scope: for the benchmark's comparison
    (benchmarks/bench_run_store.py) and the tests of homes written before the columnar store."""
    write_text_atomically(step.legacy_path(home, scope), json.dumps(value.to_json(), ensure_ascii=False, default=str))
