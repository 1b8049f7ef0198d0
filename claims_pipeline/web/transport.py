"""An httpx transport whose connect step resolves, maps and guards every address before dialling.

httpx has no hook between DNS and connect, so we give httpcore a network backend that does it: resolve the
host (injectable resolver), apply ``fetch.address_map`` (like ``curl --resolve``), run the SSRF guard on each
candidate address, and only then open the TCP connection. TLS still verifies against the URL's host name,
because httpcore passes that name to ``start_tls`` (SNI + certificate check), not the dialled address.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import ipaddress
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any

import httpcore
import httpx

from claims_pipeline.web.asyncio_stream import AsyncioBackend
from claims_pipeline.web.ssrf import AddressGuard, AddressRefused

KEEPALIVE_S = 30.0  # an idle connection older than this is closed, not reused

# host -> list of IP strings; may be sync or async. Tests inject stubs that answer private addresses.
Resolver = Callable[[str], "list[str] | Awaitable[list[str]]"]


async def system_resolver(host: str) -> list[str]:
    """getaddrinfo in the loop's thread pool; addresses in the order the system prefers, deduplicated."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_address_map(mapping: Mapping[str, str]) -> dict[str, tuple[str, int | None]]:
    """'host' or '*.suffix' -> (ip, port or None). Raises ValueError naming the bad entry."""
    parsed: dict[str, tuple[str, int | None]] = {}
    for key, value in mapping.items():
        target = value.strip()
        port: int | None = None
        if target.startswith("["):  # [v6]:port
            addr, _, rest = target[1:].partition("]")
            port = int(rest[1:]) if rest.startswith(":") else None
        elif target.count(":") == 1:
            addr, port_text = target.split(":")
            port = int(port_text)
        else:
            addr = target
        try:
            ipaddress.ip_address(addr)
        except ValueError:
            raise ValueError(f"fetch.address_map[{key!r}]: {value!r} is not 'ip:port'") from None
        parsed[key.lower()] = (addr, port)
    return parsed


def lookup_address_map(table: Mapping[str, tuple[str, int | None]], host: str) -> tuple[str, int | None] | None:
    host = host.lower()
    if host in table:
        return table[host]
    for key, target in table.items():  # '*.suffix' matches subdomains and the bare suffix
        if key.startswith("*.") and (host == key[2:] or host.endswith(key[1:])):
            return target
    return None


class GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, guard: AddressGuard, resolver: Resolver | None, address_map: Mapping[str, tuple[str, int | None]],
                 inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or AsyncioBackend()  # the backend that actually dials (tests wrap it)
        self._guard = guard
        self._resolver = resolver or system_resolver
        self._map = dict(address_map)

    async def _candidates(self, host: str, port: int) -> list[tuple[str, int]]:
        mapped = lookup_address_map(self._map, host)
        if mapped is not None:
            return [(mapped[0], mapped[1] or port)]
        try:
            ipaddress.ip_address(host.strip("[]"))
            return [(host.strip("[]"), port)]
        except ValueError:
            pass
        try:
            answer: Any = self._resolver(host)
            if inspect.isawaitable(answer):
                answer = await answer
        except OSError as exc:  # gaierror and friends: a connection failure like any other, with the name
            raise httpcore.ConnectError(f"DNS lookup failed for {host}: {exc}") from exc
        if not answer:
            raise httpcore.ConnectError(f"no address for {host}")
        return [(str(a), port) for a in answer]

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        candidates = await self._candidates(host, port)
        allowed: list[tuple[str, int]] = []
        first_refusal: AddressRefused | None = None
        for address, p in candidates:
            try:
                self._guard.check(host, address)
                allowed.append((address, p))
            except AddressRefused as exc:
                first_refusal = first_refusal or exc
        if not allowed:  # only checked addresses are ever dialled
            assert first_refusal is not None
            raise first_refusal
        last_error: Exception | None = None
        for address, p in allowed:
            try:
                return await self._inner.connect_tcp(address, p, timeout=timeout, local_address=local_address,
                                                     socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the fetcher")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.lru_cache(maxsize=2)
def tls_context(verify: bool) -> ssl.SSLContext:
    """One context per setting for the process: loading the CA store takes milliseconds, and a long-lived process
    (a Dagster run materialising many scopes) would otherwise pay it for every fetch run. Contexts are safe to
    share between connections and threads; this one is never modified after it is built."""
    ctx = ssl.create_default_context()
    if not verify:  # an explicit, logged opt-out only: certificates are checked by default (docs/decisions/0002)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class _OriginTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over httpcore's connection pool, dialling through the guarded backend (no proxy, no env)."""

    def __init__(self, ctx: ssl.SSLContext, backend: GuardedBackend, limits: httpx.Limits) -> None:
        super().__init__(verify=ctx, trust_env=False, limits=limits)
        # httpx takes no network backend: the pool it just built is replaced by one with the same arguments httpx
        # passes, plus ours (every connection is then dialled through the guard)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ctx,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=backend,
        )


