"""robots.txt per origin through protego: fetched once per run (under a lock); a 4xx means "allow all".

Unreachable (5xx, 429, a timeout, a reset) with no stored copy: RFC 9309 §2.3.1.4 asks to assume complete
disallow, so every URL of the origin is settled ROBOTS for this run (fetch.robots_unreachable: disallow, the
default; 'allow' fetches as if there were no robots.txt). A connection that cannot be opened at all (DNS,
refused, TLS) or an address the guard refuses is no such answer: the page request meets the same failure and
reports it as what it is, so it is allowed to try.

Across runs (RFC 9309 §2.4) an optional RobotsStore keeps the last answer per origin: a copy younger than the
TTL is used without a request; an older one is re-validated conditionally (If-None-Match / If-Modified-Since),
and a 304 keeps its body. What is stored: 2xx bodies and 4xx answers ("allow all"); never 5xx, 429, timeouts
or other failures (those apply to this run only, or, when an older stored copy exists, that copy is reused:
§2.4 lets a crawler keep a cached robots.txt while the file is unreachable).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol
from urllib.parse import urlsplit

from protego import Protego

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RobotsAnswer:
    """What one GET /robots.txt gave: status None on a failure, named by ``failure``; ``lost`` when that failure
    makes the file unreachable (a timeout, a reset) rather than absent."""

    status: int | None
    body: str = ""
    etag: str | None = None
    last_modified: str | None = None
    failure: str | None = None
    lost: bool = False

    @property
    def unreachable(self) -> bool:
        """RFC 9309 §2.3.1.4: a server error (5xx; 429 too, a refusal for now) or a network failure."""
        return self.lost or (self.status is not None and (self.status == 429 or 500 <= self.status < 600))


@dataclass(frozen=True)
class RobotsRecord:
    """The stored answer of one origin. fetched_at (naive UTC) is when the server last confirmed it."""

    origin: str
    status: int
    body: str
    fetched_at: datetime
    etag: str | None = None
    last_modified: str | None = None


class RobotsStore(Protocol):
    """Persistence across runs (claims_pipeline.store.robots_table.RobotsTable); blocking calls, run in a thread."""

    def load(self, origin: str) -> RobotsRecord | None: ...

    def load_many(self, origins: list[str]) -> dict[str, RobotsRecord]: ...  # optional: one query for a run

    def save(self, record: RobotsRecord) -> None: ...


# origin ("http://host:port"), validators (etag, last_modified) or None -> the answer (304 when still valid)
RobotsFetch = Callable[[str, "tuple[str | None, str | None] | None"], Awaitable[RobotsAnswer]]


@dataclass
class RobotsRules:
    parser: Protego | None  # None: no usable robots.txt, everything allowed (unless disallow_all)
    note: str
    disallow_all: bool = False  # robots.txt unreachable: nothing of this origin is fetched (note says why)

    def allows(self, url: str, agent: str) -> bool:
        if self.disallow_all:
            return False
        return True if self.parser is None else bool(self.parser.can_fetch(url, agent))

    def crawl_delay(self, agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(agent)
        return float(delay) if delay is not None else None


@functools.lru_cache(maxsize=65536)  # asked of every URL at preload and at every hop
def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def is_cacheable(status: int | None) -> bool:
    """2xx and 4xx are the site's answer; 429 is a rate limit, 5xx an outage: neither is kept."""
    return status is not None and (200 <= status < 300 or (400 <= status < 500 and status != 429))


def rules_from(status: int | None, body: str, source: str) -> RobotsRules:
    if status is None or status >= 400:
        return RobotsRules(None, f"robots.txt http {status}{source}: allow all")
    try:
        # a BOM kept in a copy stored before the fetcher stripped it would void the first group: protego keeps it
        return RobotsRules(Protego.parse(body.removeprefix("\ufeff")), f"robots.txt parsed{source}")
    except Exception as exc:
        return RobotsRules(None, f"robots.txt unparsable ({type(exc).__name__}){source}: allow all")


