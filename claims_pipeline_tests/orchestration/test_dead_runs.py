"""A run whose process died is marked failed, and the queue it held moves on (issue 35): a real `claims-pipeline
audit` killed with SIGKILL mid-run, then a queued audit launched as a user launches it (`dagster job launch`
against a code server) and a real `dagster-daemon run` on the shipped instance template; and, without a daemon,
the next command. Before, the killed audit's run stayed STARTED for ever and, through its cross-scope tag (limit 1),
kept the queued run QUEUED for ever."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import psutil
import pytest

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.config.settings import ENV_CONFIG, load_settings
from claims_pipeline.defs.dead_runs import (
    HOST_TAG,
    PID_TAG,
    PROCESS_START_TAG,
    _run_worker,
    process_tags,
    reap_dead_runs,
)
from claims_pipeline.defs.jobs import CROSS_SCOPE_TAGS
from claims_pipeline.orchestration.instance import INSTANCE_ENV, INSTANCE_TEMPLATES, open_instance
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.orchestration.deployment import (
    WAIT_S,
    cli,
    failures,
    finish,
    start_code_server,
    start_daemon,
    stop_all,
)

S = dg.DagsterRunStatus
REASON = "ended without finishing it (killed, or its machine restarted): marked failed"


def _unfinished(instance: dg.DagsterInstance, tags: dict[str, str]) -> dg.DagsterRun:
    return instance.add_run(dg.DagsterRun(job_name="audit_scope", run_id=str(uuid.uuid4()), status=S.STARTED,
                                          tags=tags))


def _failure_message(instance: dg.DagsterInstance, run_id: str) -> str:
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    return records[-1].event_log_entry.message if records else ""


def test_only_the_runs_of_a_process_that_is_gone_are_marked_failed() -> None:
    host = socket.gethostname()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    sleeper_start = f"{psutil.Process(sleeper.pid).create_time():.2f}"
    zombie = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    zombie_tags = {HOST_TAG: host, PID_TAG: str(zombie.pid),
                   PROCESS_START_TAG: f"{psutil.Process(zombie.pid).create_time():.2f}"}
    try:
        with dg.instance_for_test() as instance:
            alive = _unfinished(instance, process_tags())
            elsewhere = _unfinished(instance, {HOST_TAG: "another-host", PID_TAG: "999999", PROCESS_START_TAG: "1.00"})
            daemon_launched = _unfinished(instance, {})  # no process tags: Dagster's run monitoring's to watch
            reused = _unfinished(instance, {**process_tags(), PROCESS_START_TAG: f"{psutil.Process().create_time() - 500:.2f}"})
            os.kill(sleeper.pid, signal.SIGKILL)
            sleeper.wait()
            killed = _unfinished(instance, {HOST_TAG: host, PID_TAG: str(sleeper.pid), PROCESS_START_TAG: sleeper_start})
            zombie.kill()  # not waited for: a zombie until then, gone all the same
            time.sleep(0.5)
            unwaited = _unfinished(instance, zombie_tags)

            reaped = reap_dead_runs(instance)

            assert sorted(reaped) == sorted([reused.run_id, killed.run_id, unwaited.run_id])
            for run in (alive, elsewhere, daemon_launched):
                current = instance.get_run_by_id(run.run_id)
                assert current is not None and current.status == S.STARTED
            for run_id in reaped:
                current = instance.get_run_by_id(run_id)
                assert current is not None and current.status == S.FAILURE
                assert REASON in _failure_message(instance, run_id)
            assert reap_dead_runs(instance) == []  # once
    finally:
        for proc in (sleeper, zombie):
            proc.kill()
            proc.wait()


def _killed_cli_audit(env: dict[str, str], cwd: Path, instance: dg.DagsterInstance) -> dg.DagsterRun:
    """`claims-pipeline audit --scope xa` in a session of its own, killed (SIGKILL, with whatever it started) once
    its run is STARTED: the run, as the instance then holds it."""
    proc = subprocess.Popen([sys.executable, "-m", "claims_pipeline.cli", "audit", "--scope", "xa"], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, text=True)
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and proc.poll() is None:
            runs = instance.get_runs(dg.RunsFilter(tags={PID_TAG: str(proc.pid)}, statuses=[S.STARTED]))
            if runs:
                break
            time.sleep(0.1)
        assert proc.poll() is None and runs, f"the audit's run never started: {proc.stderr.read() if proc.stderr else ''}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    run = instance.get_run_by_id(runs[0].run_id)
    assert run is not None and run.status == S.STARTED  # dead, and the instance cannot know
    assert run.tags.items() >= CROSS_SCOPE_TAGS.items()  # the tag whose queue limit is 1
    return run


@pytest.fixture
def deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    home.mkdir()
    with FixtureWeb() as web:
        config = write_runtime_config(home, f"127.0.0.1:{web.port}")
        monkeypatch.delenv(INSTANCE_ENV, raising=False)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        monkeypatch.setenv(ENV_CONFIG, str(config))
        instance = open_instance(load_settings(config).home_dir)  # the shipped SQLite template, as the CLI makes it
        dagster_home = home / "dagster"
        assert (dagster_home / "dagster.yaml").read_bytes() == INSTANCE_TEMPLATES["sqlite"].read_bytes()
        assert instance.run_monitoring_enabled
        env = {**os.environ, "DAGSTER_HOME": str(dagster_home), ENV_CONFIG: str(config)}
        try:
            yield instance, env
        finally:
            instance.dispose()


@pytest.mark.timeout(900)
def test_a_queued_audit_starts_after_the_run_of_a_killed_audit_is_reaped_by_the_daemon(deployment, tmp_path: Path) -> None:
    instance, env = deployment
    dead = _killed_cli_audit(env, tmp_path, instance)
    started: list[subprocess.Popen[bytes]] = []
    daemon_log = tmp_path / "daemon.log"
    try:
        server, ws = start_code_server(env, tmp_path)
        started.append(server)
        # the sensors that launch runs of their own would only add runs to wait for
        for sensor in ("corpus_sensor", "audit_automation"):
            finish(cli("sensor", "stop", sensor, *ws, env=env, cwd=tmp_path))
        finish(cli("job", "launch", "-j", "audit_scope", "--tags", json.dumps({"dagster/partition": "xb"}), *ws,
                   env=env, cwd=tmp_path))
        [queued] = instance.get_runs(dg.RunsFilter(statuses=[S.QUEUED]))
        started.append(start_daemon(ws, env, tmp_path, daemon_log))
        deadline = time.monotonic() + 2 * WAIT_S
        while time.monotonic() < deadline:
            now = instance.get_run_by_id(queued.run_id)
            if now is not None and now.is_finished:
                break
            time.sleep(0.5)
        queued_now = instance.get_run_by_id(queued.run_id)
        dead_now = instance.get_run_by_id(dead.run_id)
    finally:
        stop_all(started)
    log = daemon_log.read_text(errors="replace")[-4000:]
    assert dead_now is not None and dead_now.status == S.FAILURE, log
    assert REASON in _failure_message(instance, dead.run_id)
    assert queued_now is not None and queued_now.status == S.SUCCESS, log


def _wait(instance: dg.DagsterInstance, run_id: str, done: Callable[[dg.DagsterRun], bool], log: Path) -> dg.DagsterRun:
    deadline = time.monotonic() + 2 * WAIT_S
    while time.monotonic() < deadline:
        run = instance.get_run_by_id(run_id)
        if run is not None and done(run):
            return run
        time.sleep(0.5)
    raise AssertionError(f"run {run_id[:8]}: {run.status if run else None}; daemon log:\n"
                         f"{log.read_text(errors='replace')[-4000:]}")


@pytest.mark.timeout(900)
def test_a_daemon_launched_run_orphaned_by_a_dead_code_server_is_marked_failed_and_the_queue_moves_on(
        deployment, tmp_path: Path) -> None:
    """The code server that started a run's worker (the default run launcher) is killed with it (SIGKILL, as in a
    machine's restart): no process is left to notice, and Dagster's run monitoring cannot ask that launcher. The
    next code server's reap_dead_runs sensor marks the run failed; the queued run it held back then runs."""
    instance, env = deployment
    started: list[subprocess.Popen[bytes]] = []
    daemon_log = tmp_path / "daemon.log"
    try:
        sync_scope_partitions(instance, ["xa", "xb", "xc"])  # the corpus sensor's work, stopped below
        server, ws = start_code_server(env, tmp_path)
        started.append(server)
        for sensor in ("corpus_sensor", "audit_automation"):
            finish(cli("sensor", "stop", sensor, *ws, env=env, cwd=tmp_path))
        for scope in ("xa", "xb"):
            finish(cli("job", "launch", "-j", "audit_scope", "--tags", json.dumps({"dagster/partition": scope}), *ws,
                       env=env, cwd=tmp_path))
        first, second = sorted(instance.get_runs(dg.RunsFilter(statuses=[S.QUEUED])),
                               key=lambda r: r.tags["dagster/partition"])
        daemon = start_daemon(ws, env, tmp_path, daemon_log)
        started.append(daemon)
        _wait(instance, first.run_id, lambda r: r.status == S.STARTED and _run_worker(instance, r.run_id) is not None,
              daemon_log)
        worker = _run_worker(instance, first.run_id)
        assert worker is not None
        os.killpg(server.pid, signal.SIGKILL)  # the code server, and with it the run's process
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker[0], signal.SIGKILL)
        server.wait()
        stop_all([daemon])
        time.sleep(1)
        run = instance.get_run_by_id(first.run_id)
        assert run is not None and run.status == S.STARTED  # orphaned: nothing left to say otherwise
        server, ws = start_code_server(env, tmp_path)  # the deployment comes back
        started.append(server)
        started.append(start_daemon(ws, env, tmp_path, tmp_path / "daemon2.log"))
        dead = _wait(instance, first.run_id, lambda r: r.is_finished, tmp_path / "daemon2.log")
        after = _wait(instance, second.run_id, lambda r: r.is_finished, tmp_path / "daemon2.log")
    finally:
        stop_all(started)
    assert dead.status == S.FAILURE
    assert f"The run worker process of this run (pid {worker[0]} on " in _failure_message(instance, first.run_id)
    [record] = instance.get_run_records(dg.RunsFilter(run_ids=[second.run_id]))
    assert record.start_time is not None  # it left the queue and ran
    assert after.status == S.SUCCESS, failures(instance, [record])


@pytest.mark.timeout(900)
def test_the_next_audit_marks_the_run_of_a_killed_one_failed(deployment, tmp_path: Path) -> None:
    instance, env = deployment
    dead = _killed_cli_audit(env, tmp_path, instance)
    done = subprocess.run([sys.executable, "-m", "claims_pipeline.cli", "audit", "--scope", "xa"], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT_S * 3)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (f"claims-pipeline: marked failed 1 run(s) whose process had ended without finishing them: "
            f"{dead.run_id[:8]}") in done.stderr
    current = instance.get_run_by_id(dead.run_id)
    assert current is not None and current.status == S.FAILURE
    assert REASON in _failure_message(instance, dead.run_id)
