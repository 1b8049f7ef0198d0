"""Politeness primitives: which policy a host gets, per-host throttles, the global rate, circuit breakers.

The reference politeness (docs/decisions/0001): one throttle per host that spaces request STARTS by a minimum
interval and caps concurrent requests; government hosts get a slower floor; overrides match exact or as a suffix;
Crawl-delay may only raise a host's interval (up to the longest interval settings accept). A per-host circuit
breaker besides, so a dead host does not make each of its URLs wait out its own timeouts.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Protocol

from claims_pipeline.common.urls import domain_of_pattern, is_gov_host
from claims_pipeline.config.settings import FetchSettings, HostPolicy

WaitListener = Callable[[str, float], None]  # (host, seconds): a request to host waits that long before it starts


def host_matches(host: str, domains: Iterable[str]) -> bool:
    """True when host equals one of the domains or is a subdomain of it (suffix match on a dot boundary)."""
    return domain_matcher(domains)(host)


def domain_matcher(domains: Iterable[str]) -> Callable[[str], bool]:
    """A host_matches for fixed domains, normalised once: for checks made on every request."""
    exact = frozenset(domain_of_pattern(d) for d in domains) - {""}
    suffixes = tuple("." + d for d in exact)

    def matches(host: str) -> bool:
        host = host.lower().rstrip(".")
        return host in exact or (bool(suffixes) and host.endswith(suffixes))

    return matches


def policy_for(host: str, fetch: FetchSettings) -> HostPolicy:
    """Override (exact or suffix, longest key wins) > government floor > default."""
    host = host.lower()
    best: tuple[int, HostPolicy] | None = None
    for key, policy in fetch.per_host_overrides.items():
        if host_matches(host, [key]) and (best is None or len(key) > best[0]):
            best = (len(key), policy)
    if best is not None:
        return best[1]
    return fetch.gov_host if is_gov_host(host) else fetch.default_host


def _max_interval_s() -> float:
    """The longest per-host interval the settings accept (HostPolicy.interval_ms's upper bound), in seconds."""
    bound = next(m.le for m in HostPolicy.model_fields["interval_ms"].metadata if getattr(m, "le", None) is not None)
    return bound / 1000


MAX_INTERVAL_S = _max_interval_s()


# httpcore's trace events around writing a request's head to the socket (the "trace" request extension)
SENDING, SENT, SEND_FAILED = (f"http11.send_request_headers.{e}" for e in ("started", "complete", "failed"))


class Start:
    """One booked request start, whose ``trace`` the request carries (``extensions={"trace": start.trace}``).

    Booking spaces the starts, but the bytes leave later: after a connect, or once a busy event loop gets to
    them. So the host's interval is also held at the socket: just before the head is written, the request waits
    until the host's previous head left at least the interval ago, and no two heads are written at once; the
    interval then counts from the moment the write returned. A stalled send pushes the next one back instead of
    leaving the two closer together at the server than the interval."""

    __slots__ = ("_throttle", "_turn", "_timeout", "_seconds")

    def __init__(self, throttle: HostThrottle) -> None:
        self._throttle = throttle
        self._turn = False  # holds the host's send turn (between SENDING and SENT/SEND_FAILED)
        self._timeout: asyncio.Timeout | None = None
        self._seconds = 0.0

    def deadline(self, seconds: float) -> asyncio.Timeout:
        """The request's deadline: ``seconds`` from when its bytes may leave. A wait for the send turn (at most the
        interval after the host's previous head, when that one left late) is not the server's slowness, and
        counted against the request it made overloaded runs time out and retry; the wait is bounded by the
        interval, so the deadline first allows for it."""
        self._seconds = seconds
        self._timeout = asyncio.timeout(seconds + self._throttle.interval_s)
        return self._timeout

    async def trace(self, name: str, info: object) -> None:
        if name == SENDING:
            await self._throttle._send_turn()
            self._turn = True
            if self._timeout is not None and not self._timeout.expired() and (when := self._timeout.when()) is not None:
                # never later than first allowed: the run budget capped it, and the host's lease covers it
                self._timeout.reschedule(min(when, asyncio.get_running_loop().time() + self._seconds))
        elif name in (SENT, SEND_FAILED):
            self.end(sent=name == SENT)

    def end(self, sent: bool = False) -> None:
        """Give the send turn back (also when the request stopped between the two events: cancelled)."""
        if self._turn:
            self._turn = False
            self._throttle._send_done(sent)


class HostThrottle:
    """Per-host gate: at most ``concurrency`` requests in flight and ``interval`` seconds between starts, a start
    being when the request's bytes leave (see Start)."""

    def __init__(self, concurrency: int, interval_s: float, *, host: str = "",
                 on_wait: WaitListener | None = None) -> None:
        self.concurrency = concurrency
        self.interval_s = interval_s
        self.host = host
        self._on_wait = on_wait  # on_wait: told of each wait (a progress display shows it)
        self.crawl_delay: float | None = None  # what robots.txt asked, once it raised the interval (for notes)
        self._sem = asyncio.Semaphore(concurrency)
        self._lock = asyncio.Lock()
        self.next_start = 0.0  # monotonic time before which no request may start
        self.retry_after_until = 0.0  # monotonic end of the host's last Retry-After (folded into next_start too)
        self._last_start: float | None = None
        self._sending = asyncio.Lock()  # one request head written at a time
        self.last_sent: float | None = None  # monotonic time the host's last request head left
        self.lease: HostLeaseHolder | None = None  # shared with other processes through a database, when set
        self.users = 0  # slot users (waiting or in flight): a lease is given back when none is left

    def raise_interval(self, seconds: float) -> None:
        """Crawl-delay: only ever slows a host down, and no further than the longest interval settings accept
        (a Crawl-delay of a day would otherwise hold the host's URLs until the run budget is spent)."""
        honoured = min(seconds, MAX_INTERVAL_S)
        if honoured > self.interval_s:
            self.interval_s = honoured
            self.crawl_delay = seconds
            if self._last_start is not None:  # the start booked at robots.txt used the old interval: move it
                self.next_start = max(self.next_start, self._last_start + honoured)

    def defer(self, seconds: float) -> None:
        """Retry-After from this host: hold every request to it, not only the one that was told."""
        self.retry_after_until = max(self.retry_after_until, time.monotonic() + seconds)
        self.next_start = max(self.next_start, self.retry_after_until)

    async def _send_turn(self) -> None:
        """Until this host may have a request head written (see Start); the caller writes it at once."""
        await self._sending.acquire()
        try:
            while self.last_sent is not None and (wait := self.last_sent + self.interval_s - time.monotonic()) > 0:
                await asyncio.sleep(wait)
        except BaseException:
            self._sending.release()
            raise

    def _send_done(self, sent: bool) -> None:
        if sent:  # booking is not moved: the next head waits here only as long as this one was late
            self.last_sent = time.monotonic()
        self._sending.release()

    def earliest_start(self) -> float:
        """The monotonic time before which no request of this host may start, bookings and sends both counted."""
        sent = self.last_sent + self.interval_s if self.last_sent is not None else 0.0
        return max(self.next_start, sent)

    @asynccontextmanager
    async def slot(self, gate: GlobalGate) -> AsyncIterator[Start]:
        """Enter when this host's concurrency, its interval and then the global gate allow a start; yields the
        Start, whose ``trace`` the request must carry (``extensions={"trace": start.trace}``).

        The start is booked only once the global gate is passed: booked before (while a token was still to
        come), two starts on one host could be squeezed together when the global rate is the bottleneck. The
        global place is held until the request ends. With a lease (shared politeness), the host is first made
        this process's, and what other processes left (next start, Retry-After, breaker) is taken over."""
        passed = False
        start: Start | None = None
        self.users += 1
        try:
            async with self._sem:
                try:
                    async with self._lock:  # serialise start reservations so starts are spaced exactly
                        while True:
                            if self.lease is not None:
                                await self.lease.hold(self)  # may move next_start (another process's last start)
                            # look again after each sleep: defer() (a Retry-After) may have moved next_start meanwhile
                            if (wait := self.next_start - time.monotonic()) > 0:
                                if self._on_wait is not None:
                                    self._on_wait(self.host, wait)
                                await asyncio.sleep(wait)
                                continue
                            await gate.acquire()
                            passed = True
                            if self.lease is not None and not self.lease.covers():
                                # the lease ran short while we queued at the gate (a global-rate wait can be
                                # seconds): renew it keeping the place, else every such wait would waste a token
                                # and a single process would run well below req_per_sec (bench_lease_rate.py)
                                await self.lease.hold(self)
                            if time.monotonic() >= self.next_start:
                                break
                            # a Retry-After came (or another process's start, taken over with the lease) while we
                            # queued at the gate: wait it out without holding a global place
                            passed = False
                            gate.release()
                        self._last_start = time.monotonic()
                        self.next_start = max(self.next_start, self._last_start + self.interval_s)
                        start = Start(self)
                    yield start
                finally:
                    if start is not None:
                        start.end()
                    if passed:
                        gate.release()
        finally:
            self.users -= 1
            if self.lease is not None and self.users == 0:
                self.lease.idle(self)


class CircuitOpen(Exception):
    """The host's breaker was found open on taking over its shared lease (another run opened it)."""


class HostLeaseHolder(Protocol):
    """What a throttle needs from a lease on its host shared with other processes (store/host_leases.py)."""

    async def hold(self, throttle: HostThrottle) -> None:
        """Return once this process holds the host's lease for at least one request's duration."""

    def covers(self) -> bool:
        """Whether the lease held still covers a request started now (else hold() renews it)."""

    def idle(self, throttle: HostThrottle) -> None:
        """No request of this process waits for or is in flight on the host: the lease may be given back."""


class TokenBucket:
    """Global request-rate cap: ``rate`` tokens per second, bursts up to ``capacity``."""

    def __init__(self, rate: float, capacity: float | None = None) -> None:
        self.rate = rate
        self.capacity = max(1.0, capacity if capacity is not None else rate)
        self._tokens = self.capacity
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            while True:
                now = time.monotonic()
                self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
                self._stamp = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                await asyncio.sleep((1 - self._tokens) / self.rate)


class GlobalGate:
    """The run-wide limits every request passes: at most ``concurrency`` in flight, ``rate`` starts a second."""

    def __init__(self, concurrency: int, rate: float) -> None:
        self._sem = asyncio.Semaphore(concurrency)
        self._bucket = TokenBucket(rate)

    async def acquire(self) -> None:
        await self._sem.acquire()
        try:
            await self._bucket.acquire()
        except BaseException:  # cancelled while waiting for a token: give the in-flight place back
            self._sem.release()
            raise

    def release(self) -> None:
        self._sem.release()


@dataclass
class CircuitBreaker:
    """Opens after ``threshold`` consecutive timeouts/connection failures on one host, on at least ``min_urls``
    distinct URLs of it (one page's retries are no evidence that the host is down: a blip on one URL must not
    blank the host); any response resets the count.

    A connection that fails (refused, reset, connect timeout, TLS) counts at every attempt: a dead host opens the
    breaker fast. A response that is too slow counts once per URL: that page's own retries are no evidence that
    the host is down, and counted each time one slow page shut a healthy one-connection host for the run.

    Shared with other runs (store/host_leases.py): a breaker another run opened is open here until its window
    ends (``remembered``: this run refuses the host without extending it); after the window it is half-open
    (``probe``): one request goes, and its failure opens the breaker again, a response closes it."""

    threshold: int
    min_urls: int = 1
    failures: int = 0
    last_failure: str = ""
    failed_urls: set[str] = field(default_factory=set)
    slow_urls: set[str] = field(default_factory=set)
    tripped: str = ""  # why the host was closed for the run without failures (a wait it asked that the run cannot afford)
    opened_at: float | None = None  # epoch seconds when it opened (this run, or the run it is remembered from)
    remembered: bool = False  # open because another run opened it: this run leaves that run's record as it is
    probe: bool = False  # half-open: the next request is a probe; a failure opens the breaker again
    probing: bool = False  # the probe is in flight: the host's other requests wait for its answer

    @property
    def open(self) -> bool:
        return self.opened_at is not None or bool(self.tripped)

    def trip(self, reason: str) -> None:
        """Close the host for the rest of the run: its remaining pages are unreadable, with this reason."""
        self.tripped = self.tripped or reason

    def record_failure(self, what: str, slow_url: str | None = None, *, url: str = "") -> None:
        """``slow_url``: the failure was a read timeout on that URL (counted only the first time); ``url``: the
        URL whose request failed (distinct ones are counted against ``min_urls``)."""
        if slow_url is not None:
            if slow_url in self.slow_urls:
                return
            self.slow_urls.add(slow_url)
        self.failures += 1
        self.last_failure = what
        if slow_url or url:
            self.failed_urls.add(slow_url or url)
        self.probing = False
        urls = max(1, len(self.failed_urls))  # a failure of no named URL is one
        if self.opened_at is None and (self.probe or (self.failures >= self.threshold and urls >= self.min_urls)):
            self.opened_at, self.remembered, self.probe = time.time(), False, False

    def record_response(self) -> None:
        if not self.open:  # once open it stays open for the run: the host is treated as down
            self.failures, self.probe, self.probing = 0, False, False
            self.failed_urls.clear()

    def remember(self, opened_at: float, failures: int, last_failure: str, *, window_over: bool) -> None:
        """Another run opened the breaker at ``opened_at`` (epoch seconds): open here until the window is over,
        half-open (one probe) after it."""
        if self.open or self.failures:  # this run's own evidence stands
            return
        self.failures, self.last_failure = failures, last_failure
        if window_over:
            self.probe = True
        else:
            self.opened_at, self.remembered = opened_at, True

    def note(self) -> str:
        if self.tripped:
            return self.tripped
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.opened_at or time.time()))
        return f"circuit open since {since} after {self.failures} failures (last: {self.last_failure})"


