"""The polite async fetcher: every URL → one FetchResult, yielded as soon as it is settled.

Scheduling: URLs are grouped into per-host queues, each drained by at most the host's concurrency in
workers (never "launch everything at once", which would hit hosts in bursts). Each request hop passes, in order:
excluded-host check → robots.txt → circuit breaker → host slot (concurrency, interval between STARTS, then the
global semaphore and token bucket; the start is booked only when all are passed) → guarded connect (DNS, address
map, SSRF guard) → response.
Redirects are followed here, one hop at a time, so every hop goes through all of the above. What an answer means
(a result, a retry, a redirect, a body to read), how long a retry waits and what a read page says are decided in
web/answers.py, with no I/O; this module does the requests and the scheduling and applies those decisions.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter, defaultdict, deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from claims_pipeline.common.urls import normalize_url, url_host
from claims_pipeline.config.settings import FetchSettings, PdfSettings, package_version
from claims_pipeline.web import botwall, event_loop
from claims_pipeline.web.answers import (
    _REDIRECTS,
    _answer_of_body,
    _answer_without_body,
    _Common,
    _content_type,
    _Downloaded,
    _ReadBody,
    _Redirect,
    _Retry,
    _retryable,
    _Settled,
    conditional_headers,
    page_of_body,
    parse_retry_after,
    result_of,
    retry_wait,
)
from claims_pipeline.web.body import (
    ACCEPT_ENCODING,
    BodyTooLarge,
    HeadRejected,
    UndecodableBody,
    UnsupportedEncoding,
    read_capped,
)
from claims_pipeline.web.pdf_text import MAGIC_WINDOW, has_pdf_magic
from claims_pipeline.web.politeness import (
    MAX_INTERVAL_S,
    CircuitOpen,
    GlobalGate,
    HostLeaseFactory,
    HostRegistry,
    Start,
    WaitListener,
    domain_matcher,
)
from claims_pipeline.web.records import FetchResult, FetchStatus
from claims_pipeline.web.robots import RobotsAnswer, RobotsCache, RobotsStore
from claims_pipeline.web.ssrf import AddressGuard, AddressRefused
from claims_pipeline.web.transport import GuardedTransport, Resolver

Validators = Mapping[str, tuple[str | None, str | None]]  # url -> (etag, last_modified)

_ROBOTS_MAX_BYTES = 512_000  # 500 KiB, the least RFC 9309 §2.5 asks a crawler to parse
_CHALLENGE_PEEK_BYTES = 65_536  # enough of an error page to read its <title>


_NO_BODY = httpx.ByteStream(b"")  # a GET's (empty) request body, shared: never written, never changed


class Fetcher:
    """``async with Fetcher(settings.fetch, settings.pdf) as f: async for r in f.fetch_many(urls): ...``"""

    def __init__(self, fetch: FetchSettings, pdf: PdfSettings, resolver: Resolver | None = None, *,
                 inner_backend: httpcore.AsyncNetworkBackend | None = None,
                 robots_store: RobotsStore | None = None, robots_now: datetime | None = None,
                 on_wait: WaitListener | None = None, host_leases: HostLeaseFactory | None = None) -> None:
        """robots_store keeps robots.txt across runs (fetch.robots_cache_hours); without one, every run asks
        each origin once. robots_now fixes the clock its TTL is measured with (tests and backfills). on_wait
        (host, seconds) is told when a request waits for its host's interval or a retry's backoff (progress).
        host_leases (store/host_leases.py) shares each host's politeness with the other runs using the same
        database; without it, politeness holds within this process only."""
        self.fetch = fetch
        self.pdf = pdf  # how a PDF body is read into text
        self.user_agent = self.fetch.user_agent.replace("{version}", package_version())
        self.robots_agent = self.user_agent.split("/", 1)[0]  # product token, what robots.txt groups name
        self._resolver = resolver
        self._inner_backend = inner_backend  # test seam: the backend that really dials, after the guard
        self._transport: GuardedTransport | None = None
        self._cookies = httpx.Cookies()  # kept for the run: sites that set a cookie and redirect to check it
        self._robots_store = robots_store
        self._robots_now = robots_now
        self._on_wait = on_wait
        self._host_leases = host_leases
        self._excluded = domain_matcher(self.fetch.excluded_hosts)  # asked at every hop

    async def __aenter__(self) -> Fetcher:
        f = self.fetch
        transport = GuardedTransport(
            guard=AddressGuard.from_lists(f.allow_hosts, f.allow_networks),
            resolver=self._resolver,
            address_map=f.address_map,
            verify_tls=f.verify_tls,
            # in-flight requests are bounded by the host throttles and the global semaphore; a host's pool
            # only needs its largest configured concurrency (robots.txt shares the host slot)
            per_host_connections=max([f.default_host.concurrency, f.gov_host.concurrency,
                                      *(p.concurrency for p in f.per_host_overrides.values())]),
            inner_backend=self._inner_backend,
        )
        self._timeouts = httpx.Timeout(f.request_timeout_s, connect=f.connect_timeout_s).as_dict()
        # robots.txt has its own deadline (robots_timeout_s); its connect must give up before it, so that a host
        # that cannot be reached shows as a connect failure (the page then says so) and not as a robots.txt that
        # did not answer (disallow-all)
        self._robots_timeouts = httpx.Timeout(min(f.request_timeout_s, f.robots_timeout_s),
                                              connect=min(f.connect_timeout_s, 0.8 * f.robots_timeout_s)).as_dict()
        self._base_headers = [("User-Agent", self.user_agent)]
        self._transport = transport
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._transport is not None:
            await self._transport.aclose()
            self._transport = None

    @contextlib.asynccontextmanager
    async def _get(self, url: str, headers: dict[str, str], start: Start,
                   timeouts: dict | None = None) -> AsyncIterator[httpx.Response]:
        """One GET on httpx's transport API, the response streamed and closed on exit.

        Not httpx.AsyncClient: the fetcher follows redirects itself (one hop at a time, each through robots,
        throttles and the guard), sends no auth and sets its own headers and timeouts, so the client's layers
        (request building and merging, auth and redirect loops, a cookie pass on every response) did nothing
        here but cost about a quarter of a warm run's CPU. Cookies are still kept for the run, read only from
        responses that set one."""
        assert self._transport is not None, "use 'async with Fetcher(...)'"
        # stream= is httpx's way to build a request for the transport API: no body encoding or header
        # re-merging (a third of the request's cost); Host then comes from us, as httpx would set it
        target = httpx.URL(url)
        # httpx normalises each pair on its own, str or bytes; its hint asks for one kind throughout
        request = httpx.Request("GET", target, headers=[(b"Host", target.netloc), *self._base_headers, *headers.items()],  # type: ignore[arg-type]
                                extensions={"timeout": timeouts or self._timeouts, "trace": start.trace},
                                stream=_NO_BODY)
        if self._cookies.jar:
            self._cookies.set_cookie_header(request)
        response = await self._transport.handle_async_request(request)
        response.request = request
        try:
            if "set-cookie" in response.headers:
                self._cookies.extract_cookies(response)
            yield response
        finally:
            await response.aclose()

    # ---- run ------------------------------------------------------------------------------------
    async def fetch_many(self, urls: Iterable[str], validators: Validators | None = None) -> AsyncIterator[FetchResult]:
        assert self._transport is not None, "use 'async with Fetcher(...)'"
        validators = {normalize_url(k): v for k, v in (validators or {}).items()}
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + self.fetch.run_budget_s
        self._hosts = HostRegistry(self.fetch, on_wait=self._on_wait, leases=self._host_leases)
        self._gate = GlobalGate(self.fetch.concurrency, self.fetch.req_per_sec)
        fixed_now = self._robots_now
        if fixed_now is not None and fixed_now.tzinfo is not None:  # the store holds naive UTC
            fixed_now = fixed_now.astimezone(UTC).replace(tzinfo=None)
        self._robots = RobotsCache(self._fetch_robots, store=self._robots_store,
                                   ttl_hours=self.fetch.robots_cache_hours, unreachable=self.fetch.robots_unreachable,
                                   **({"now": lambda: fixed_now} if fixed_now is not None else {}))
        results: asyncio.Queue[FetchResult] = asyncio.Queue()
        queues: dict[str, deque[str]] = defaultdict(deque)
        # each host's pages not yet settled: a wait the run cannot afford for all of them is refused (_unaffordable)
        self._left: Counter[str] = Counter()
        expected = 0
        for url in dict.fromkeys(normalize_url(u) for u in urls):
            expected += 1
            host = url_host(url)
            if urlsplit(url).scheme not in ("http", "https") or not host:
                results.put_nowait(self._result(url, FetchStatus.DEAD, note=f"not an http(s) URL: {url!r}"))
            else:
                queues[host].append(url)
                self._left[host] += 1
        if self.fetch.robots_enabled:
            await self._robots.preload([u for q in queues.values() for u in q])
        await self._hosts.open([h for h in queues if not self._excluded(h)])
        workers = []
        for host, queue in queues.items():
            n = min(self._hosts.throttle(host).concurrency, len(queue))
            self._hosts.workers[host] += n
            workers += [asyncio.create_task(self._worker(host, queue, validators, results)) for _ in range(n)]
        try:
            for _ in range(expected):
                yield await results.get()
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await self._robots.flush()  # the robots.txt answers still being stored, for the next run
            await self._hosts.close()  # hosts shared with other runs are given back

    async def _worker(self, host: str, queue: deque[str], validators: Validators,
                      out: asyncio.Queue[FetchResult]) -> None:
        try:
            await self._drain(queue, validators, out)
        finally:
            self._hosts.worker_done(host)  # the last one gives its host's shared lease back

    async def _drain(self, queue: deque[str], validators: Validators, out: asyncio.Queue[FetchResult]) -> None:
        while queue:
            url = queue.popleft()
            started = time.monotonic()
            budget = asyncio.timeout_at(self._deadline)
            try:
                async with budget:
                    result = await self._fetch_one(url, validators.get(url))
            except TimeoutError:
                if not budget.expired():
                    raise
                result = self._result(url, FetchStatus.UNAVAILABLE, note=self._budget_note(url))
            except Exception as exc:  # one bad URL never stops the others; the note says what broke
                result = self._result(url, FetchStatus.UNAVAILABLE, note=f"fetcher error {type(exc).__name__}: {exc}")
            result.elapsed_s = round(time.monotonic() - started, 4)
            self._left[url_host(url)] -= 1
            out.put_nowait(result)

    def _budget_note(self, url: str) -> str:
        note = f"run budget of {self.fetch.run_budget_s:g} s spent before this URL finished"
        throttle = self._hosts.throttles.get(url_host(url))
        if throttle is not None and throttle.crawl_delay is not None:  # the site's Crawl-delay held its URLs back
            capped = f" (capped from {throttle.crawl_delay:g} s)" if throttle.crawl_delay > throttle.interval_s else ""
            note += f"; robots.txt Crawl-delay {throttle.interval_s:g} s{capped} spaces this host's requests"
        return note

    def _unaffordable(self, host: str, seconds: float, asked: str, *, per_page: bool) -> str | None:
        """Why a wait a host asks for is more than the run can afford (None when it is not): a Crawl-delay
        (`per_page`: before each of the host's pages still to fetch) or a Retry-After (once), against what is left
        of fetch.run_budget_s; a Crawl-delay longer than the longest interval kept (MAX_INTERVAL_S) too. The
        host's pages are then left unread with this reason, as an open circuit leaves them, and the run goes on:
        one robots.txt asking for a day between requests no longer holds an audit until its budget is spent."""
        left = max(0.0, self._deadline - asyncio.get_running_loop().time())
        pages = max(1, self._left[host])  # the one asking included (a redirect's host may have none of its own)
        needed = seconds * pages if per_page else seconds
        budget = f"{left:.0f} s of fetch.run_budget_s {self.fetch.run_budget_s:g} s left"
        if per_page and seconds > MAX_INTERVAL_S:
            return (f"{asked} is longer than the longest interval kept between requests ({MAX_INTERVAL_S:g} s): "
                    "this host's pages are not fetched this run")
        if needed > left:
            what = f"{pages} page(s) of this host would take {needed:g} s" if per_page else "waiting"
            return f"{asked}: {what}, more than the run can afford ({budget}): not fetched this run"
        return None

    def _result(self, url: str, status: FetchStatus, **fields: object) -> FetchResult:
        return result_of(url, status, **fields)

    # ---- one URL: attempts with backoff ------------------------------------------------------------
    async def _fetch_one(self, url: str, validator: tuple[str | None, str | None] | None) -> FetchResult:
        f = self.fetch
        host = url_host(url)
        if self._excluded(host):
            return self._result(url, FetchStatus.EXCLUDED, note=f"host {host} in excluded_hosts")
        last: _Retry | None = None
        for attempt in range(1, f.max_retries + 1):
            sent = [0]  # requests this attempt sent (redirect hops included)
            outcome = await self._follow(url, validator, sent)
            if isinstance(outcome, FetchResult):
                # an attempt settled before any request (robots.txt, an open circuit, a refused address) is
                # not counted: every earlier attempt ended in a _Retry, which a request caused
                outcome.attempts = attempt if sent[0] else attempt - 1
                return outcome
            last = outcome
            breaker = self._hosts.breaker(url_host(url))
            if breaker.open:
                return self._result(url, FetchStatus.UNAVAILABLE, http_status=last.http_status,
                                    note=f"{last.note}; {breaker.note()}", attempts=attempt)
            if attempt == f.max_retries:
                break
            wait = self._backoff(attempt, last.retry_after)
            if asyncio.get_running_loop().time() + wait > self._deadline:
                return self._result(url, FetchStatus.UNAVAILABLE, http_status=last.http_status, attempts=attempt,
                                    note=f"{last.note}; no retry: run budget would be spent")
            if self._on_wait is not None:
                self._on_wait(host, wait)
            await asyncio.sleep(wait)
        assert last is not None
        return self._result(url, FetchStatus.UNAVAILABLE, http_status=last.http_status, attempts=f.max_retries,
                            note=f"{last.note} after {f.max_retries} attempts")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        return retry_wait(self.fetch, attempt, retry_after)

    # ---- one attempt: redirect hops --------------------------------------------------------------
    async def _follow(self, url: str, validator: tuple[str | None, str | None] | None,
                      sent: list[int]) -> FetchResult | _Retry:
        f = self.fetch
        chain = [url]
        current = url
        refreshed: list[str] = []  # pages that sent us on by meta refresh
        for _hop in range(f.max_redirects + 1):
            host = url_host(current)
            via = f" (redirected from {url})" if current != url else ""
            if not current.startswith(("http://", "https://")) or not host:  # normalised: scheme lower-cased
                return self._result(url, FetchStatus.DEAD, final_url=current, note=f"redirect to a non-http(s) URL {current}")
            if self._excluded(host):
                return self._result(url, FetchStatus.EXCLUDED, final_url=current, note=f"host {host} in excluded_hosts{via}")
            throttle = self._hosts.throttle(host)
            if f.robots_enabled:
                try:
                    rules = await self._robots.rules(current)
                except AddressRefused as exc:
                    return self._result(url, FetchStatus.REFUSED, final_url=current, note=f"{exc}{via}")
                delay = rules.crawl_delay(self.robots_agent)
                if delay is not None and delay > throttle.interval_s and not self._hosts.breaker(host).open:
                    refusal = self._unaffordable(host, delay, f"robots.txt Crawl-delay {delay:g} s", per_page=True)
                    if refusal is not None:
                        self._hosts.breaker(host).trip(refusal)
                    else:
                        throttle.raise_interval(delay)
                if not rules.allows(current, self.robots_agent):
                    note = f"{rules.note}{via}" if rules.disallow_all else f"robots.txt Disallow for {current}"
                    return self._result(url, FetchStatus.ROBOTS, final_url=current, note=note)
            breaker = self._hosts.breaker(host)
            if breaker.open:
                return self._result(url, FetchStatus.UNAVAILABLE, final_url=current, note=breaker.note() + via)
            try:
                sent[0] += 1
                outcome = await self._request(url, current, validator)
                if refreshed and isinstance(outcome, FetchResult):
                    outcome.note = "; ".join(filter(None, [outcome.note, f"via meta refresh from {refreshed[-1]}"]))
                return outcome
            except CircuitOpen as exc:  # opened by another run, learnt on taking the host over: nothing was sent
                sent[0] -= 1
                return self._result(url, FetchStatus.UNAVAILABLE, final_url=current, note=f"{exc}{via}")
            except _Redirect as redirect:
                if redirect.refresh:
                    refreshed.append(current)
                nxt = normalize_url(urljoin(current, redirect.location))
                # a redirect back to a URL already seen is a loop, unless it just set a cookie (a cookie check:
                # the second visit carries it), and then only once more
                if nxt in chain and (not redirect.sets_cookie or chain.count(nxt) > 1):
                    loop_text = " → ".join(chain[chain.index(nxt):] + [nxt])
                    return self._result(url, FetchStatus.UNAVAILABLE, http_status=redirect.status, final_url=current,
                                        note=f"redirect loop: {loop_text}")
                chain.append(nxt)
                current = nxt
            except AddressRefused as exc:
                return self._result(url, FetchStatus.REFUSED, final_url=current, note=f"{exc}{via}")
            except BodyTooLarge as exc:
                return self._result(url, FetchStatus.TOO_LARGE, final_url=current, note=str(exc))
            except UnsupportedEncoding as exc:
                return self._result(url, FetchStatus.UNAVAILABLE, final_url=current, note=str(exc))
            except (httpx.TimeoutException, TimeoutError) as exc:
                name = type(exc).__name__ if isinstance(exc, httpx.TimeoutException) else \
                    f"response deadline {f.request_timeout_s:g} s exceeded (slow or trickling response)"
                # no connection is a host fault at every attempt; a slow answer is this page's, counted once
                breaker.record_failure(name, slow_url=None if isinstance(exc, httpx.ConnectTimeout) else current,
                                       url=current)
                return _Retry(name + via)
            except httpx.TransportError as exc:  # connect refused, reset, protocol error
                name = f"{type(exc).__name__}: {exc}" if str(exc) else \
                    f"{type(exc).__name__} (connection reset or closed by the server)"
                breaker.record_failure(name, url=current)
                return _Retry(name + via)
        return self._result(url, FetchStatus.UNAVAILABLE, final_url=current,
                            note=f"more than {f.max_redirects} redirects: {' → '.join(chain)}")


    async def _request(self, url: str, current: str, validator: tuple[str | None, str | None] | None) -> FetchResult | _Retry:
        """One HTTP exchange for one hop; raises _Redirect to move on, returns a final result or a _Retry."""
        f = self.fetch
        host = url_host(current)
        headers = {"Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.8",
                   "Accept-Encoding": ACCEPT_ENCODING, **conditional_headers(validator)}
        throttle = self._hosts.throttle(host)
        breaker = self._hosts.breaker(host)
        async with throttle.slot(self._gate) as start:  # host interval, then global concurrency and rate
            # half-open (learnt on taking the host's lease, in slot()): one request probes, the host's others wait
            # for its answer here (within the probe's deadline), then go on a response or stop on a failure
            while breaker.probing:
                await asyncio.sleep(0.05)
            if breaker.open:
                raise CircuitOpen(breaker.note())
            probe = breaker.probing = breaker.probe
            try:
                remaining = self._deadline - asyncio.get_running_loop().time()
                async with start.deadline(min(f.request_timeout_s, max(remaining, 0.001))):
                    async with self._get(current, headers, start) as resp:
                        breaker.record_response()
                        outcome = await self._classify(url, current, resp, validator)
            finally:
                if probe:
                    breaker.probing = False
        if isinstance(outcome, _Downloaded):
            # text extraction is CPU work: outside the host slot, and off the event loop so request starts
            # on other hosts stay on schedule while a big page or PDF is parsed
            return await asyncio.to_thread(self._extracted, url, current, outcome.raw, outcome.common, outcome.named_pdf)
        return outcome

    async def _classify(self, url: str, current: str, resp: httpx.Response,
                        validator: tuple[str | None, str | None] | None) -> FetchResult | _Retry | _Downloaded:
        """One hop's response: a final result, a retry, or the body to read as text; raises _Redirect to move
        on. What each answer means is decided by _answer_without_body and _answer_of_body; here, what they need
        is read and the host is told to slow down."""
        status = resp.status_code
        h = dict(resp.headers.items())  # one pass (names lower-cased, repeats joined): looked up many times below
        common = _Common(http_status=status, final_url=current, etag=h.get("etag"),
                         last_modified=h.get("last-modified"), content_type=_content_type(h.get("content-type", "")))
        if status in _REDIRECTS:
            # finish the (small) body so the keep-alive connection can be reused (a 304 has none: the transport
            # reads its empty body on close, for the same reason)
            await self._peek(resp)
            location = h.get("location")
            if not location:
                return self._result(url, FetchStatus.UNAVAILABLE, **common, note=f"http {status} without a Location header")
            raise _Redirect(location, status, sets_cookie="set-cookie" in h)
        if status == 304:
            etag, last_modified = validator or (None, None)
            common["etag"] = common["etag"] or etag
            common["last_modified"] = common["last_modified"] or last_modified
            return self._result(url, FetchStatus.NOT_MODIFIED, **common, note="http 304 not modified")
        retry_after = parse_retry_after(h.get("retry-after"))
        if _retryable(status) and retry_after is not None:  # for this host's other URLs too, wall or not
            self._slow_down(url_host(current), retry_after)
        # the head of an error or walled answer: its title tells a bot wall
        peek = await self._peek(resp) if status >= 400 or botwall.mitigated(h) is not None else b""
        answer = _answer_without_body(status, h, current, peek, retry_after, self.fetch)
        if isinstance(answer, _Settled):
            return self._result(url, answer.status, **common, raw=answer.raw, content_kind=answer.content_kind,
                                note=answer.note)
        if not isinstance(answer, _ReadBody):
            return answer
        ctype = common["content_type"]
        try:
            raw = await read_capped(resp, answer.cap, head_check=has_pdf_magic if answer.sniff else None,
                                    head_bytes=MAGIC_WINDOW)
        except BodyTooLarge as exc:  # found while streaming (no or a lying Content-Length): keep the status
            return self._result(url, FetchStatus.TOO_LARGE, **common, note=str(exc))
        except UndecodableBody as exc:
            return self._result(url, FetchStatus.UNAVAILABLE, **common, note=str(exc))
        except HeadRejected:
            return self._result(url, FetchStatus.BINARY, **common, content_kind="binary",
                                note=f"binary content type {ctype}: no %PDF- in its first {MAGIC_WINDOW} bytes, "
                                     "rest not downloaded")
        body = _answer_of_body(raw, status, answer, ctype, current, self.fetch)
        if isinstance(body, _Settled):
            return self._result(url, body.status, **common, raw=body.raw, note=body.note)
        return _Downloaded(raw, common, named_pdf=body)

    def _slow_down(self, host: str, retry_after: float) -> None:
        """A Retry-After for the host: its other URLs wait too, or, when the wait is more than the run can
        afford, they are reported unreadable with the reason."""
        refusal = self._unaffordable(host, retry_after, f"Retry-After {retry_after:g} s", per_page=False)
        if refusal is not None:
            self._hosts.breaker(host).trip(refusal)
        else:
            self._hosts.throttle(host).defer(min(retry_after, self.fetch.retry_after_cap_s))

    def _extracted(self, url: str, current: str, raw: bytes, common: _Common, named_pdf: bool = False) -> FetchResult:
        return page_of_body(url, current, raw, common, self.fetch, self.pdf, named_pdf)

    async def _peek(self, resp: httpx.Response) -> bytes:
        try:
            return await read_capped(resp, _CHALLENGE_PEEK_BYTES)
        except (BodyTooLarge, UnsupportedEncoding, UndecodableBody, httpx.TransportError):
            return b""

    # ---- robots.txt ---------------------------------------------------------------------------------
    async def _fetch_robots(self, origin: str, validators: tuple[str | None, str | None] | None = None) -> RobotsAnswer:
        """GET /robots.txt through the same host slot, guard and rate limits as any request; conditional when
        validators of a stored copy are given (sent on every redirect hop: the final hop is what they name)."""
        target = origin + "/robots.txt"
        headers = conditional_headers(validators)
        try:
            return await self._robots_hops(target, headers)
        except CircuitOpen as exc:  # another run found the host down: the page requests will say so
            return RobotsAnswer(None, failure=str(exc))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            # no connection at all (DNS, refused, TLS, no answer to the connect): nothing of the site was reached,
            # and the page request will meet the same failure and report it as what it is, so this is no
            # "unreachable" disallow-all (ConnectTimeout is a TimeoutException, not a ConnectError: named here)
            return RobotsAnswer(None, failure=f"{type(exc).__name__}: {exc}")
        except (httpx.TimeoutException, TimeoutError) as exc:
            what = type(exc).__name__ if isinstance(exc, httpx.TimeoutException) else \
                f"no answer within {self.fetch.robots_timeout_s:g} s"
            return RobotsAnswer(None, failure=what, lost=True)
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:  # reset or cut off mid-answer
            what = f"{type(exc).__name__}: {exc}" if str(exc) else f"{type(exc).__name__} (connection reset or closed)"
            return RobotsAnswer(None, failure=what, lost=True)

    async def _robots_hops(self, target: str, headers: dict[str, str]) -> RobotsAnswer:
        for _ in range(self.fetch.max_redirects + 1):
            host = url_host(target)
            if self._excluded(host):
                # never contacted, robots.txt included. Taken as no robots.txt (allow), as RFC 9309 §2.3.1.2 lets a
                # crawler treat redirects it does not follow: the origin answered (no server or network error),
                # and its own pages still pass the excluded-hosts check at every hop
                return RobotsAnswer(None, failure=f"redirected to excluded host {host}")
            async with self._hosts.throttle(host).slot(self._gate) as start:
                async with start.deadline(self.fetch.robots_timeout_s):
                    async with self._get(target, headers, start, self._robots_timeouts) as resp:
                        status = resp.status_code
                        if status in _REDIRECTS and resp.headers.get("location"):
                            await self._peek(resp)
                            target = urljoin(target, resp.headers["location"])
                            continue
                        found = dict(etag=resp.headers.get("etag"), last_modified=resp.headers.get("last-modified"))
                        if status >= 400 or status == 304:
                            await self._peek(resp)  # drained, so the connection is reused for the pages
                            return RobotsAnswer(status, "", **found)
                        try:
                            body = await read_capped(resp, _ROBOTS_MAX_BYTES)
                        except BodyTooLarge as exc:
                            # RFC 9309 §2.5: parse at least the first 500 KiB and ignore the rest; cut at the last
                            # complete line, so a rule cut in two is not read as a shorter (wider) one
                            body = exc.head[: exc.head.rfind(b"\n") + 1]
                        except UndecodableBody as exc:
                            return RobotsAnswer(None, failure=str(exc))
                        # utf-8-sig: a leading BOM would otherwise glue onto "User-agent" and void the first group
                        return RobotsAnswer(status, body.decode("utf-8-sig", "replace"), **found)
        return RobotsAnswer(None, failure=f"more than {self.fetch.max_redirects} redirects")


def fetch_urls(fetch: FetchSettings, pdf: PdfSettings, urls: Iterable[str], *, validators: Validators | None = None,
               on_result: Callable[[FetchResult], None] | None = None, resolver: Resolver | None = None,
               robots_store: RobotsStore | None = None,
               host_leases: HostLeaseFactory | None = None) -> list[FetchResult]:
    """Synchronous wrapper: fetch every URL, call ``on_result`` as each one settles, return them all."""

    async def run() -> list[FetchResult]:
        out: list[FetchResult] = []
        async with Fetcher(fetch, pdf, resolver=resolver, robots_store=robots_store, host_leases=host_leases) as fetcher:
            async for result in fetcher.fetch_many(urls, validators):
                if on_result is not None:
                    on_result(result)
                out.append(result)
        return out

    return event_loop.run(run(), fetch.event_loop)
