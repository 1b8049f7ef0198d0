"""A deployment as a user runs it, for the tests that need a real daemon: a code server (`dagster api grpc`),
the `dagster` CLI or the UI's server (`dagster-webserver`, its GraphQL API) talking to it, and `dagster-daemon
run`, each a real process started and stopped here, every wait bounded."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import httpx

from claims_pipeline_tests.time_scale import scaled

BIN = Path(sys.executable).parent
WAIT_S = scaled(120)  # the bound of every wait below; the tests that use it finish well inside it
# The sensors launch runs of their own on their first tick (the corpus sensor audits every scope it has not
# seen; the automation sensor rebuilds the audit): a test that counts the runs it launched stops them first.
SENSORS = ("corpus_sensor", "audit_automation")


def cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([str(BIN / "dagster"), *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 0, out
    return out


def start(cmd: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started by start() and whatever it started (its own session)."""
    stop_all([proc])


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """Stop processes started by start(), all at once (each shuts down in seconds: in turn they added up)."""
    running = [p for p in procs if p.poll() is None]
    for proc in running:
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + scaled(30)
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, log: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"{log.stem}: nothing listened on {port} in {WAIT_S} s:\n{log.read_text()[-4000:]}")


def start_code_server(env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[bytes], list[str]]:
    """One code server, as a deployment runs it: the CLI calls and the daemon load the definitions from it,
    and it starts each run's own process for the default run launcher. Returns it and the CLI's -w arguments
    (call wait_listening(port) before using them: see code_server_port)."""
    port = free_port()
    log = cwd / "server.log"
    server = start([str(BIN / "dagster"), "api", "grpc", "-m", "claims_pipeline.definitions", "-h", "127.0.0.1",
                    "-p", str(port), "--location-name", "claims_pipeline"], env, cwd, log)
    workspace = cwd / "workspace.yaml"
    workspace.write_text("load_from:\n  - grpc_server:\n      host: 127.0.0.1\n"
                         f"      port: {port}\n      location_name: claims_pipeline\n", encoding="utf-8")
    try:
        wait_listening(port, log)
    except BaseException:
        stop(server)
        raise
    return server, ["-w", str(workspace)]


def start_webserver(ws: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """The UI's server on the code server's workspace; returns it and its port, once it answers GraphQL."""
    port = free_port()
    log = cwd / "webserver.log"
    proc = start([str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), *ws], env, cwd, log)
    try:
        wait_listening(port, log)
        graphql(port, "{ version }")
    except BaseException:
        stop(proc)
        raise
    return proc, port


def graphql(port: int, query: str, variables: dict[str, object] | None = None) -> dict[str, object]:
    """One request to the webserver's GraphQL API, as the UI sends it; the data, or an assertion naming the errors."""
    reply = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query, "variables": variables or {}},
                       timeout=scaled(60)).json()
    assert not reply.get("errors"), reply["errors"]
    return dict(reply["data"])


_SENSOR_ID = """query ($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { __typename ... on Sensor { id } } }"""
_STOP_SENSOR = """mutation ($id: String) { stopSensor(id: $id) { __typename
    ... on StopSensorMutationResult { instigationState { status } } ... on PythonError { message } } }"""


def stop_sensors(port: int, names: tuple[str, ...] = SENSORS, location: str = "claims_pipeline") -> None:
    """Stop these sensors as the UI's toggle does (before a daemon starts: they would tick at once)."""
    for name in names:
        selector = {"repositoryLocationName": location, "repositoryName": "__repository__", "sensorName": name}
        found = graphql(port, _SENSOR_ID, {"s": selector})["sensorOrError"]
        assert isinstance(found, dict) and found["__typename"] == "Sensor", found
        stopped = graphql(port, _STOP_SENSOR, {"id": found["id"]})["stopSensor"]
        assert stopped == {"__typename": "StopSensorMutationResult", "instigationState": {"status": "STOPPED"}}, stopped


def start_daemon(ws: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    return start([str(BIN / "dagster-daemon"), "run", *ws], env, cwd, log)


def failures(instance: dg.DagsterInstance, runs: list[dg.RunRecord]) -> list[str]:
    """The step and run failure messages of these runs, each named by its partition."""
    out = []
    for r in runs:
        for e in instance.get_records_for_run(r.dagster_run.run_id).records:
            entry = e.event_log_entry
            if entry.is_dagster_event and entry.dagster_event_type in (dg.DagsterEventType.STEP_FAILURE,
                                                                        dg.DagsterEventType.RUN_FAILURE):
                out.append(f"{r.dagster_run.tags.get('dagster/partition')}: {entry.message}")
    return out


def wait_runs(instance: dg.DagsterInstance, job: str, count: int, log: Path) -> list[dg.RunRecord]:
    """The job's runs once `count` of them exist and all have finished (log: the daemon's, shown on timeout)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        records = instance.get_run_records(dg.RunsFilter(job_name=job))
        if len(records) >= count and all(r.dagster_run.is_finished for r in records):
            return list(records)
        time.sleep(0.5)
    raise AssertionError(f"{job}: {count} runs not finished in {WAIT_S} s; daemon log:\n{log.read_text()[-4000:]}")
