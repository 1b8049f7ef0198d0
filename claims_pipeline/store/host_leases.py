"""Politeness shared across processes and machines, through the page cache's database (the `host_leases` table).

A fetch run takes an exclusive, SHORT lease on a host before its first request there, and then throttles that
host in memory as a lone process would (web/politeness.py): no database round trip per request. It renews the
lease (one small write) only when the lease left would not cover a whole request, and gives the host back once
it has nothing more for it, writing what the next holder needs: the next permitted request start, a Retry-After,
a Crawl-delay-raised interval, the circuit breaker it opened. A process that wants a host held elsewhere looks
again every POLL_S (a read, no lock) and takes it over with that state. Requests in flight across processes stay
within the host's concurrency because only the holder sends, and it starts a request only while its lease
covers the request's whole deadline plus the host's interval: when a holder is killed, nothing of it is still in
flight, nor was sent less than an interval ago, once its lease has run out, and its hosts wait at most the lease.

Times: lease ends and next starts are stored on the database's clock (engine.database_time: PostgreSQL's
clock_timestamp(), so machines' clocks may disagree; SQLite: one machine's clock). Each transaction measures
the database's time against this process's monotonic clock; the unknown round-trip part is always counted
against us (a lease is taken to end earlier, another's next start to come later), so a transfer is never early.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from sqlalchemy import Connection, Engine, RowMapping, select, update

from claims_pipeline.config.settings import FetchSettings
from claims_pipeline.store import schema
from claims_pipeline.store.engine import (
    add_columns,
    database_time,
    insert_if_missing,
    lock_schema,
    make_engine,
    write_transaction,
)
from claims_pipeline.web.politeness import CircuitBreaker, CircuitOpen, HostThrottle

log = logging.getLogger(__name__)

_T = schema.host_leases
POLL_S = 0.25  # a host held elsewhere is looked at again this often (at most): the handover's latency
MARGIN_S = 0.5  # slack between a lease check and the request's start (a busy event loop)
LINGER_S = 0.5  # a host with URLs still queued here is kept this long between requests (a page's extraction)
# The circuit breaker across runs: a run that opens a host's breaker writes when (breaker_opened_at) and under
# which routes (breaker_route). A later run meets it open for fetch.breaker_open_s after that moment, and leaves
# the record as it is (meeting it is no evidence: it does not extend it); after the window the host is half-open
# for the next run (one probe: a response closes the record, a failure opens it again, from now). A breaker opened
# under other routes (address map, allowed networks or hosts changed since) is closed: the fix gets its try at
# once. `claims-pipeline fetch --reset HOST` closes one by hand (reset_breakers).


_CHUNK = 500  # hosts per statement (under the databases' bound-parameter limits)


class _LeftState(TypedDict):
    """What a holder leaves in its host's row for the next one (database times)."""

    next_start: float
    retry_after_until: float
    interval_s: float | None
    crawl_delay: float | None
    breaker_failures: int
    breaker_note: str
    breaker_at: float
    breaker_opened_at: float
    breaker_route: str


class _HostRow(_LeftState):
    """One row of the host_leases table."""

    host: str
    holder: str | None
    lease_until: float


def _new_row(host: str) -> _HostRow:
    return _HostRow(host=host, holder=None, lease_until=0.0, next_start=0.0, retry_after_until=0.0, interval_s=None,
                    crawl_delay=None, breaker_failures=0, breaker_note="", breaker_at=0.0, breaker_opened_at=0.0,
                    breaker_route="")


def _host_row(row: RowMapping) -> _HostRow:
    return _HostRow(host=row["host"], holder=row["holder"], lease_until=row["lease_until"],
                    next_start=row["next_start"], retry_after_until=row["retry_after_until"],
                    interval_s=row["interval_s"], crawl_delay=row["crawl_delay"],
                    breaker_failures=row["breaker_failures"], breaker_note=row["breaker_note"],
                    breaker_at=row["breaker_at"], breaker_opened_at=row["breaker_opened_at"] or 0.0,
                    breaker_route=row["breaker_route"] or "")


