"""Runs whose process died: marked failed, so that the queue moves on.

The CLI executes its runs in its own process (execute_in_process), outside the queue and with no run worker
Dagster's run monitoring could ask about: after a `kill -9`, an out-of-memory kill or a machine restart, such a
run stays STARTED for ever, holding the queue's tag limits (claims_pipeline/cross_scope_audit: 1), so every
queued audit (the schedule's, a sensor's, the UI's) waits for it with no bound and no error. Each CLI run
therefore records its process (PROCESS_TAGS: host, pid, the process's start time, which tells a pid the system
gave again to another process), and reap_dead_runs marks FAILURE, through the instance's public API and with a
message saying why, each unfinished run recorded on this host whose process is gone. It runs when a CLI command
starts a run and in the `reap_dead_runs` sensor (defs/reaper.py), every minute in the daemon."""

from __future__ import annotations

import json
import os
import socket

import dagster as dg
import psutil

PID_TAG = "claims_pipeline/pid"
HOST_TAG = "claims_pipeline/host"
PROCESS_START_TAG = "claims_pipeline/process_started"
_GRPC_INFO_TAG = ".dagster/grpc_info"  # Dagster's hidden tag (dagster._core.storage.tags.GRPC_INFO_TAG)
_UNFINISHED = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
_SAME_START_S = 1.0  # create times as recorded (two decimals) and as read again


def process_tags() -> dict[str, str]:
    """The tags that name this process, for a run it executes itself."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()),
            PROCESS_START_TAG: f"{psutil.Process().create_time():.2f}"}


def process_gone(pid: int, started: float | None, *, born_by: float | None = None) -> bool:
    """No process `pid` (or a zombie: killed, not yet waited for), or one started at another time than `started`,
    or after `born_by` (the pid was given to another process)."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return True
        if born_by is not None and proc.create_time() > born_by + _SAME_START_S:
            return True
        return started is not None and abs(proc.create_time() - started) > _SAME_START_S
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:  # not ours to look at (another user's): alive, as far as we can tell
        return False


def reap_dead_runs(instance: dg.DagsterInstance, host: str | None = None, *, run_workers: bool = False) -> list[str]:
    """Mark FAILURE each unfinished run this host's CLI recorded whose process is gone; returns their ids. A run
    of another host is left alone: its process cannot be seen from here. run_workers (the sensor, which runs in
    the code server that starts the run workers of the default run launcher): also the daemon's runs whose run
    worker process, as its "Started process for run (pid: N)" event names it, is gone."""
    host = host or socket.gethostname()
    reaped = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=_UNFINISHED, tags={HOST_TAG: host})):
        run = record.dagster_run
        try:
            pid = int(run.tags[PID_TAG])
            started = float(run.tags[PROCESS_START_TAG]) if PROCESS_START_TAG in run.tags else None
        except (KeyError, ValueError):
            continue
        if process_gone(pid, started) and _fail(instance, run.run_id, (
                f"The process that executed this run (pid {pid} on {host}, a claims-pipeline command) ended "
                "without finishing it (killed, or its machine restarted): marked failed, so that the queued runs "
                "its tags held back can start. Run the audit again; what it had stored is kept.")):
            reaped.append(run.run_id)
    if run_workers and isinstance(instance.run_launcher, dg.DefaultRunLauncher):
        for record in instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])):
            run = record.dagster_run
            worker = None if PID_TAG in run.tags or not _launched_here(run) else _run_worker(instance, run.run_id)
            if worker is not None and process_gone(worker[0], None, born_by=worker[1]) and _fail(
                    instance, run.run_id,
                    f"The run worker process of this run (pid {worker[0]} on {host}) ended without finishing it "
                    "(killed, or its machine restarted): marked failed, so that the queued runs its tags held back "
                    "can start. Launch it again; what it had stored is kept."):
                reaped.append(run.run_id)
    return reaped


def _fail(instance: dg.DagsterInstance, run_id: str, message: str) -> bool:
    current = instance.get_run_by_id(run_id)  # it may have ended since it was listed
    if current is None or current.is_finished:
        return False
    instance.report_run_failed(current, message=message)
    return True


def _launched_here(run: dg.DagsterRun) -> bool:
    """The default run launcher asked a code server on this machine to start the run's process (the
    .dagster/grpc_info tag names the server the daemon reached): its pid means something here."""
    try:
        info = json.loads(run.tags.get(_GRPC_INFO_TAG, "{}"))
    except ValueError:
        return False
    where = str(info.get("host") or ("localhost" if info.get("socket") else "")).lower()
    return where in ("localhost", "127.0.0.1", "::1", socket.gethostname().lower())


def _run_worker(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """(pid, when the event was written) of the run's process, from its "Started process for run" event."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=50).records
    for rec in records:
        entry = rec.event_log_entry
        if not (entry.message or "").startswith("Started process for run (pid:") or entry.dagster_event is None:
            continue
        data = entry.dagster_event.engine_event_data
        pid = data.metadata.get("pid") if data is not None else None
        if pid is None:
            return None
        try:
            return int(str(pid.value)), entry.timestamp
        except (AttributeError, ValueError):
            return None
    return None