class HostLeaseFactory(Protocol):
    """Makes a host's shared lease (store/host_leases.py HostLeases), when politeness is shared with other runs."""

    def lease(self, host: str, throttle: HostThrottle, breaker: CircuitBreaker,
              has_work: Callable[[], bool]) -> HostLeaseHolder: ...

    async def take_many(self, hosts: list[str]) -> None: ...

    async def release_all(self) -> None: ...


class HostRegistry:
    """Lazily created throttle + breaker per host, shared by every worker of one run; with ``leases``, each host's
    throttle first takes the host's lease shared with other runs (processes, machines)."""

    def __init__(self, fetch: FetchSettings, on_wait: WaitListener | None = None,
                 leases: HostLeaseFactory | None = None) -> None:
        self._fetch = fetch
        self._on_wait = on_wait
        self._leases = leases
        self.throttles: dict[str, HostThrottle] = {}
        self.breakers: dict[str, CircuitBreaker] = {}
        self.workers: Counter[str] = Counter()  # the fetcher's workers still draining each host's queue

    def throttle(self, host: str) -> HostThrottle:
        if host not in self.throttles:
            p = policy_for(host, self._fetch)
            throttle = HostThrottle(p.concurrency, p.interval_ms / 1000, host=host, on_wait=self._on_wait)
            if self._leases is not None:
                throttle.lease = self._leases.lease(host, throttle, self.breaker(host),
                                                    has_work=lambda: self.workers[host] > 0)
            self.throttles[host] = throttle
        return self.throttles[host]

    def breaker(self, host: str) -> CircuitBreaker:
        if host not in self.breakers:
            self.breakers[host] = CircuitBreaker(self._fetch.breaker_failures, self._fetch.breaker_urls)
        return self.breakers[host]

    def worker_done(self, host: str) -> None:
        """One of the fetcher's workers for ``host`` has emptied its queue; the last one frees a shared host."""
        self.workers[host] -= 1
        throttle = self.throttles.get(host)
        if throttle is not None and throttle.lease is not None and not self.workers[host] and not throttle.users:
            throttle.lease.idle(throttle)

    async def open(self, hosts: list[str]) -> None:
        """The run's hosts are known: those free are taken at once (one database transaction, not one each)."""
        if self._leases is not None:
            for host in hosts:
                self.throttle(host)
            await self._leases.take_many(hosts)

    async def close(self) -> None:
        """The run is over: the hosts it holds are given back to the other runs."""
        if self._leases is not None:
            await self._leases.release_all()
