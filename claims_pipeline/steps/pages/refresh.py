"""Refresh the cited pages: fetch through the polite fetcher, record every result in the page cache as it
arrives, and return each page's state. Pure library (no Dagster).

Skipping and resuming:
- force=False skips URLs whose latest fetch was usable and is younger than ttl_days (default
  fetching.ttl_days, the settings' cache.ttl_days); they are served from the cache. force=True (the audit)
  fetches everything, but still conditionally (ETag / Last-Modified of the cached copy), so an unchanged page
  costs a 304, no body.
- run_id names the run. Each fetch is recorded under it as it arrives (a plain 304 within
  fast304.GROUP_MAX_HOLD_S, in a group that shares one commit; the others with what else waits for the writer
  thread, in one transaction), so a run that is killed keeps what it finished; calling again with the SAME run_id fetches only the URLs not yet recorded under that run (resume).
  A new run_id (the default: a fresh one) starts over. The Dagster layer passes its run id.
- robots.txt is kept in the cache too (store/robots_table.py): reused without a request for
  fetch.robots_cache_hours, then re-validated conditionally; `now` is its clock as well.
- progress, when given, is told of the run as it goes (progress.FetchEvent: start, each page back, each
  host wait, end); the default tells nothing. progress.FetchProgressDisplay draws it on a terminal.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from claims_pipeline.common.urls import normalize_url, url_host
from claims_pipeline.config.settings import FetchSettings, PageFetching, PdfSettings
from claims_pipeline.steps.pages.progress import FetchEvent, ProgressCallback, current, no_progress
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.clock import to_utc, utc_now
from claims_pipeline.store.fast304 import NotModifiedGroup
from claims_pipeline.store.host_leases import HostLeases
from claims_pipeline.store.records import Basis, PageState
from claims_pipeline.store.robots_table import RobotsTable
from claims_pipeline.web import event_loop
from claims_pipeline.web.fetcher import Fetcher
from claims_pipeline.web.records import FetchResult, FetchStatus

log = logging.getLogger(__name__)


def unique_urls(urls: Iterable[str]) -> list[str]:
    """Normalised, deduplicated, in first-seen order; blanks dropped."""
    return list(dict.fromkeys(normalize_url(u) for u in urls if u and u.strip()))


def refresh_pages(
    fetching: PageFetching,
    urls: Iterable[str],
    *,
    cache: PageCache | None = None,
    force: bool = True,
    now: str | datetime | None = None,
    resolver: Any = None,
    ttl_days: float | None = None,
    run_id: str | None = None,
    on_state: Callable[[PageState], None] | None = None,
    with_text: bool = True,
    progress: ProgressCallback | None = None,
) -> dict[str, PageState]:
    """Fetch what needs fetching and return {normalised url: PageState} for every URL the cache knows.

    fetching: the fetcher's and PDF reader's settings and the page cache (Settings.page_fetching); cache, when
    given, is that cache already open (the caller closes it), else it is opened and closed here.

    `now` (tests move the clock) is both the TTL reference and the recorded fetch time. A URL whose result
    cannot be recorded is logged with its URL and left out; the others carry on. on_state, when given, gets
    each page's state as it is recorded, called from the cache's writer thread. with_text=False returns the
    states without their text (PageState.text None; read it by text_hash when needed). progress gets the
    run's FetchEvents on the fetch loop's thread (default: the display the command installed, progress.current());
    one that raises is logged and not called again."""
    progress = progress or current()
    wanted = unique_urls(urls)
    own_cache = cache is None
    cache = cache or PageCache.at(fetching.cache)
    if cache.reread is None:  # how this version reads stored bytes: a change of reading is no page change
        cache.reread = page_reader(fetching.fetch, fetching.pdf)
    try:
        # resume: what is already recorded under this run (asked only of a run that exists: a new run has nothing)
        resumed = run_id is not None and cache.run_info(run_id) is not None
        run_id = cache.start_run(run_id, now=now, url_count=len(wanted))
        skip = cache.urls_done_in_run(run_id, wanted) if resumed else set()
        if not force:
            ttl = fetching.ttl_days if ttl_days is None else ttl_days
            skip |= cache.fresh_urls(wanted, ttl, now=now)
        to_fetch = [u for u in wanted if u not in skip]
        unrecorded: set[str] = set()
        report = _Reporter(progress, len(to_fetch))
        report.start()
        if to_fetch:
            log.info("fetching %d of %d URLs (run %s)", len(to_fetch), len(wanted), run_id)
            try:
                event_loop.run(_fetch_and_record(fetching, cache, to_fetch, now=now, resolver=resolver, run_id=run_id,
                                                 on_state=on_state, unrecorded=unrecorded, report=report),
                               fetching.fetch.event_loop)
            finally:
                report.end()
        else:
            report.end()
        cache.finish_run(run_id, now=now)
        states = cache.states(wanted, with_text=with_text)
        # a page fetched now but not stored (a read-only or full disk, a broken index) must not be reported as
        # its previous state: it is left out, so the audit reads it as not fetched and the CLI says so
        for url in unrecorded:
            states.pop(url, None)
        return states
    finally:
        if own_cache:
            cache.close()


async def _fetch_and_record(
    fetching: PageFetching,
    cache: PageCache,
    urls: list[str],
    *,
    now: str | datetime | None,
    resolver: Any,
    run_id: str,
    on_state: Callable[[PageState], None] | None,
    unrecorded: set[str],
    report: _Reporter,
) -> None:
    bases = cache.conditional_bases(urls)  # one query: the validators to send and what a 304 will stand for
    validators = {url: (b.etag, b.last_modified) for url, b in bases.items()}
    fixed_now = to_utc(now)
    recorder = _Recorder(cache, bases, fixed_now, run_id, on_state, unrecorded)
    try:
        # A plain 304 (most of a warm run) is recorded here on the loop's thread, in a group that shares one
        # commit and never waits for a lock: cheaper than handing it to the writer thread. Anything else, a busy
        # database or a group that could not be stored goes to the writer thread.
        with cache.not_modified_recorder() as group:
            flusher = _GroupFlusher(group, recorder) if group is not None and on_state is None else None
            try:
                # robots.txt is kept in the same index across runs (fetch.robots_cache_hours), on the same clock as the pages
                # each host's politeness is shared with every run using the same cache database (fetch.host_lease_s)
                fetch = fetching.fetch
                leases = HostLeases(cache.engine, fetch) if fetch.host_lease_s > 0 else None
                async with Fetcher(fetch, fetching.pdf, resolver=resolver, robots_store=RobotsTable(cache.engine),
                                   robots_now=fixed_now, on_wait=report.wait if report.active else None,
                                   host_leases=leases) as fetcher:
                    async for result in fetcher.fetch_many(urls, validators):
                        report.page(result)
                        basis = bases.get(result.url)
                        if flusher is not None and basis is not None and result.status is FetchStatus.NOT_MODIFIED:
                            flusher.record(result, basis, _when(result, fixed_now), run_id)
                        else:
                            recorder.put(result)
            finally:
                if flusher is not None:
                    flusher.flush()  # the last group is committed (or handed over) before the writer is waited for
    finally:
        # whatever was fetched is recorded, also when the run stops early (an error, a cancel)
        await asyncio.to_thread(recorder.close)


class _Reporter:
    """Turns the run's steps into FetchEvents for a progress callback. A callback that raises is logged once and
    dropped: a display must never stop a fetch run."""

    def __init__(self, callback: ProgressCallback, total: int) -> None:
        self._callback: ProgressCallback | None = None if callback is no_progress else callback
        self.total, self.done = total, 0

    @property
    def active(self) -> bool:
        return self._callback is not None

    def start(self) -> None:
        self._emit(FetchEvent("start", 0, self.total))

    def page(self, result: FetchResult) -> None:
        self.done += 1
        if self._callback is None:  # the default: no host look-up per result on the hot path
            return
        self._emit(FetchEvent("page", self.done, self.total, host=url_host(result.url), status=result.status.value))

    def wait(self, host: str, seconds: float) -> None:
        self._emit(FetchEvent("wait", self.done, self.total, host=host, wait_s=seconds))

    def end(self) -> None:
        self._emit(FetchEvent("end", self.done, self.total))

    def _emit(self, event: FetchEvent) -> None:
        if self._callback is None:
            return
        try:
            self._callback(event)
        except Exception:
            log.exception("progress callback failed on %s; no further progress is reported", event.kind)
            self._callback = None


class _GroupFlusher:
    """Feeds plain 304s to the loop thread's NotModifiedGroup and commits an open group when it is due, also
    when no further result comes to do it (a timer on the loop). What the group hands back goes to the writer
    thread."""

    def __init__(self, group: NotModifiedGroup, recorder: _Recorder) -> None:
        self._group, self._recorder = group, recorder
        self._timer: asyncio.TimerHandle | None = None

    def record(self, result: FetchResult, basis: Basis, when: datetime, run_id: str) -> None:
        self._hand_over(self._group.record(result, basis, when, run_id))
        due = self._group.due_in()
        if due is not None and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(due, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._hand_over(self._group.flush())

    def _hand_over(self, results: list[FetchResult]) -> None:
        for result in results:
            self._recorder.put(result)


# results waiting together on the writer thread that share one transaction (cache.append_many): bounds what a
# kill can lose to what arrived in one moment, and how long another writer waits for the lock
_WRITE_BATCH = 100


class _Recorder:
    """Records each result as it arrives (a kill keeps what is done), on one writer thread: what is waiting when
    the thread comes back for more shares one transaction (at most _WRITE_BATCH; with on_state, each URL in its
    own, read back). Why a thread: the fetcher's requests keep moving while SQLite and the blob files are
    written, and handing a result over costs a queue put instead of a thread-pool round trip per URL (in a
    warm, all-304 run that round trip cost more CPU than the write itself). on_state, when given, is called on the writer thread."""

    _DONE = object()

    def __init__(self, cache: PageCache, bases: dict[str, Basis], now: datetime | None, run_id: str,
                 on_state: Callable[[PageState], None] | None, unrecorded: set[str]) -> None:
        self._cache, self._bases, self._now, self._run_id, self._on_state = cache, bases, now, run_id, on_state
        self._unrecorded = unrecorded  # URLs whose result could not be stored
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name="page-cache-writer", daemon=True)
        self._thread.start()

    def put(self, result: FetchResult) -> None:
        self._queue.put(result)

    def close(self) -> None:
        self._queue.put(self._DONE)
        self._thread.join()

    def _drain(self) -> None:
        done = False
        while not done:
            batch = [self._queue.get()]
            # what else is waiting joins it: the results that arrived together share one transaction
            while len(batch) < _WRITE_BATCH and not self._queue.empty():
                batch.append(self._queue.get())
            if batch[-1] is self._DONE:
                batch.pop()
                done = True
            if self._on_state is not None:
                for result in batch:
                    self._record_with_state(result)
            elif batch:
                self._record_together(batch)

    def _record_together(self, batch: list[FetchResult]) -> None:
        items = [(r, _when(r, self._now), self._bases.get(r.url)) for r in batch]
        try:
            failed: list[tuple[FetchResult, BaseException | None]] = list(
                self._cache.append_many(items, run_id=self._run_id))
        except Exception:  # one batch that cannot be stored must not stop the run
            log.exception("could not record %d fetches", len(batch))
            failed = [(r, None) for r in batch]
        for result, exc in failed:
            log.error("could not record the fetch of %s (status %s)", result.url, result.status, exc_info=exc)
            self._unrecorded.add(result.url)

    def _record_with_state(self, result: FetchResult) -> None:
        state = _record_one(self._cache, result, self._now, self._run_id, self._bases.get(result.url), True,
                            self._unrecorded)
        if state is not None and self._on_state is not None:
            try:
                self._on_state(state)
            except Exception:  # a caller's callback must not stop the recording of the rest
                log.exception("on_state callback failed for %s", result.url)


def _record_one(cache: PageCache, result: FetchResult, now: datetime | None, run_id: str, basis: Basis | None,
                want_state: bool, unrecorded: set[str]) -> PageState | None:
    """Record one result; its PageState only when a caller wants it per page (the run reads every state once
    at its end, so a plain run skips the per-page read-back and its text-blob read)."""
    when = _when(result, now)
    try:
        if want_state:
            return cache.record(result, now=when, run_id=run_id, basis=basis)
        cache.append(result, now=when, run_id=run_id, basis=basis)
    except Exception:  # one page that cannot be stored must not stop the run
        log.exception("could not record the fetch of %s (status %s)", result.url, result.status)
        unrecorded.add(result.url)
    return None


def page_reader(fetch: FetchSettings, pdf: PdfSettings) -> Callable[[bytes, str, str], str | None]:
    """Bytes as the fetcher stored them → the text this version extracts from them (None: no text)."""
    from claims_pipeline.web import text as text_module

    def reread(raw: bytes, content_type: str, url: str) -> str | None:
        outcome = text_module.extract_text(raw, content_type, url, fetch, pdf)
        return outcome.text if outcome.status is FetchStatus.OK else None

    return reread


def _when(result: FetchResult, now: datetime | None) -> datetime:
    """The recorded fetch time: the run's fixed clock, else when the fetch happened, else now."""
    return now or to_utc(result.fetched_at) or utc_now()
