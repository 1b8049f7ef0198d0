"""A real `claims-pipeline audit` in its own process group, to be stopped at a stage of its run: the corpus whose
fetch is slow enough to stop it mid-way, and the waits on the Dagster instance that tell which stage it is in.
Used by orchestration/test_hostile_stops.py and benchmarks/bench_stops.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg

from claims_pipeline_tests.time_scale import scaled

SLOW_PAGES = 8  # 1 s each, two at a time: a fetch of about 4 s
CRAWL_DELAY_S = 30  # two pages of polite.fixture: a minute of politeness the 120 s budget can afford
def write_corpus(root: Path) -> Path:
    xa = [f"- VAT **{10 + i} %** ([t](http://slow.fixture/_/slow?delay=1&n={i}))" for i in range(SLOW_PAGES)]
    xb = [f"- Levy **{i}.5 %** ([p](http://polite.fixture/_/page/p{i}))" for i in range(2)]
    for scope, lines in (("xa", xa), ("xb", xb)):
        (root / "countries" / scope).mkdir(parents=True)
        (root / "countries" / scope / "playbook.md").write_text("## Tax\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return root


class Audit:
    """One `claims-pipeline audit` in its own process group, stderr and stdout to files."""

    def __init__(self, cfg: Path, env: dict[str, str], cwd: Path) -> None:
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "claims_pipeline.cli", "audit", "--config", str(cfg)],
                                     cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.err,
                                     start_new_session=True)

    def signal(self, sig: int) -> float:
        os.killpg(self.proc.pid, sig)  # the whole group, as a terminal's Ctrl-C or systemd's stop
        return time.monotonic()

    def wait(self, timeout: float = 180) -> tuple[int, str]:
        """The exit code and stderr; killed, and the test failed, after `timeout` s (scaled: time_scale.py)."""
        timeout = scaled(timeout)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError(f"audit still running after {timeout} s: {self.stderr()[-2000:]}") from None
        return code, self.stderr()

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace")


def instance_at(dagster_home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_config(str(dagster_home))


def newest_run(dagster_home: Path) -> dg.DagsterRun | None:
    with instance_at(dagster_home) as instance:
        runs = instance.get_runs(limit=1)
        return runs[0] if runs else None


def step_started(dagster_home: Path, step: str, after: set[str]) -> bool:
    with instance_at(dagster_home) as instance:
        runs = [r for r in instance.get_runs(limit=1) if r.run_id not in after]
        if not runs:
            return False
        records = instance.get_records_for_run(runs[0].run_id, of_type=dg.DagsterEventType.STEP_START).records
        return any(r.event_log_entry.step_key == step for r in records)


def until(condition: Callable[[], bool], audit: Audit, what: str, timeout: float = 120) -> None:
    end = time.monotonic() + scaled(timeout)
    while not condition():
        if audit.proc.poll() is not None:
            raise AssertionError(f"the audit ended before {what}: {audit.stderr()[-2000:]}")
        if time.monotonic() > end:
            raise AssertionError(f"{what} never came: {audit.stderr()[-2000:]}")
        time.sleep(0.05)
