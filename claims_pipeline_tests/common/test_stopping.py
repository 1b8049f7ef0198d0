"""A stop reaches every long wait of the core (claims_pipeline/common/stopping.py, issue 26): the fetch loop (asyncio and
uvloop), the priors pool, the judge's requests; from another thread (the CLI's main thread) and from a signal
handled in the main thread (a Dagster run worker), whose handler then gets the signal. Real fixture web, real
scripted judge server, real pool of worker processes, real signals."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest

from claims_pipeline.common import stopping
from claims_pipeline.common.work_pool import map_chunks
from claims_pipeline.judge.runner import run_judge
from claims_pipeline.judge.verdict_cache import VerdictCache
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.cache import PageCache
from claims_pipeline.web import event_loop
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_demo.scripted_judge import Answer, ScriptedJudgeServer
from claims_pipeline_tests.judge.engine_helpers import item, provider_for, settings_for
from claims_pipeline_tests.support.fixture_settings import fixture_settings

BOUND_S = 10.0  # far above what a stop takes; far below what the stopped work would have taken


@pytest.fixture(autouse=True)
def unstopped() -> Iterator[None]:
    stopping.reset()
    yield
    stopping.reset()


def stopped_in_a_thread(work: Callable[[], Any], ready: Callable[[], bool]) -> tuple[BaseException | None, float]:
    """work() in a thread; once ready(), a stop is asked from this (the main) thread. (what it raised, seconds
    from the stop to its end)."""
    outcome: dict[str, BaseException] = {}

    def target() -> None:
        try:
            work()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    end = time.monotonic() + 60
    while not ready():
        assert thread.is_alive() and time.monotonic() < end, f"the work never reached the moment: {outcome!r}"
        time.sleep(0.02)
    asked = time.monotonic()
    stopping.request("stop asked by the test")
    thread.join(60)
    assert not thread.is_alive()
    return outcome.get("error"), time.monotonic() - asked


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_fetch_stops_mid_run_and_keeps_what_it_fetched(tmp_path, loop):
    with FixtureWeb() as web:
        settings = fixture_settings(web, tmp_path / "home", concurrency=1, event_loop=loop)
        urls = [web.url("stop.fixture", f"/_/slow?delay=1&n={i}") for i in range(12)]  # 12 s one at a time

        def started() -> bool:
            return sum("/_/slow" in e["path"] for e in web.requests(settle_s=0)) >= 2

        error, took = stopped_in_a_thread(lambda: refresh_pages(settings.page_fetching, urls), started)  # its own cache
        assert isinstance(error, stopping.StopRequested) and error.reason == "stop asked by the test"
        assert took < BOUND_S, took
        with PageCache.at(settings.page_cache) as cache:
            kept = cache.states(urls, with_text=False)
        assert 1 <= len(kept) < len(urls)  # what came back before the stop is recorded, the rest was not fetched
        assert len([e for e in web.requests() if "/_/slow" in e["path"]]) < len(urls)


def _slow_scopes(chunk: list[str], done: str) -> list[str]:
    for scope in chunk:
        stopping.check()  # as the priors step's priors_of_chunk (steps/priors.py): in a worker, the pool's relay
        time.sleep(0.25)
        open(os.path.join(done, scope), "w").close()
    return list(chunk)


def test_the_pool_takes_no_chunk_after_a_stop_and_its_workers_stop_too(tmp_path):
    done = tmp_path / "done"
    done.mkdir()
    scopes = [f"s{i:03d}" for i in range(96)]  # 24 s of work on 2 processes, in chunks of 6 scopes (1.5 s)
    chunks = [scopes[i:i + 6] for i in range(0, 96, 6)]
    error, took = stopped_in_a_thread(lambda: map_chunks(_slow_scopes, chunks, str(done), 2),
                                      lambda: len(os.listdir(done)) >= 4)
    assert isinstance(error, stopping.StopRequested), error
    assert took < BOUND_S, took
    after = len(os.listdir(done))
    time.sleep(1.0)  # a worker still at work would go on writing
    assert len(os.listdir(done)) == after < len(scopes) // 2, (after, len(os.listdir(done)))
    assert not [p for p in psutil.Process().children() if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_the_judges_requests_are_cancelled_and_nothing_half_done_is_cached(tmp_path):
    items = [item(n) for n in range(1, 5)]
    with ScriptedJudgeServer() as srv:
        for it in items:
            srv.script(it.id, Answer(fault="hang", hang_s=30))
        js = settings_for(srv, request_timeout_s=60, max_retries=0, concurrency=4)
        def judge() -> None:
            with VerdictCache(tmp_path / "v.sqlite") as cache:
                run_judge(items, provider_for(js), js, cache)

        error, took = stopped_in_a_thread(judge, lambda: srv.count >= 4)
        assert isinstance(error, stopping.StopRequested), error
        assert took < BOUND_S, took
    with VerdictCache(tmp_path / "v.sqlite") as cache:  # reopened: no answer was stored for a cancelled request
        assert len(cache) == 0


class DagstersInterrupt(BaseException):
    """Stands for the interrupt Dagster's handler raises in a step (DagsterExecutionInterruptedError)."""


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_signal_in_the_main_thread_stops_the_loop_then_reaches_the_handler_that_was_there(loop):
    cleaned: list[str] = []

    async def long_fetch() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.1)  # the fetch's own clean-up (recording, giving hosts back) runs to its end
            cleaned.append("done")

    def dagsters_handler(_signum: int, _frame: object) -> None:
        raise DagstersInterrupt()

    before = {sig: signal.signal(sig, dagsters_handler) for sig in stopping.STOP_SIGNALS}
    try:
        for sig in stopping.STOP_SIGNALS:
            timer = threading.Timer(0.3, os.kill, (os.getpid(), sig))
            timer.start()
            started = time.monotonic()
            with pytest.raises(DagstersInterrupt):
                event_loop.run(long_fetch(), loop)
            assert time.monotonic() - started < BOUND_S
            timer.join()
            assert signal.getsignal(sig) is dagsters_handler  # given back
        assert cleaned == ["done", "done"]
        assert not stopping.requested()  # the stop was the block's; the handler decides what stops next
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
