"""Session-wide rules of the suite (issue 36): time limits scaled by one factor (time_scale.py), and no process
left behind, by a test (failed, timed out or passed) or by the session."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator

import psutil
import pytest

from claims_pipeline_tests.leftovers import become_subreaper, descendants, end_leftovers, reap_zombies
from claims_pipeline_tests.time_scale import ENV, TIME_SCALE, cpus, scaled


def pytest_configure(config: pytest.Config) -> None:
    # the factor read here, once, goes to xdist's workers (started after this) and to every command a test runs
    os.environ[ENV] = str(TIME_SCALE)
    # a process whose parent dies (Dagster's step processes and their `tail -F` when a command is killed) is
    # re-parented to this one, not to init: leftovers stay this process's descendants, so they can be found
    become_subreaper()


def pytest_report_header(config: pytest.Config) -> str:
    return (f"time limits × {TIME_SCALE} (${ENV}; load {os.getloadavg()[0]:.1f} on {cpus()} cores when read), "
            "processes left by a test or the session: an error")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """pytest-timeout's limit of each test (its own mark, else --timeout or the ini's), times TIME_SCALE."""
    option = config.getoption("timeout", None)
    default = float(option if option is not None else (config.getini("timeout") or 0))
    for item in items:
        mark = item.get_closest_marker("timeout")
        seconds = float(mark.args[0] if mark and mark.args else mark.kwargs.get("timeout", default) if mark else default)
        if seconds > 0:  # 0: no limit
            kwargs = {k: v for k, v in (mark.kwargs.items() if mark else ()) if k != "timeout"}
            item.add_marker(pytest.mark.timeout(scaled(seconds), **kwargs), append=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    before = frozenset(descendants())
    try:
        return (yield)
    finally:
        # what the test itself started, not what its fixtures' processes (started before, in setup) started for
        # it: checked after teardown, which may still stop them
        item.stash[_STARTED] = descendants(apart_from=before)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        end_leftovers(item.stash.get(_STARTED, []), f"{item.nodeid} left")


_STARTED = pytest.StashKey[list[psutil.Process]]()


@pytest.fixture(scope="session", autouse=True)
def _no_process_after_the_session() -> Iterator[None]:
    """Set up first, so torn down last: what no test and no fixture stopped is still running here."""
    yield
    try:
        end_leftovers(descendants(), "the session left")
    finally:
        reap_zombies()
