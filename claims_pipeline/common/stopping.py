"""Stopping a run when told to: SIGINT (Ctrl-C), SIGTERM (a scheduler, systemd, Kubernetes) or a Dagster run
termination. A stop is asked once for the whole process (``request``); every long wait of the core looks at it
and ends: the fetch loop is cancelled (its politeness waits with it), the priors pool hands out no more work,
the judge's requests are cancelled, a report stops before its next file. What was recorded stays recorded and
what was being written is written whole or not at all, so the next run resumes. The stopped code raises
``StopRequested``.

Two ways a stop arrives:

- the CLI runs its Dagster run in a worker thread and keeps the main thread for signals: its handlers call
  ``request`` and the core, in the worker thread, hears it through ``on_request`` callbacks;
- a Dagster run worker (a run launched from the UI) runs the steps in its main thread under Dagster's own
  handlers, which raise Dagster's interrupt wherever the step is. Python cannot deliver that exception into an
  event loop's callbacks (asyncio logs it and goes on; uvloop too), so the fetch loop listens itself
  (``signals_heard``): the signal cancels the loop cleanly, then goes on to the handler that was there.

No Dagster here: the core knows only that it was asked to stop.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequested(KeyboardInterrupt):
    """The run was asked to stop. A KeyboardInterrupt, as Ctrl-C's own: no ``except Exception`` meant for one bad
    page or claim swallows it, and Dagster records the step as interrupted (the run as canceled when its
    termination was asked)."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason or "stop requested")
        self.reason = reason or "stop requested"


class CommandStopped(Exception):
    """A command's run ended because it was stopped; exit_code: 128 + the signal (130 SIGINT, 143 SIGTERM), or 1
    for a stop asked otherwise (a termination from Dagster)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


_lock = threading.Lock()
_event = threading.Event()
_reason = ""
_signum: int | None = None
_callbacks: dict[int, Callable[[], None]] = {}
_ids = itertools.count()


def request(reason: str, signum: int | None = None) -> None:
    """Ask every long wait of this process to end (safe from a signal handler and from any thread); `signum`:
    the signal that asked, when one did (the command's exit status says which)."""
    global _reason, _signum
    with _lock:
        if _event.is_set():
            return
        _reason, _signum = reason, signum
        _event.set()
        callbacks = list(_callbacks.values())
    for callback in callbacks:
        with contextlib.suppress(Exception):  # one listener that cannot be told must not keep the others waiting
            callback()


def requested() -> bool:
    return _event.is_set()


def reason() -> str:
    return _reason


def signal_received() -> int | None:
    """The signal that asked the stop (None: no stop, or one asked otherwise, e.g. a Dagster termination)."""
    return _signum if _event.is_set() else None


def exit_code() -> int:
    """What a stopped command exits with: 128 + the signal, as a shell reports a process a signal ended."""
    signum = signal_received()
    return 128 + signum if signum else 1


def stopped_message() -> str:
    return (f"stopped ({reason() or 'interrupted'}): what was done is kept and the cache is consistent; "
            "the next run resumes")


def reset() -> None:
    """Forget a stop (a new run in the same process starts unstopped)."""
    global _reason, _signum
    with _lock:
        _event.clear()
        _reason, _signum = "", None


def check() -> None:
    """Raise StopRequested when a stop was asked."""
    if _event.is_set():
        raise StopRequested(_reason)


def sleep(seconds: float) -> None:
    """time.sleep that ends with StopRequested as soon as a stop is asked."""
    if _event.wait(max(0.0, seconds)):
        raise StopRequested(_reason)


@contextlib.contextmanager
def on_request(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` (from whichever thread asks) when a stop is asked while the block runs; at once when one
    was asked already. The callback must be quick and thread-safe (``loop.call_soon_threadsafe``, an Event)."""
    key = next(_ids)
    with _lock:
        _callbacks[key] = callback
        already = _event.is_set()
    if already:
        callback()
    try:
        yield
    finally:
        with _lock:
            _callbacks.pop(key, None)


class _Heard:
    signum: int | None = None


@contextlib.contextmanager
def signals_heard() -> Iterator[_Heard]:
    """In the main thread: SIGINT and SIGTERM ask a stop while the block runs, and once it has ended (cleanly:
    the stop was obeyed), the signal goes on to the handler that was installed before, as if it had just come:
    Dagster's raises its interrupt, Python's default SIGINT handler KeyboardInterrupt, SIGTERM's default ends
    the process. Elsewhere (another thread cannot install handlers) it does nothing: the stop then comes
    through ``request``."""
    heard = _Heard()
    if threading.current_thread() is not threading.main_thread():
        yield heard
        return
    previous: dict[signal.Signals, Any] = {}

    def handler(signum: int, _frame: FrameType | None) -> None:
        if heard.signum is None:
            heard.signum = signum
            request(f"{signal.Signals(signum).name} received", signum)

    try:
        for sig in STOP_SIGNALS:
            before = signal.getsignal(sig)
            if before is signal.SIG_IGN or before is None:  # ignored (nohup) or not set from Python: left alone
                continue
            previous[sig] = before
            signal.signal(sig, handler)
        try:
            yield heard
        except BaseException:
            if heard.signum is None:
                raise
            # the block stopped for the signal it heard (StopRequested, a cancelled loop): passed on below
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
    if heard.signum is not None:
        _pass_on(heard.signum, previous.get(signal.Signals(heard.signum)))


def _pass_on(signum: int, before: Any) -> None:
    """The signal a block heard, now given to the handler that was there before it."""
    reset()  # this block's stop is over; whoever handles the signal now decides what stops next
    if callable(before):
        before(signum, None)  # Dagster's handler raises its interrupt; Python's SIGINT handler KeyboardInterrupt
        raise StopRequested(f"{signal.Signals(signum).name} received")  # a handler that only took note of it
    if before == signal.SIG_DFL:
        signal.raise_signal(signum)  # the default action: the process ends, as it would have
    raise StopRequested(f"{signal.Signals(signum).name} received")
