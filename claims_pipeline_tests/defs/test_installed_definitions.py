"""The code location loads from an installed package too (no pyproject.toml above it, as in site-packages):
claims_pipeline/definitions.py then builds the same defs/ folder as a module, with the same definitions as the
checkout's dg project."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from claims_pipeline.definitions import defs as checkout_defs
from claims_pipeline_tests.time_scale import scaled

PACKAGE = Path(__file__).resolve().parents[2] / "claims_pipeline"


def names(defs) -> dict[str, list[str]]:
    return {
        "assets": sorted(k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()),
        "checks": sorted(c.name for a in (defs.asset_checks or []) for c in a.check_specs),
        "jobs": sorted(j.name for j in (defs.jobs or [])),
        "schedules": sorted(s.name for s in (defs.schedules or [])),
        "sensors": sorted(s.name for s in (defs.sensors or [])),
    }


def test_definitions_load_from_a_package_without_a_project_file(tmp_path: Path):
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "claims_pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    assert not any((p / "pyproject.toml").exists() or (p / "setup.py").exists() for p in site.parents)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAIMS_PIPELINE_CONFIG", "DAGSTER_HOME")}
    env["PYTHONPATH"] = str(site)
    code = (inspect.getsource(names) + "import json, claims_pipeline, claims_pipeline.definitions as d\n"
            "print(json.dumps({'package': claims_pipeline.__file__, **names(d.defs())}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=scaled(240))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr, done.stderr[-3000:]  # as quiet as the checkout's loader
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded.pop("package") == str(site / "claims_pipeline" / "__init__.py")  # the copy, not the checkout
    assert loaded == names(checkout_defs())
    assert "audit_scope" in loaded["jobs"] and "audit_report" in loaded["assets"]
