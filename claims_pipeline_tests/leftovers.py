"""Processes a test or the session left running: found among this process's descendants, given a moment to end on
their own, then killed and reported (issue 36: Dagster's `tail -F` compute-log processes outlived the suite when a
timed-out command was killed without its step processes)."""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable

import psutil

from claims_pipeline_tests.time_scale import scaled

PR_SET_CHILD_SUBREAPER = 36
# Dagster's compute-log watcher polls its parent each second before it stops its `tail -F`: a process that is
# ending on its own is given this long before it counts as left
GRACE_S = 3.0


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process instead of init, so descendants() still finds them."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _describe(p: psutil.Process) -> str:
    try:
        return f"pid {p.pid}: {' '.join(p.cmdline())[:200]}"
    except psutil.Error:
        return f"pid {p.pid}"


def end_leftovers(candidates: Iterable[psutil.Process], what: str) -> None:
    """Raise AssertionError naming the candidates still running after GRACE_S; every one of them, and whatever
    they started, is killed first."""
    alive = [p for p in candidates if _running(p)]
    if alive:
        _, alive = psutil.wait_procs(alive, timeout=scaled(GRACE_S))
        alive = [p for p in alive if _running(p)]
    if not alive:
        return
    named = [_describe(p) for p in alive]
    doomed = set(alive)
    for p in alive:
        try:
            doomed.update(p.children(recursive=True))
        except psutil.Error:
            pass
    for p in doomed:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(list(doomed), timeout=scaled(10))  # the killed ones that are children are reaped here
    raise AssertionError(f"{what} {len(named)} process(es) running (now killed):\n  " + "\n  ".join(named))


def reap_zombies() -> None:
    """Orphans re-parented here that have exited: no one else waits for them."""
    for p in psutil.Process().children():
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(p.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError):
            pass