class RobotsCache:
    def __init__(self, fetch: RobotsFetch, *, store: RobotsStore | None = None, ttl_hours: float = 24.0,
                 now: Callable[[], datetime] = utc_now, unreachable: str = "disallow") -> None:
        """unreachable: fetch.robots_unreachable, what an unreachable robots.txt with no stored copy means."""
        self._fetch = fetch
        self._unreachable = unreachable
        self._store = store
        self._ttl = timedelta(hours=ttl_hours)
        self._now = now
        self._rules: dict[str, RobotsRules] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._preloaded: dict[str, RobotsRecord | None] = {}  # origin -> its stored copy (None: none stored)
        self._saving: set[asyncio.Task[None]] = set()

    async def preload(self, urls: list[str]) -> None:
        """Read the stored copies of every origin of a run in one query (one thread hop instead of one per
        origin). Origins it finds nothing for are known to have no copy; a failure falls back to one load each."""
        if self._store is None or not hasattr(self._store, "load_many"):
            return
        origins = sorted({origin_of(u) for u in urls})
        try:
            found = await asyncio.to_thread(self._store.load_many, origins)
        except Exception:
            log.exception("robots store: cannot read the stored copies; reading them one by one")
            return
        self._preloaded = {o: found.get(o) for o in origins}

    async def rules(self, url: str) -> RobotsRules:
        origin = origin_of(url)
        if (known := self._rules.get(origin)) is not None:  # the common case: loaded already, no lock needed
            return known
        lock = self._locks.setdefault(origin, asyncio.Lock())
        async with lock:  # one fetch per origin even when many workers ask at once
            if origin not in self._rules:
                self._rules[origin] = await self._load(origin)
        return self._rules[origin]

    async def _load(self, origin: str) -> RobotsRules:
        stored = await self._stored(origin)
        now = self._now()
        if stored is not None and timedelta(0) <= now - stored.fetched_at < self._ttl:
            return rules_from(stored.status, stored.body, " (cached)")
        # only a stored 2xx has a body a 304 could stand for; a stored 4xx is asked for afresh
        validators = (stored.etag, stored.last_modified) if stored is not None and stored.status < 300 \
            and (stored.etag or stored.last_modified) else None
        try:
            answer = await self._fetch(origin, validators)
        except Exception as exc:  # not an answer of the site (the fetcher returns those): no restrictions
            answer = RobotsAnswer(None, failure=f"unreadable ({type(exc).__name__})")
        failure = f"http {answer.status}" if answer.status is not None else answer.failure or "unreadable"
        if answer.status == 304 and validators is not None and stored is not None:
            await self._save(replace(stored, fetched_at=now, etag=answer.etag or stored.etag,
                                     last_modified=answer.last_modified or stored.last_modified))
            return rules_from(stored.status, stored.body, " (cached, 304 re-validated)")
        if is_cacheable(answer.status):
            assert answer.status is not None
            await self._save(RobotsRecord(origin, answer.status, answer.body if answer.status < 300 else "", now,
                                          answer.etag, answer.last_modified))
            return rules_from(answer.status, answer.body, "")
        if stored is not None:  # unreachable now: the last copy the site gave still applies, not refreshed
            return rules_from(stored.status, stored.body, f" (cached; re-check failed: {failure})")
        if answer.unreachable and self._unreachable == "disallow":
            return RobotsRules(None, f"robots.txt unreachable ({failure}): not fetched, as RFC 9309 asks "
                                     "(fetch.robots_unreachable); asked again next run", disallow_all=True)
        if answer.unreachable:
            return RobotsRules(None, f"robots.txt unreachable ({failure}): allow all (fetch.robots_unreachable: allow)")
        return RobotsRules(None, f"robots.txt {failure}: allow all")

    async def _stored(self, origin: str) -> RobotsRecord | None:
        if self._store is None:
            return None
        if origin in self._preloaded:
            return self._preloaded[origin]
        try:
            return await asyncio.to_thread(self._store.load, origin)
        except Exception:  # a broken store costs a request, never the run
            log.exception("robots store: cannot read the entry of %s", origin)
            return None

    async def _save(self, record: RobotsRecord) -> None:
        """Store the answer in the background: the rules are in memory already, and the host's pages must not
        wait for a database that another process holds locked (the save waits for the lock; flush() at the end
        of the run waits for the save)."""
        if self._store is None:
            return
        task = asyncio.get_running_loop().create_task(self._save_now(record))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save_now(self, record: RobotsRecord) -> None:
        assert self._store is not None
        try:
            await asyncio.to_thread(self._store.save, record)
        except Exception:
            log.exception("robots store: cannot save the entry of %s", record.origin)

    async def flush(self) -> None:
        """Wait for the answers still being stored."""
        while self._saving:
            await asyncio.gather(*self._saving)