@dataclass
class _Clock:
    """The database's time read within [m0, m1] of this process's monotonic clock."""

    db_now: float
    m0: float
    m1: float

    def to_db(self, mono: float) -> float:  # later than the truth: a next start we leave is never early
        return mono + (self.db_now - self.m0)

    def to_mono(self, db: float) -> float:  # later than the truth: a next start we take over is never early
        return db - (self.db_now - self.m1)


def _read_clock(conn: Connection) -> _Clock:
    m0 = time.monotonic()
    now = database_time(conn)
    return _Clock(now, m0, time.monotonic())


def route_of(host: str, fetch: FetchSettings) -> str:
    """A digest of the settings that decide where a request to `host` goes: its fetch.address_map entry, the
    allowed networks, and whether it is an allowed host (the fetcher uses no proxy: trust_env is off)."""
    import hashlib
    import json

    from claims_pipeline.web.transport import lookup_address_map, parse_address_map

    mapped = lookup_address_map(parse_address_map(fetch.address_map), host)
    allowed = host.lower() in {h.lower() for h in fetch.allow_hosts}
    data = json.dumps([list(mapped) if mapped else None, sorted(fetch.allow_networks), allowed])
    return hashlib.sha256(data.encode()).hexdigest()[:16]


@dataclass
class _Breaker:
    """The breaker record a holder writes: only when this run has evidence (it opened the breaker, or a response
    closed it); a run that only met an open breaker writes none."""

    failures: int
    note: str
    opened_at: float  # epoch seconds of this process's clock (0: closed)
    route: str


@dataclass
class _State:
    """What a holder leaves for the next one (monotonic times of the writing process)."""

    next_start: float
    retry_after_until: float
    interval_s: float | None
    crawl_delay: float | None
    breaker: _Breaker | None

    def row(self, clock: _Clock) -> dict[str, object]:
        def db(mono: float) -> float:  # 0: never set
            return clock.to_db(mono) if mono else 0.0

        left: dict[str, object] = dict(next_start=db(self.next_start), retry_after_until=db(self.retry_after_until),
                                       interval_s=self.interval_s, crawl_delay=self.crawl_delay)
        if self.breaker is not None:
            b = self.breaker
            # opened at an epoch time of this process: on the database's clock, as far as the two agree now
            opened = b.opened_at + (clock.db_now - time.time()) if b.opened_at else 0.0
            left.update(breaker_failures=b.failures, breaker_note=b.note, breaker_at=clock.db_now,
                        breaker_opened_at=opened, breaker_route=b.route)
        return left


def open_record(row: RowMapping | _HostRow, route: str, window_s: float, now: float) -> bool | None:
    """Is the breaker this row records open for a run routing the host by `route`: True (open), False (its window
    is over: half-open), None (closed, or opened under other routes)."""
    opened = float(row["breaker_opened_at"] or 0.0)
    if not opened or (row["breaker_route"] or "") != route:
        return None
    return now - opened < window_s


def reset_breakers(engine: Engine, hosts: list[str] | None) -> list[tuple[str, str]]:
    """Close the breakers of `hosts` (None: every host) in the shared record; returns (host, what was closed) of
    each open one closed."""
    closed: list[tuple[str, str]] = []
    with write_transaction(engine) as conn:
        stmt = select(_T.c.host, _T.c.breaker_opened_at, _T.c.breaker_failures, _T.c.breaker_note)
        if hosts is not None:
            stmt = stmt.where(_T.c.host.in_([h.lower() for h in hosts]))
        for host, opened, failures, note in conn.execute(stmt).all():
            if opened:
                since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(opened))
                closed.append((host, f"open since {since} after {failures} failures (last: {note})"))
        targets = [h for h, _ in closed]
        for i in range(0, len(targets), _CHUNK):
            conn.execute(update(_T).where(_T.c.host.in_(targets[i:i + _CHUNK]))
                         .values(breaker_opened_at=0.0, breaker_failures=0, breaker_note="", breaker_route=""))
    return closed


