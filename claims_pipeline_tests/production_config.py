"""A settings file a production deployment starts on (config/deployments.py): the bundled demo corpus and the
demo's politeness, without its route to loopback, with a home, a page-cache index on PostgreSQL and one
notification channel; `changes` (dotted keys, None deletes) break one requirement at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from claims_pipeline.config.settings import DEMO_CONFIG_FILE, DEMO_CORPUS_DIR


def write_production_config(folder: Path, *, db_url: str, notify_url: str, **changes: Any) -> Path:
    data = yaml.safe_load(DEMO_CONFIG_FILE.read_text(encoding="utf-8"))
    data["home"] = str(folder / "home")
    data["extraction"]["corpus_dir"] = str(DEMO_CORPUS_DIR)
    del data["fetch"]["address_map"]  # the demo sends one host to 127.0.0.2: a loopback route production refuses
    data["cache"] = {"db_url": db_url}
    data["notify"] = {"urls": [notify_url]}
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "production.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return config
