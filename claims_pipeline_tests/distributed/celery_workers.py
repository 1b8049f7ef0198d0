"""Celery workers for the distributed tests: celery's own CLI with dagster_celery's app (what `dagster-celery
worker start` runs, minus its wrapper process: one Python start-up fewer per worker on a 2-core machine).

Each worker runs in its own process group, so stopping one stops exactly the processes this test started, by
their group id. The solo pool runs each step in the worker's main process, whose pid the test knows.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import psutil

READY_TIMEOUT_S = 40
STOP_TIMEOUT_S = 10


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the group this test created for the worker: celery warm shutdown
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=STOP_TIMEOUT_S)


class Workers:
    def __init__(self, procs: dict[str, subprocess.Popen[bytes]], broker: str) -> None:
        self.procs = procs
        self.broker = broker

    def pids(self) -> dict[int, str]:
        """pid -> worker name, for every live process of every worker (the CLI and the celery it started)."""
        out: dict[int, str] = {}
        for name, proc in self.procs.items():
            top = psutil.Process(proc.pid)
            for p in [top, *top.children(recursive=True)]:
                out[p.pid] = name
        return out

    def wait_ready(self) -> list[str]:
        """Blocks until every worker answers a ping through the broker; returns their node names."""
        from celery import Celery

        app = Celery(broker=self.broker)
        deadline = time.monotonic() + READY_TIMEOUT_S
        try:
            while True:
                nodes = sorted(n for reply in (app.control.ping(timeout=0.5) or []) for n in reply)
                if len(nodes) >= len(self.procs):
                    return nodes
                dead = {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}
                if dead or time.monotonic() > deadline:
                    raise RuntimeError(f"celery workers not ready (exited: {dead}, answering: {nodes})")
        finally:
            app.close()


@contextmanager
def celery_workers(names: list[str], broker: str, backend: str, env: Mapping[str, str], cwd: Path,
                   log_dir: Path) -> Iterator[Workers]:
    """Starts one worker per name (node name <name>@<host>) on dagster_celery's queue."""
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in names:
            with (log_dir / f"{name}.log").open("wb") as log:
                procs[name] = subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "dagster_celery.app", "-b", broker, "--result-backend",
                     backend, "worker", "-n", f"{name}@%h", "--pool=solo", "--prefetch-multiplier=1", "-l", "INFO",
                     "--without-gossip", "--without-mingle", "--without-heartbeat"],
                    cwd=cwd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        yield Workers(procs, broker=broker)
    finally:
        for proc in procs.values():
            _stop(proc)
