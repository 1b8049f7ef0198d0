"""The event loop a fetch run gets: uvloop where it is installed and allowed, asyncio's own otherwise.

Why uvloop: a warm audit is hundreds of small conditional requests, and per request the loop's own work
(selector calls, callbacks, transports) is a visible share of the CPU; libuv's loop does it in C. The fetcher
uses only public asyncio APIs (create_connection, start_tls, timeouts), so it runs the same on either loop;
``fetch.event_loop: asyncio`` turns uvloop off.

Either loop stops when the run is asked to (claims_pipeline/common/stopping.py): the coroutine is cancelled, its
``finally`` blocks run (what was fetched is recorded, the hosts are given back), and ``run`` raises
StopRequested.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from claims_pipeline.common import stopping

T = TypeVar("T")
LoopChoice = Literal["auto", "uvloop", "asyncio"]


def loop_factory(choice: LoopChoice = "auto") -> Callable[[], asyncio.AbstractEventLoop]:
    if choice == "asyncio":
        return asyncio.new_event_loop
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise RuntimeError("fetch.event_loop is 'uvloop' but uvloop is not installed (pip install uvloop)") from None
        return asyncio.new_event_loop
    return uvloop.new_event_loop


def run(coro: Coroutine[Any, Any, T], choice: LoopChoice = "auto") -> T:
    """asyncio.run on the chosen loop, also when the caller already runs an event loop (then in a helper
    thread, since a thread runs one loop at a time). Raises StopRequested when a stop is asked meanwhile (a
    signal in the main thread, or stopping.request from another)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if stopping.requested():  # asked before the loop started: nothing runs (the coroutine is closed unrun)
            coro.close()
            stopping.check()
        with stopping.signals_heard(), asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
            try:
                return runner.run(_stoppable(coro))
            except asyncio.CancelledError:
                if stopping.requested():
                    raise stopping.StopRequested(stopping.reason()) from None
                raise
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        future: concurrent.futures.Future[T] = pool.submit(run, coro, choice)
        return future.result()


async def _stoppable(coro: Coroutine[Any, Any, T]) -> T:
    """The coroutine, cancelled (from whichever thread asks) when a stop is asked."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()

    def cancel() -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    with stopping.on_request(cancel):
        return await coro
