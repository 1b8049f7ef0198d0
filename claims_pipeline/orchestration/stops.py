"""A CLI run that stops when told to: SIGINT (Ctrl-C), SIGTERM, or a termination asked from Dagster (the UI's
Terminate on this run, anything that marks it CANCELING).

The run executes in a worker thread; the main thread keeps the signals. A signal asks the core to stop
(claims_pipeline/common/stopping.py: the fetch loop is cancelled, the priors stop handing out work, the judge's
requests are cancelled), marks the run CANCELING so that Dagster records it as canceled, and the command
exits 130 (SIGINT) or 143 (SIGTERM) once the run has ended. A run that has not ended STOP_GRACE_S after the
stop (a step that never looks at it), or a second signal, ends the process at once, the run recorded as
canceled first: everything the cache holds was committed whole (as after a kill), and the next run resumes.
Why a thread: Dagster replaces SIGINT and SIGTERM with its own handler in the thread that runs the job, raising
its interrupt wherever the step is; in another thread it leaves the signals alone."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import dagster as dg

from claims_pipeline.common import stopping

R = TypeVar("R")
STOP_GRACE_S = 10.0  # after a stop, how long a run may take to end on its own before the process ends it
_POLL_S = 0.1
_TERMINATION_POLL_S = 1.0  # how often the run's status is read for a termination asked from Dagster
CLI_RUN_TAG = "claims_pipeline/cli_run"  # a CLI run's token: how the stop finds the run before it has ended
_RUN_START_WAIT_S = 3.0  # a signal during Dagster's start-up waits this long at most for the run's record


def run_stoppable(instance: dg.DagsterInstance, execute: Callable[[str], R]) -> R:
    """execute(token) — one run, tagged CLI_RUN_TAG: token (Dagster picks its run id) — in a worker thread,
    obeying a stop as the module says. Raises stopping.CommandStopped once the run has ended after a stop."""
    stopping.check()  # a stop before this run (between two runs of one command): start nothing
    run_id = str(uuid.uuid4())  # the run's token
    outcome: dict[str, Any] = {}

    def work() -> None:
        # SIGINT is the main thread's; blocked here, it stays blocked in the processes this thread starts (Dagster's
        # log-capturing `tail` and its watcher script, the priors' forked workers): a Ctrl-C reaches the whole
        # process group, and they end with the run instead of each printing a KeyboardInterrupt traceback.
        # SIGTERM is not blocked: Dagster ends its `tail` with it (and Python dies of it quietly).
        if hasattr(signal, "pthread_sigmask"):  # POSIX
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            outcome["result"] = execute(run_id)
        except BaseException as exc:  # handed to the main thread, which raises it
            outcome["error"] = exc

    signals: list[int] = []

    def heard(signum: int, _frame: object) -> None:
        signals.append(signum)  # the main thread's loop asks the stop (after marking the run: no database here)

    worker = threading.Thread(target=work, name="claims-pipeline-run", daemon=True)
    replaced: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
        for sig in stopping.STOP_SIGNALS:
            before = signal.getsignal(sig)
            if before is not signal.SIG_IGN and before is not None:  # ignored on purpose (a background job's SIGINT)
                replaced[sig] = before
                signal.signal(sig, heard)
    try:
        worker.start()
        _watch(instance, run_id, worker, signals)
    finally:
        for sig, before in replaced.items():
            signal.signal(sig, before)
    if stopping.requested():
        if "result" in outcome and getattr(outcome["result"], "success", False):
            # it had done its last step when the stop came: nothing was cut; the command's next run, if any, does
            # not start (stopping.check above)
            _say(f"claims-pipeline: {stopping.reason()} as the run was ending: it completed")
            return outcome["result"]
        raise stopping.CommandStopped(stopping.stopped_message(), stopping.exit_code())
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _watch(instance: dg.DagsterInstance, run_id: str, worker: threading.Thread, signals: list[int]) -> None:
    """Wait for the worker. On a signal: mark the run CANCELING first (a step that stops before the run is marked
    would be recorded as a failure), then ask the stop, then give the run STOP_GRACE_S to end."""
    heard_at: float | None = None
    deadline: float | None = None
    next_status = time.monotonic() + _TERMINATION_POLL_S
    while worker.is_alive():
        worker.join(_POLL_S)
        now = time.monotonic()
        if signals and heard_at is None:
            heard_at = now
            _say(f"claims-pipeline: stopping ({signal.Signals(signals[0]).name} received); the run ends at its "
                 f"next safe point (at most {STOP_GRACE_S:g} s; a second signal ends it now)")
        if heard_at is not None and not stopping.requested():
            # a run still starting is waited for (briefly): marked before it stops, it is recorded as canceled
            if _mark(instance, run_id, canceling=True) or now - heard_at > _RUN_START_WAIT_S:
                stopping.request(f"{signal.Signals(signals[0]).name} received", signals[0])
        elif heard_at is None and not stopping.requested() and now >= next_status:
            next_status = now + _TERMINATION_POLL_S
            if _termination_asked(instance, run_id):
                stopping.request("the run was terminated from Dagster")
        if stopping.requested() and deadline is None:
            deadline = now + STOP_GRACE_S
        if deadline is not None and worker.is_alive() and (now >= deadline or len(signals) > 1):
            _mark(instance, run_id, canceling=False)
            why = "a second signal" if len(signals) > 1 else f"the run did not end within {STOP_GRACE_S:g} s"
            _say(f"claims-pipeline: {stopping.stopped_message()} ({why}: the process ended it)")
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(stopping.exit_code())


def _run(instance: dg.DagsterInstance, token: str) -> dg.DagsterRun | None:
    runs = instance.get_runs(filters=dg.RunsFilter(tags={CLI_RUN_TAG: token}), limit=1)
    return runs[0] if runs else None


def _termination_asked(instance: dg.DagsterInstance, run_id: str) -> bool:
    try:
        run = _run(instance, run_id)
    except Exception:  # a database that does not answer now: asked again at the next poll
        return False
    return run is not None and run.status in (dg.DagsterRunStatus.CANCELING, dg.DagsterRunStatus.CANCELED)


def _mark(instance: dg.DagsterInstance, run_id: str, *, canceling: bool) -> bool:
    """CANCELING: Dagster then ends the run as canceled (its steps were interrupted). Canceled: the run did not
    end and the process is about to; the UI's force termination records the same. False: no run yet."""
    try:
        run = _run(instance, run_id)
        if run is None:
            return False
        if run.is_finished:
            return True
        if canceling:
            if run.status != dg.DagsterRunStatus.CANCELING:
                instance.report_run_canceling(run, message=f"Stopping: {stopping.reason()}.")
        else:
            instance.report_run_canceled(run, message=f"Canceled: {stopping.reason()}; the process ended it.")
    except Exception as exc:  # the stop goes on: the run's record is the only thing missed
        _say(f"claims-pipeline: could not record the run as canceled: {type(exc).__name__}: {exc}")
    return True


def _say(line: str) -> None:
    from claims_pipeline.common.text_safety import terminal_escaped

    print(terminal_escaped(line), file=sys.stderr, flush=True)
