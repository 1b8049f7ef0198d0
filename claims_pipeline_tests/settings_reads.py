"""Counts the settings reads of a real `claims-pipeline` process: a sitecustomize module, first on its PYTHONPATH,
wraps config.settings.load_settings before anything imports it, appends one line per call to a file (its child
Python processes too: a PDF reader's), and at exit writes whether the command's own process imported the demo
package. Nothing in the package is changed for it."""

from __future__ import annotations

import os
from pathlib import Path

_SITECUSTOMIZE = '''
import atexit, os, sys
import claims_pipeline.config.settings as _settings

_log = os.environ["CLAIMS_PIPELINE_TEST_READS"]
_real = _settings.load_settings
# the command's own process is the first one here; the Python processes it starts inherit the variable
_main = os.environ.setdefault("CLAIMS_PIPELINE_TEST_READS_MAIN", str(os.getpid())) == str(os.getpid())


def _counted(*args, **kwargs):
    with open(_log, "a", encoding="utf-8") as f:
        f.write(f"load_settings {args!r} {kwargs!r}\\n")
    return _real(*args, **kwargs)


_settings.load_settings = _counted


@atexit.register
def _modules():
    if _main:
        with open(_log, "a", encoding="utf-8") as f:
            f.write(f"demo package imported: {'claims_pipeline_demo' in sys.modules}\\n")
'''

REPO = Path(__file__).resolve().parents[1]


def counting_env(folder: Path, env: dict[str, str]) -> tuple[dict[str, str], Path]:
    """`env` for a subprocess whose settings reads land in the returned file (see reads)."""
    site = folder / "count-settings-reads"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    log = folder / "settings-reads.txt"
    log.write_text("", encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), str(REPO), env.get("PYTHONPATH", "")) if p)
    env = {k: v for k, v in env.items() if k != "CLAIMS_PIPELINE_TEST_READS_MAIN"}
    return {**env, "PYTHONPATH": path, "CLAIMS_PIPELINE_TEST_READS": str(log)}, log


def reads(log: Path) -> tuple[int, bool]:
    """(load_settings calls of the process and its children, whether the process imported the demo package)."""
    lines = log.read_text(encoding="utf-8").splitlines()
    imported = [line for line in lines if line.startswith("demo package imported: ")]
    assert len(imported) == 1, lines  # the command's process ran to its end, through the wrapper
    return sum(line.startswith("load_settings ") for line in lines), imported[0].endswith("True")
