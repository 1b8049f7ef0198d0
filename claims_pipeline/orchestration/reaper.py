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

import os
import socket

import dagster as dg
import psutil

PID_TAG = "claims_pipeline/pid"
HOST_TAG = "claims_pipeline/host"
PROCESS_START_TAG = "claims_pipeline/process_started"
_UNFINISHED = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
_SAME_START_S = 1.0  # create times as recorded (two decimals) and as read again


def process_tags() -> dict[str, str]:
    """The tags that name this process, for a run it executes itself."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()),
            PROCESS_START_TAG: f"{psutil.Process().create_time():.2f}"}


def process_gone(pid: int, started: float | None) -> bool:
    """No process `pid` (or a zombie: killed, not yet waited for), or one started at another time than `started`
    (the pid was given to another process)."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return True
        return started is not None and abs(proc.create_time() - started) > _SAME_START_S
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:  # not ours to look at (another user's): alive, as far as we can tell
        return False


def reap_dead_runs(instance: dg.DagsterInstance, host: str | None = None) -> list[str]:
    """Mark FAILURE each unfinished run this host's CLI recorded whose process is gone; returns their ids. A run
    of another host is left alone: its process cannot be seen from here."""
    host = host or socket.gethostname()
    reaped = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=_UNFINISHED, tags={HOST_TAG: host})):
        run = record.dagster_run
        try:
            pid = int(run.tags[PID_TAG])
            started = float(run.tags[PROCESS_START_TAG]) if PROCESS_START_TAG in run.tags else None
        except (KeyError, ValueError):
            continue
        if not process_gone(pid, started):
            continue
        current = instance.get_run_by_id(run.run_id)  # it may have ended since it was listed
        if current is None or current.is_finished:
            continue
        instance.report_run_failed(current, message=(
            f"The process that executed this run (pid {pid} on {host}, a claims-pipeline command) ended without "
            "finishing it (killed, or its machine restarted): marked failed, so that the queued runs its tags held "
            "back can start. Run the audit again; what it had stored is kept."))
        reaped.append(run.run_id)
    return reaped