class HostLeases:
    """One fetch run's side of the shared host state: ``Fetcher(settings, host_leases=HostLeases(engine, fetch))``.

    The table is created with the rest of the cache (PageCache); ``for_url`` creates it for a bare database."""

    def __init__(self, engine: Engine, fetch: FetchSettings) -> None:
        self.engine = engine
        self.fetch = fetch
        self.token = uuid.uuid4().hex  # this run's name in the holder column
        self._leases: list[HostLease] = []
        self._to_release: dict[str, HostLease] = {}  # idle hosts waiting for the next release transaction
        self._releasing = asyncio.Lock()

    @classmethod
    def for_url(cls, db_url: str, fetch: FetchSettings) -> HostLeases:
        engine = make_engine(db_url)
        with write_transaction(engine) as conn:
            lock_schema(conn)
            _T.create(conn, checkfirst=True)
            add_columns(conn, _T, schema.HOST_LEASE_ADDED)
        return cls(engine, fetch)

    def lease(self, host: str, throttle: HostThrottle, breaker: CircuitBreaker,
              has_work: Callable[[], bool]) -> HostLease:
        made = HostLease(self, host, throttle, breaker, has_work)
        self._leases.append(made)
        return made

    async def take_many(self, hosts: list[str]) -> None:
        """The run's start: every host of these free now is taken in one transaction, instead of one each (a
        lone process's only database work before its first request on each host). The others queue up later."""
        leases = {lease.host: lease for lease in self._leases if lease.host in set(hosts) and lease.until is None}
        if not leases:
            return
        lengths = {host: lease._length() for host, lease in leases.items()}
        try:
            got = await asyncio.to_thread(self._take_many, lengths)
        except Exception:  # each host is then taken on its own, where an error is the URL's to report
            log.exception("host leases: cannot take the run's hosts at once")
            return
        for host, (row, clock) in got.items():
            leases[host].until = clock.m0 + lengths[host]
            leases[host]._take_over(row, clock)

    async def release_all(self) -> None:
        """End of the run: every host still held is given back, in one transaction (a failure leaves them to
        run out)."""
        leases, self._leases = self._leases, []
        busy = []
        for lease in leases:
            if lease._releaser is None or lease._releaser.done():
                continue
            if lease._lingering:  # only sleeping: the release below covers it
                lease._releaser.cancel()
            else:  # writing: a cancelled write might never run, with the host marked as given back
                busy.append(lease._releaser)
        await asyncio.gather(*busy, return_exceptions=True)
        self._to_release.update({lease.host: lease for lease in leases if lease.until is not None})
        await self._flush_releases()

    async def _release_soon(self, lease: HostLease) -> None:
        """Hosts given back at about the same moment (a run's end) share one transaction: the first caller
        writes all that queued up while it waited for the thread."""
        self._to_release[lease.host] = lease
        await self._flush_releases()

    async def _flush_releases(self) -> None:
        async with self._releasing:
            batch, self._to_release = self._to_release, {}
            locked: list[HostLease] = []
            states: dict[str, _State] = {}
            try:
                for item in batch.values():
                    # its lock held through the write: a hold() meanwhile waits, then takes the host afresh
                    await item._lock.acquire()
                    locked.append(item)
                    if item.until is not None and not item._throttle.users:
                        item.until = None
                        states[item.host] = item._state()
                if states:  # shielded: once the hosts are marked as given back, the write must happen
                    await asyncio.shield(asyncio.to_thread(self._release_many, states))
            except Exception:  # the leases then run out by themselves
                log.exception("host leases: cannot give hosts back")
            finally:
                for item in locked:
                    item._lock.release()

    # ---- transactions (run in a worker thread) -------------------------------------------------------
    def _take(self, host: str, length: float) -> tuple[_HostRow, _Clock] | float:
        """Hold ``host`` for ``length`` seconds: (the row as left, the clock) or, while another run holds it, the
        seconds to wait before looking again."""
        with self.engine.connect() as conn:  # a look without a lock: waiting costs the others no write lock
            clock = _read_clock(conn)
            row = conn.execute(select(_T).where(_T.c.host == host)).mappings().first()
            conn.rollback()
        if row is not None and (wait := self._held_elsewhere(row, clock)) is not None:
            return wait
        with write_transaction(self.engine) as conn:
            insert_if_missing(conn, _T, _new_row(host))
            # FOR UPDATE: PostgreSQL's row lock; SQLite's BEGIN IMMEDIATE already holds the file's write lock
            row = conn.execute(select(_T).where(_T.c.host == host).with_for_update()).mappings().one()
            clock = _read_clock(conn)
            if (wait := self._held_elsewhere(row, clock)) is not None:
                return wait
            conn.execute(update(_T).where(_T.c.host == host).values(holder=self.token,
                                                                     lease_until=clock.db_now + length))
        return _host_row(row), clock

    def _take_many(self, lengths: dict[str, float]) -> dict[str, tuple[_HostRow, _Clock]]:
        hosts = sorted(lengths)
        taken: dict[str, tuple[_HostRow, _Clock]] = {}
        with write_transaction(self.engine) as conn:
            for i in range(0, len(hosts), _CHUNK):
                chunk = hosts[i:i + _CHUNK]
                insert_if_missing(conn, _T, [_new_row(h) for h in chunk])
                rows = conn.execute(select(_T).where(_T.c.host.in_(chunk)).order_by(_T.c.host)
                                    .with_for_update()).mappings().all()
                clock = _read_clock(conn)
                for row in rows:
                    # an open breaker is left to hold(), which says so
                    open_breaker = open_record(row, route_of(row["host"], self.fetch), self.fetch.breaker_open_s,
                                               clock.db_now)
                    if self._held_elsewhere(row, clock) is None and not open_breaker:
                        taken[row["host"]] = (_host_row(row), clock)
            for length in set(lengths[h] for h in taken):
                mine = [h for h in taken if lengths[h] == length]
                for i in range(0, len(mine), _CHUNK):
                    conn.execute(update(_T).where(_T.c.host.in_(mine[i:i + _CHUNK]))
                                 .values(holder=self.token, lease_until=_read_clock(conn).db_now + length))
        return taken

    def _release_many(self, states: dict[str, _State]) -> None:
        with write_transaction(self.engine) as conn:
            clock = _read_clock(conn)
            for host, state in states.items():
                conn.execute(update(_T).where(_T.c.host == host, _T.c.holder == self.token)
                             .values(holder=None, lease_until=clock.db_now, **state.row(clock)))

    def _held_elsewhere(self, row: RowMapping, clock: _Clock) -> float | None:
        lease_until = float(row["lease_until"])
        if row["holder"] is None or row["holder"] == self.token or lease_until <= clock.db_now:
            return None
        return min(POLL_S, lease_until - clock.db_now)

    def _renew(self, host: str, length: float, state: _State) -> _Clock | None:
        """Extend our lease (and leave the state so far, should we be killed); None when it is no longer ours."""
        with write_transaction(self.engine) as conn:
            clock = _read_clock(conn)
            done = conn.execute(update(_T).where(_T.c.host == host, _T.c.holder == self.token)
                                .values(lease_until=clock.db_now + length, **state.row(clock)))
        return clock if done.rowcount == 1 else None


