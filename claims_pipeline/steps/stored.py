"""Where a step's per-scope record is stored, and how: one JSON file per (step, scope) under <home>/assets/.

Each step module declares one `StoredStep`: the name of its asset, its record type and that type's JSON form.
The IO manager (defs/storage.py) writes and reads through it; so do the sensor, the checks and the CLI, so no
module outside the step knows a stored file's path or shape. Plain JSON keeps the files readable with any tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, Self, TypeVar

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.store.files import write_text_atomically


class Record(Protocol):
    """A step's per-scope record: its JSON form (what json.loads returns) and back."""

    def to_json(self) -> Any: ...

    @classmethod
    def from_json(cls, data: Any) -> Self: ...


R = TypeVar("R", bound=Record)


class StoredValueDamaged(ValueError):
    """A stored record that cannot be read back (cut short, edited, not JSON); the message names the file and the
    fix."""


@dataclass(frozen=True)
class StoredStep(Generic[R]):
    """One step's records: `asset` names the Dagster asset (and the folder under <home>/assets/)."""

    asset: str
    record: type[R]

    def path(self, home: Path, scope: str) -> Path:
        return HomeLayout(home).scope_file(self.asset, scope)

    def write(self, home: Path, scope: str, value: R) -> None:
        # atomic, with a temp file of its own: two runs of one scope (the CLI beside the UI) never trip each other.
        # No indent: any indent sends json.dumps to its pure-Python encoder, about 3x the C encoder's CPU at 100k
        # claims; `python -m json.tool FILE` shows a file indented.
        write_text_atomically(self.path(home, scope),
                              json.dumps(value.to_json(), ensure_ascii=False, default=str))

    def read(self, home: Path, scope: str) -> R | None:
        """The scope's stored record; None when the scope was never materialized."""
        path = self.path(home, scope)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return self.record.from_json(data)
        except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
            # JSONDecodeError is a ValueError; the others: JSON of another shape than the record's
            raise StoredValueDamaged(
                f"{path}: the stored value of {self.asset} is damaged ({type(exc).__name__}: "
                f"{(str(exc).splitlines() or [''])[0][:200]}); run `claims-pipeline audit` to rebuild it"
            ) from None

    def read_scopes(self, home: Path, scopes: list[str]) -> tuple[dict[str, R], list[str]]:
        """({scope: record} of those stored, the scopes never materialized)."""
        found: dict[str, R] = {}
        absent: list[str] = []
        for scope in scopes:
            value = self.read(home, scope)
            if value is None:
                absent.append(scope)
            else:
                found[scope] = value
        return found, absent
