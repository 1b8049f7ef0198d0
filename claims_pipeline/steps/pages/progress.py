"""Progress of a fetch run: the events the core reports, and a terminal display of them.

The core (pages.refresh_pages) reports through a plain callable that takes one FetchEvent; the default reports
nothing. No Dagster here, and rich is imported only when a display is made.

- "start": a run begins; ``total`` URLs are to be fetched (those served from the cache are not counted).
- "page": one page came back (``done`` of ``total``, its ``host`` and FetchStatus value in ``status``).
- "wait": a request to ``host`` waits ``wait_s`` seconds before it may start (the host's interval, a
  Crawl-delay, a Retry-After, or the backoff before a retry).
- "end": the run is over (also when it stopped early).

FetchProgressDisplay draws them on a terminal with rich (pages fetched of total, hosts waiting and for how long)
and draws nothing when stderr is not a terminal (a pipe, a file), TERM is dumb, or CI is set; there, a wait of
LONG_WAIT_S or more is said in one line as it begins (a log, a journal: a run that seems stuck says why). Use:

    with FetchProgressDisplay() as show:
        refresh_pages(settings.page_fetching, urls, progress=show)

Events come from the fetch run's event-loop thread: a callback must be quick and must not block.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from claims_pipeline.common.text_safety import terminal_escaped

EventKind = Literal["start", "page", "wait", "end"]
MAX_HOSTS_SHOWN = 4  # waiting hosts listed under the bar; the rest are counted
LONG_WAIT_S = 10.0  # off a terminal, a wait at least this long is said in a line


@dataclass(frozen=True, slots=True)
class FetchEvent:
    kind: EventKind
    done: int = 0  # pages back so far in this run
    total: int = 0  # pages this run fetches
    host: str = ""
    wait_s: float = 0.0
    status: str = ""


ProgressCallback = Callable[[FetchEvent], None]


def no_progress(event: FetchEvent) -> None:
    """The default: report nothing."""


# The display a command installed for its whole process. `audit` and `worklist` fetch inside Dagster steps run
# in-process, and a resource carries only configuration, no callable: so a fetch run with no callback of its own
# reports to this one (none installed: nothing).
_installed: ProgressCallback | None = None


@contextlib.contextmanager
def installed(callback: ProgressCallback) -> Iterator[ProgressCallback]:
    """Every fetch run of this process reports to `callback` while the block runs."""
    global _installed
    previous, _installed = _installed, callback
    try:
        yield callback
    finally:
        _installed = previous


def current() -> ProgressCallback:
    return _installed or no_progress


def _ci() -> bool:
    # CI services set CI=true; some also set FORCE_COLOR, which would make rich animate a bar in the job's log
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


class FetchProgressDisplay:
    """A ProgressCallback that draws on stderr while used as a context manager; silent off a terminal.

    Several runs in one display add up (a command that refreshes scope after scope shows one bar)."""

    def __init__(self, console: Any = None, *, label: str = "fetching") -> None:
        from rich.console import Console

        self.console = console if console is not None else Console(stderr=True)
        self.enabled = self.console.is_terminal and not self.console.is_dumb_terminal and not _ci()
        self._label = label
        self._lock = threading.Lock()
        self._waits: dict[str, float] = {}  # host -> monotonic time its current wait ends
        self._said: dict[str, float] = {}  # host -> end of the long wait last said (off a terminal)
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> FetchProgressDisplay:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            display = self

            class _WithWaits(Progress):  # rich's documented way to add lines under the bars
                def get_renderables(self) -> Iterable[Any]:
                    yield self.make_tasks_table(self.tasks)
                    line = display.waits_line()
                    if line:
                        from rich.text import Text

                        yield Text(line, style="dim")  # Text, not markup: host names are shown as they are

            self._progress = _WithWaits(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                        TextColumn("pages"), TimeElapsedColumn(), console=self.console,
                                        transient=True, refresh_per_second=4)
            self._task = self._progress.add_task(self._label, total=None)  # "0/?" until the run says how many
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, event: FetchEvent) -> None:
        bar = self._progress
        if event.kind == "start" and bar is not None:
            bar.update(self._task, total=(bar.tasks[0].total or 0) + event.total)
        elif event.kind == "page":
            with self._lock:
                self._waits.pop(event.host, None)
            if bar is not None:
                bar.advance(self._task)
        elif event.kind == "wait":
            until = time.monotonic() + event.wait_s
            with self._lock:
                self._waits[event.host] = until
                said = self._said.get(event.host, 0.0)
                say = bar is None and event.wait_s >= LONG_WAIT_S and until > said + 1.0  # each wait once
                if say:
                    self._said[event.host] = until
            if say:
                print(terminal_escaped(
                    f"claims-pipeline: waiting {event.wait_s:.0f} s before the next request to {event.host} (its "
                    "interval, robots.txt Crawl-delay or Retry-After; Ctrl-C stops the run)"), file=sys.stderr, flush=True)
        elif event.kind == "end":
            with self._lock:
                self._waits.clear()

    def waits_line(self) -> str:
        """'waiting: host 2.5s, other 0.8s (+3 hosts)': the hosts whose next request is held, longest first."""
        now = time.monotonic()
        with self._lock:
            for host in [h for h, until in self._waits.items() if until <= now]:
                del self._waits[host]
            waits = sorted(((until - now, host) for host, until in self._waits.items()), reverse=True)
        if not waits:
            return ""
        shown = ", ".join(f"{terminal_escaped(host)} {left:.1f}s" for left, host in waits[:MAX_HOSTS_SHOWN])
        more = len(waits) - MAX_HOSTS_SHOWN
        return f"waiting: {shown}" + (f" (+{more} hosts)" if more > 0 else "")
