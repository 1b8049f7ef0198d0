"""Keep-alive HTTP/1.1 connections to one origin, spoken with h11 over the fetcher's guarded streams.

Why not httpcore's connection pool: it serves HTTP/2, proxies and any number of origins, and every request
passes through its anyio locks, events, shielded cancel scopes and request-assignment scan. On a warm run, where
each URL is a 304 of a few hundred bytes, that machinery cost five times the raw exchange
(benchmarks/bench_http_layers.py). The fetcher needs far less: GET only, one origin per pool (the transport
keeps one per host), at most the host's concurrency in connections. The protocol itself stays h11's (the
library httpcore uses): parsing, framing and keep-alive rules are not ours.

Errors are httpx's (ConnectError, ReadTimeout, RemoteProtocolError, ...), as httpx's own transport raises them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import h11
import httpcore
import httpx

READ_BYTES = 64 * 1024
MAX_HEADER_BYTES = 100 * 1024  # what httpcore allows a response head (h11's default is 16 kB)

# httpcore's errors, raised by the network streams, as httpx names them
_HTTPX_ERROR: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
}


def raise_as_httpx(exc: Exception, request: httpx.Request) -> NoReturn:
    """Raise the httpx error for an httpcore or h11 one (from it), or `exc` itself."""
    mapped = _httpx_error(exc, request)
    if mapped is exc:
        raise exc
    raise mapped from exc


def _httpx_error(exc: Exception, request: httpx.Request) -> Exception:
    """The httpx error for an httpcore or h11 one (others unchanged)."""
    if isinstance(exc, h11.RemoteProtocolError):
        return httpx.RemoteProtocolError(str(exc) or "malformed HTTP/1.1 response", request=request)
    if isinstance(exc, h11.LocalProtocolError):
        return httpx.LocalProtocolError(str(exc), request=request)
    for core, mapped in _HTTPX_ERROR.items():
        if isinstance(exc, core):
            return mapped(str(exc), request=request)
    return exc


class _Connection:
    __slots__ = ("stream", "h11", "idle_since")

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)
        self.idle_since = 0.0

    async def next_event(self, read_timeout: float | None) -> Any:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            data = await self.stream.read(READ_BYTES, timeout=read_timeout)
            if not data and self.h11.their_state is h11.SEND_RESPONSE:
                # h11's words for this ("peer closed connection without sending complete message body") do not
                # say that not a byte of the response came (httpcore's do)
                raise httpcore.RemoteProtocolError("Server disconnected without sending a response.")
            self.h11.receive_data(data)

    def finish_from_buffer(self) -> None:
        """Read on to the end of the response if all of it has already arrived (a 304's empty body, a small
        body nobody read), so the connection can be kept; never waits for the network."""
        try:
            while self.h11.their_state is h11.SEND_BODY:
                event = self.h11.next_event()
                if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                    return
        except h11.RemoteProtocolError:
            return  # not reusable: the states say so

    def reusable(self) -> bool:
        # bytes that came after the response in the same read (a body sent with a 304, a second answer) are in
        # h11's buffer, where the idle check cannot see them: the next request would read them as its response
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE and \
            self.h11.trailing_data == (b"", False)


class OriginPool:
    """Connections to one (scheme, host, port), at most `limit` in use at once, idle ones kept `keepalive_s`."""

    def __init__(self, *, scheme: str, host: str, port: int, backend: httpcore.AsyncNetworkBackend,
                 tls: Any, limit: int, keepalive_s: float) -> None:
        self._scheme, self._host, self._port = scheme, host, port
        self._backend, self._tls = backend, tls
        self._slots = asyncio.Semaphore(limit)
        self._keepalive_s = keepalive_s
        self._idle: list[_Connection] = []

    async def send(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        if self._slots.locked():  # (a free slot is taken at once: no timer to set up)
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await self._slots.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout(f"no free connection to {self._host} within {timeouts.get('pool'):g} s",
                                        request=request) from None
        else:
            await self._slots.acquire()
        conn: _Connection | None = None
        try:
            conn = await self._reuse() or await self._open(timeouts.get("connect"))
            head = h11.Request(method=request.method, target=request.url.raw_path, headers=request.headers.raw)
            try:
                await conn.stream.write(conn.h11.send(head) + conn.h11.send(h11.EndOfMessage()),
                                        timeout=timeouts.get("write"))
            except httpcore.WriteError:
                # a server may answer and close before it takes the request (a 503 when it is full): that answer
                # says more than the failed write, so read it; h11 then keeps the connection out of the pool
                conn.h11.send_failed()
            read_timeout = timeouts.get("read")
            event = await conn.next_event(read_timeout)
            while isinstance(event, h11.InformationalResponse):  # 100 Continue and friends: not the answer
                event = await conn.next_event(read_timeout)
            if not isinstance(event, h11.Response):
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} before the response head",
                                                request=request)
        except BaseException as exc:
            try:
                if conn is not None:
                    await conn.stream.aclose()
            finally:
                self._slots.release()
            if isinstance(exc, Exception):
                raise_as_httpx(exc, request)
            raise
        return httpx.Response(
            event.status_code, headers=event.headers.raw_items(), request=request,
            stream=_Body(self, conn, request, read_timeout),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": event.reason},
        )

    async def _reuse(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            # expired, or the server closed it (or sent something unasked): never reused
            if now - conn.idle_since > self._keepalive_s or conn.stream.get_extra_info("is_readable"):
                await conn.stream.aclose()
                continue
            return conn
        return None

    async def _open(self, connect_timeout: float | None) -> _Connection:
        stream = await self._backend.connect_tcp(self._host, self._port, timeout=connect_timeout)
        if self._scheme == "https":
            try:
                stream = await stream.start_tls(self._tls, server_hostname=self._host, timeout=connect_timeout)
            except BaseException:
                await stream.aclose()
                raise
        return _Connection(stream)

    async def give_back(self, conn: _Connection) -> None:
        """Back to the idle list when the exchange ended cleanly and both sides may go on; closed otherwise."""
        try:
            conn.finish_from_buffer()
            if conn.reusable():
                conn.h11.start_next_cycle()
                conn.idle_since = time.monotonic()
                self._idle.append(conn)
            else:
                await conn.stream.aclose()
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.stream.aclose()


class _Body(httpx.AsyncByteStream):
    """The response body as it arrives; closing it hands the connection back (or closes it, if unfinished)."""

    def __init__(self, pool: OriginPool, conn: _Connection, request: httpx.Request, read_timeout: float | None) -> None:
        self._pool, self._conn, self._request, self._read_timeout = pool, conn, request, read_timeout
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while True:
                event = await self._conn.next_event(self._read_timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    return
        except Exception as exc:
            raise_as_httpx(exc, self._request)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._pool.give_back(self._conn)
