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


def _children(pid: int) -> list[int] | None:
    """Linux's list of a process's children (one file per thread); None where the kernel has none."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None if pid == os.getpid() else []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.extend(int(n) for n in f.read().split())
        except FileNotFoundError:
            if pid == os.getpid() and task == str(pid):
                return None  # no children files here (CONFIG_PROC_CHILDREN off)
        except OSError:
            pass
    return found


def descendants(apart_from: frozenset[psutil.Process] = frozenset()) -> list[psutil.Process]:
    """This process's descendants, less those in `apart_from` and all they started (a fixture's server forking a
    backend for a test's connection is the fixture's). Read twice per test, so from the children files (well under
    a millisecond) rather than psutil's walk of the whole process table (15 ms on a busy machine) where they exist."""
    todo = _children(os.getpid())
    if todo is None:
        try:
            everyone = psutil.Process().children(recursive=True)
        except psutil.Error:
            return []
        kept = {p for p in everyone if p not in apart_from}
        return [p for p in kept if not _has_ancestor_in(p, apart_from)]
    found = []
    while todo:
        pid = todo.pop()
        try:
            proc = psutil.Process(pid)
        except psutil.Error:
            continue
        if proc in apart_from:
            continue
        found.append(proc)
        todo.extend(_children(pid) or [])
    return found


def _has_ancestor_in(p: psutil.Process, among: frozenset[psutil.Process]) -> bool:
    try:
        return any(a in among for a in p.parents())
    except psutil.Error:
        return False


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
