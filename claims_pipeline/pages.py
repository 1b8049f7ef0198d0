"""Refresh the cited pages: fetch through the polite fetcher, record every result in the page cache as it
arrives, and return each page's state. Pure library (no Dagster).

Skipping and resuming:
- force=False skips URLs whose latest fetch was usable and is younger than ttl_days (default
  settings.cache.ttl_days); they are served from the cache. force=True (the audit) fetches everything, but
  still conditionally (ETag / Last-Modified of the cached copy), so an unchanged page costs a 304, no body.
- run_id names the run. Each fetch is recorded under it the moment it arrives, so a run that is killed keeps
  what it finished; calling again with the SAME run_id fetches only the URLs not yet recorded under that run
  (resume). A new run_id (the default: a fresh one) starts over. The Dagster layer passes its run id.
- robots.txt is kept in the cache too (store/robots.py): reused without a request for
  fetch.robots_cache_hours, then re-validated conditionally; `now` is its clock as well.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Coroutine, Iterable
from datetime import datetime
from typing import Any, TypeVar

from claims_pipeline.settings import Settings
from claims_pipeline.store.cache import Basis, PageCache
from claims_pipeline.store.clock import to_utc, utc_now
from claims_pipeline.store.records import PageState
from claims_pipeline.store.robots import RobotsTable
from claims_pipeline.urls import normalize_url
from claims_pipeline.web.fetcher import Fetcher
from claims_pipeline.web.records import FetchResult

log = logging.getLogger(__name__)
T = TypeVar("T")


def unique_urls(urls: Iterable[str]) -> list[str]:
    """Normalised, deduplicated, in first-seen order; blanks dropped."""
    return list(dict.fromkeys(normalize_url(u) for u in urls if u and u.strip()))


def refresh_pages(
    settings: Settings,
    urls: Iterable[str],
    *,
    cache: PageCache | None = None,
    force: bool = True,
    now: str | datetime | None = None,
    resolver: Any = None,
    ttl_days: float | None = None,
    run_id: str | None = None,
    on_state: Callable[[PageState], None] | None = None,
) -> dict[str, PageState]:
    """Fetch what needs fetching and return {normalised url: PageState} for every URL the cache knows.

    `now` (tests move the clock) is both the TTL reference and the recorded fetch time. A URL whose result
    cannot be recorded is logged with its URL and left out; the others carry on."""
    wanted = unique_urls(urls)
    own_cache = cache is None
    cache = cache or PageCache.from_settings(settings)
    try:
        run_id = cache.start_run(run_id, now=now, url_count=len(wanted))
        skip = cache.urls_done_in_run(run_id, wanted)  # resume: already recorded under this run
        if not force:
            ttl = settings.cache.ttl_days if ttl_days is None else ttl_days
            skip |= cache.fresh_urls(wanted, ttl, now=now)
        to_fetch = [u for u in wanted if u not in skip]
        if to_fetch:
            log.info("fetching %d of %d URLs (run %s)", len(to_fetch), len(wanted), run_id)
            _run_sync(_fetch_and_record(settings, cache, to_fetch, now=now, resolver=resolver, run_id=run_id, on_state=on_state))
        cache.finish_run(run_id, now=now)
        return cache.states(wanted)
    finally:
        if own_cache:
            cache.close()


async def _fetch_and_record(
    settings: Settings,
    cache: PageCache,
    urls: list[str],
    *,
    now: str | datetime | None,
    resolver: Any,
    run_id: str,
    on_state: Callable[[PageState], None] | None,
) -> None:
    bases = cache.conditional_bases(urls)  # one query: the validators to send and what a 304 will stand for
    validators = {url: (b.etag, b.last_modified) for url, b in bases.items()}
    fixed_now = to_utc(now)
    # robots.txt is kept in the same index across runs (fetch.robots_cache_hours), on the same clock as the pages
    async with Fetcher(settings, resolver=resolver, robots_store=RobotsTable(cache.engine), robots_now=fixed_now) as fetcher:
        async for result in fetcher.fetch_many(urls, validators):
            # Record each result as it arrives (a kill keeps what is done). The write runs in a thread so the
            # fetcher's other requests keep moving while SQLite and the blob files are written.
            basis = bases.get(result.url)
            state = await asyncio.to_thread(_record_one, cache, result, fixed_now, run_id, basis, on_state is not None)
            if state is not None and on_state is not None:
                on_state(state)


def _record_one(cache: PageCache, result: FetchResult, now: datetime | None, run_id: str, basis: Basis | None,
                want_state: bool) -> PageState | None:
    """Record one result; its PageState only when a caller wants it per page (the run reads every state once
    at its end, so a plain run skips the per-page read-back and its text-blob read)."""
    when = now or to_utc(result.fetched_at) or utc_now()
    try:
        if want_state:
            return cache.record(result, now=when, run_id=run_id, basis=basis)
        cache.append(result, now=when, run_id=run_id, basis=basis)
    except Exception:  # one page that cannot be stored must not stop the run
        log.exception("could not record the fetch of %s (status %s)", result.url, result.status)
    return None


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, also when the caller already runs an event loop (then in a helper thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
