"""Celery workers for the distributed tests, started both ways docs/deploy-distributed.md shows: dagster-celery's
CLI with deploy/celery/worker.yaml (it runs `celery worker` as its child), or celery's own CLI with
dagster_celery's app and the broker from the environment (one Python start-up fewer).

Each worker runs in its own process group, so stopping one stops exactly the processes this test started, by
their group id. The solo pool runs each step in the worker's celery process, a descendant the test can list.
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

from claims_pipeline_tests.time_scale import scaled

READY_TIMEOUT_S = scaled(60)
STOP_TIMEOUT_S = scaled(10)


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


WORKER_YAML = Path(__file__).resolve().parents[2] / "deploy" / "celery" / "worker.yaml"
BROKER_ENV, BACKEND_ENV = "CLAIMS_PIPELINE_CELERY_BROKER", "CLAIMS_PIPELINE_CELERY_BACKEND"
_WORKER_ARGS = ["--pool=solo", "--without-gossip", "--without-mingle", "--without-heartbeat"]


def _command(name: str, how: str, env: Mapping[str, str]) -> list[str]:
    if how == "dagster-celery":
        return [str(Path(sys.executable).parent / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
                "-y", str(WORKER_YAML), "-n", name, "-l", "INFO", "--", *_WORKER_ARGS]
    return [sys.executable, "-m", "celery", "-A", "dagster_celery.app", "-b", env[BROKER_ENV], "--result-backend",
            env[BACKEND_ENV], "worker", "-n", f"{name}@%h", "--prefetch-multiplier=1", "-l", "INFO", *_WORKER_ARGS]


@contextmanager
def celery_workers(workers: dict[str, str], env: Mapping[str, str], cwd: Path, log_dir: Path) -> Iterator[Workers]:
    """Starts each worker name -> "dagster-celery" or "celery" (its CLI); env holds the broker variables."""
    procs: dict[str, subprocess.Popen[bytes]] = {}
    full_env = {**os.environ, **env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        for name, how in workers.items():
            with (log_dir / f"{name}.log").open("wb") as log:
                procs[name] = subprocess.Popen(_command(name, how, full_env), cwd=cwd, env=full_env, stdout=log,
                                               stderr=subprocess.STDOUT, start_new_session=True)
        yield Workers(procs, broker=full_env[BROKER_ENV])
    finally:
        for proc in procs.values():
            _stop(proc)
