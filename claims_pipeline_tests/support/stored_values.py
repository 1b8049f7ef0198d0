"""What a run stored for one scope of a per-scope asset, in its plain (JSON) form, read the way the pipeline reads
it (steps/stored.py): the tests look at the values, not at the files' layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claims_pipeline.steps.step_of_asset import stored_step


def stored_json(home: Path, asset: str, scope: str) -> Any:
    value = stored_step(asset).read(home, scope)
    assert value is not None, f"{asset}: nothing stored for scope {scope!r} under {home}"
    return json.loads(json.dumps(value.to_json(), default=str))