class HostLease:
    """One host's lease for one run, used by that host's HostThrottle (its ``lease``): see the module's doc."""

    def __init__(self, leases: HostLeases, host: str, throttle: HostThrottle, breaker: CircuitBreaker,
                 has_work: Callable[[], bool]) -> None:
        self._leases, self.host = leases, host
        self._throttle, self._breaker, self._has_work = throttle, breaker, has_work
        self._route = route_of(host, leases.fetch)
        self.until: float | None = None  # monotonic end of the lease we hold (never later than the truth)
        self._lock = asyncio.Lock()  # one database step of this host at a time
        self._releaser: asyncio.Task[None] | None = None
        self._lingering = False  # the releaser waits out LINGER_S first

    def _need(self) -> float:
        """How much lease a request started now needs: its wait for the send turn (at most an interval), its
        deadline, then the host's interval after it."""
        return self._leases.fetch.request_timeout_s + 2 * self._throttle.interval_s + MARGIN_S

    def _length(self) -> float:
        return max(self._leases.fetch.host_lease_s, 2 * self._need())

    def covers(self) -> bool:
        return self.until is not None and time.monotonic() + self._need() <= self.until

    async def hold(self, throttle: HostThrottle) -> None:
        async with self._lock:
            if self.covers():
                return
            if self.until is not None:  # ours but running short: renew (a killed run would leave this state)
                length = self._length()
                clock = await asyncio.to_thread(self._leases._renew, self.host, length, self._state())
                if clock is not None:
                    self.until = clock.m0 + length
                    return
                self.until = None  # it ran out and another run took it meanwhile: queue up like anyone
            while True:  # bounded by the run's deadline (the fetcher's timeout around each URL)
                length = self._length()
                got = await asyncio.to_thread(self._leases._take, self.host, length)
                if not isinstance(got, float):
                    break
                if throttle._on_wait is not None:
                    throttle._on_wait(self.host, got)
                await asyncio.sleep(got)
            row, clock = got
            self.until = clock.m0 + length
            self._take_over(row, clock)
            if self._breaker.open:  # by this run (a wait it cannot afford, failures), or remembered from another
                raise CircuitOpen(self._breaker.note() + (" (opened by another run)" if self._breaker.remembered else ""))

    def _take_over(self, row: _HostRow, clock: _Clock) -> None:
        """What the last holder left, merged into our throttle and breaker (never loosening them)."""
        t = self._throttle
        t.next_start = max(t.next_start, clock.to_mono(row["next_start"]), clock.to_mono(row["retry_after_until"]))
        t.retry_after_until = max(t.retry_after_until, clock.to_mono(row["retry_after_until"]))
        if row["interval_s"] is not None and row["interval_s"] > t.interval_s:
            t.interval_s, t.crawl_delay = row["interval_s"], row["crawl_delay"]
        # a breaker another run opened (under these routes): open until its window is over, then one probe. The
        # count of failures short of opening is each run's own (one run's blip on a URL never adds up to another's)
        state = open_record(row, self._route, self._leases.fetch.breaker_open_s, clock.db_now)
        if state is not None:
            opened = float(row["breaker_opened_at"]) - (clock.db_now - time.time())  # on this process's clock
            self._breaker.remember(opened, int(row["breaker_failures"]), str(row["breaker_note"]),
                                   window_over=not state)

    def _state(self) -> _State:
        t, b = self._throttle, self._breaker
        raised = t.crawl_delay is not None
        # what this run knows of the host: it opened the breaker, or got an answer (closed); else nothing to say
        # (it met an open one and refused, or a half-open one whose probe it never sent)
        breaker = None
        if b.opened_at is not None and not b.remembered and not b.tripped:
            breaker = _Breaker(b.failures, b.last_failure, b.opened_at, self._route)
        elif not b.open and not b.probe and not b.failures:
            breaker = _Breaker(0, "", 0.0, "")
        return _State(t.earliest_start(), t.retry_after_until, t.interval_s if raised else None,
                      t.crawl_delay, breaker)

    def idle(self, throttle: HostThrottle) -> None:
        """No request of ours waits for or is in flight on the host: give it back, at once when no URL of the host
        is left here, else after LINGER_S (the next URL is usually on its way: a page's text being extracted)."""
        if self.until is None:
            return
        linger = self._has_work()
        if self._releaser is not None and not self._releaser.done():
            if linger or not self._lingering:
                return
            self._releaser.cancel()  # the host's last worker is done: no need to wait out the linger
        self._lingering = linger
        self._releaser = asyncio.get_running_loop().create_task(self._release_when_idle(linger))

    async def _release_when_idle(self, linger: bool) -> None:
        if linger:
            await asyncio.sleep(LINGER_S)
        self._lingering = False
        await self.release()

    async def release(self) -> None:
        """Give the host back, if we hold it and nothing of ours uses it (with the run's other idle hosts)."""
        if self.until is not None and not self._throttle.users:
            await self._leases._release_soon(self)
