"""Where per-scope asset values live: one JSON file per (asset, scope) under <home>/assets/.

Every per-scope asset returns {scope: value} for the scopes of its run (one scope, or many in a single-run
backfill); this IO manager writes each scope to its own file, and loads {scope: value} for whatever partitions
the consumer asks for (the cross-scope audit asks for all of them). Plain JSON keeps the files readable with
any tool; the audit writes its own parquet tables and reports (defs/audit).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg

from claims_pipeline.common import stopping
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.store.files import write_text_atomically


def asset_dir(home: Path, asset_key: dg.AssetKey) -> Path:
    return HomeLayout(home).assets_dir / "/".join(asset_key.path)


def scope_file(home: Path, asset_key: dg.AssetKey, scope: str) -> Path:
    return HomeLayout(home).scope_file("/".join(asset_key.path), scope)


def _write_json(path: Path, value: Any) -> None:
    # atomic, with a temp file of its own: two runs of one scope (the CLI beside the UI) never trip each other
    write_text_atomically(path, json.dumps(value, ensure_ascii=False, indent=1, default=str))


class ScopeStoreIOManager(dg.ConfigurableIOManager):
    config: ClaimsConfig

    def _home(self) -> Path:
        return self.config.load().home_dir

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if obj is None:
            return
        home = self._home()
        if context.has_asset_partitions:
            missing = set(context.asset_partition_keys) - set(obj)
            if missing:
                raise ValueError(f"{context.asset_key.to_user_string()}: no value for scopes {', '.join(sorted(missing))}")
            for scope in context.asset_partition_keys:
                _write_json(scope_file(home, context.asset_key, scope), obj[scope])
        else:
            _write_json(asset_dir(home, context.asset_key).with_suffix(".json"), obj)

    def load_input(self, context: dg.InputContext) -> Any:
        stopping.check()  # a stop asked between two steps: the next one does not start
        home = self._home()
        key = context.asset_key
        if context.has_asset_partitions:
            out: dict[str, Any] = {}
            absent: list[str] = []
            for scope in context.asset_partition_keys:
                path = scope_file(home, key, scope)
                if path.is_file():
                    out[scope] = _read_json(path, key)
                else:
                    absent.append(scope)
            if absent:  # a scope never materialized: go on with the others, but say so
                context.log.warning(f"{key.to_user_string()}: not yet materialized for scopes {', '.join(absent)}; "
                                    "they are left out")
            return out
        path = asset_dir(home, key).with_suffix(".json")
        if not path.is_file():
            raise FileNotFoundError(f"{key.to_user_string()}: {path} does not exist; materialize it first")
        return _read_json(path, key)


class StoredValueDamaged(ValueError):
    """A stored asset value that cannot be read back (cut short, edited, not JSON); the message names the file
    and the fix."""


def _read_json(path: Path, key: dg.AssetKey) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise StoredValueDamaged(
            f"{path}: the stored value of {key.to_user_string()} is damaged ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200]}); run `claims-pipeline audit` to rebuild it") from None