class _CheckedBody(httpx.AsyncByteStream):
    """A response body that, read to its end, has its connection dropped when more came than the response (see
    asyncio_stream); closed unread when it has no body (a 304), it is read first, so the connection is kept."""

    def __init__(self, inner: httpx.AsyncByteStream, stream: Any, empty: bool, framed: bool) -> None:
        self._inner, self._stream = inner, stream
        self._empty = empty  # no body by its status or Content-Length: 0 (reading it never waits)
        self._framed = framed  # not chunked: the body's bytes are its bytes on the wire
        self._read = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self._read = True
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            yield chunk
        if self._framed and self._stream.read_past(size):
            self._stream.spoil()

    async def aclose(self) -> None:
        try:
            if not self._read and self._empty:
                async for _ in self:
                    pass
        finally:
            await self._inner.aclose()


def _checked(response: httpx.Response) -> httpx.Response:
    stream = response.extensions.get("network_stream")
    if not hasattr(stream, "read_past"):  # a stream of a test's own backend: nothing to check with
        return response
    h = response.headers
    chunked = "chunked" in h.get("transfer-encoding", "").lower()
    empty = response.status_code in (204, 304) or (not chunked and h.get("content-length", "").strip() == "0")
    response.stream = _CheckedBody(response.stream, stream, empty, framed=not chunked)  # type: ignore[arg-type]
    return response


class GuardedTransport(httpx.AsyncBaseTransport):
    """Routes each request to httpcore's connection pool of its own origin.

    One pool per origin, holding at most a host's concurrency in connections, kept alive between that host's
    requests: httpcore's pool looks through all its connections for every queued request, which over one pool
    of hundreds of hosts would cost more than the requests.
    """

    def __init__(self, *, guard: AddressGuard, resolver: Resolver | None, address_map: Mapping[str, str],
                 verify_tls: bool, per_host_connections: int = 4,
                 inner_backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._ctx = tls_context(verify_tls)
        self._backend = GuardedBackend(guard, resolver, parse_address_map(address_map), inner_backend)
        self._limits = httpx.Limits(max_connections=per_host_connections,
                                    max_keepalive_connections=per_host_connections, keepalive_expiry=KEEPALIVE_S)
        self._pools: dict[tuple[str, str, int | None], _OriginTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # httpx hands httpcore the URL's ASCII host (an IDN's xn-- form, as in the Host header): the resolver, the
        # guard and TLS (SNI and the certificate check) get that name, never one re-encoded from Unicode
        url = request.url
        key = (url.scheme, url.host, url.port)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = _OriginTransport(self._ctx, self._backend, self._limits)
        return _checked(await pool.handle_async_request(request))

    async def aclose(self) -> None:
        for pool in self._pools.values():
            await pool.aclose()
        self._pools.clear()
