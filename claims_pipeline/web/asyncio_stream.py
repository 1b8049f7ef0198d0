"""An httpcore network backend on asyncio's own transports, for the fetcher's connections.

Why not httpcore's AnyIOBackend: every read and write there passes through anyio's cancel scopes, checkpoints
and socket attribute tables (one ``getpeername`` system call each time httpcore asks whether an idle
connection is still good), and pauses and resumes reading around each receive (two epoll system calls). On a
warm run, where each URL is a 304 of a few hundred bytes, that plumbing costs more CPU than the HTTP work
(benchmarks/README.md, where a warm fetch run's CPU goes).
Here a small asyncio Protocol buffers what arrives; timeouts are ``asyncio.timeout``; TLS is
``loop.start_tls`` (certificate and host name checked by the ssl module, as in any asyncio TLS connection).

The interface is httpcore's (``AsyncNetworkBackend`` / ``AsyncNetworkStream``), so the connection pool, HTTP/1.1
parsing (h11) and httpx on top are httpcore's own; errors are httpcore's Connect/Read/Write errors and timeouts.

Each stream also counts the bytes of the current exchange (from a request's write to the next one) and where the
response head ends. httpcore keeps a connection whose response ended cleanly even when bytes came after it in
the same read (a body sent with a 304, a second answer): they wait in h11's buffer, out of the idle check's
sight, and the next request would read them as its response. With those counts, transport.py tells such a
connection apart and has it dropped instead (``spoil``: the idle check then reads it as unusable).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

_HIGH_WATER = 256 * 1024  # stop reading from the socket while this much is buffered and unread
_LOW_WATER = 64 * 1024
_HEAD_SCAN_MAX = 128 * 1024  # httpcore refuses response heads over 100 kB: a head not ended by then is no head


class _BufferingProtocol(asyncio.Protocol):
    """Buffers incoming bytes, remembers EOF and errors, and wakes the stream's one waiting call. httpcore
    reads and writes a connection in turn, never at once, so one waiter serves both; waiters re-check their
    condition, so a wake-up meant for the other kind is harmless."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.read_paused = False
        self.write_paused = False
        self._waiter: asyncio.Future[None] | None = None

    # -- callbacks from the event loop
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _HIGH_WATER and not self.read_paused and self.transport is not None:
            self.transport.pause_reading()
            self.read_paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the server is done: close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = self.error or exc
        self._wake()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self._wake()

    # -- used by the stream
    async def wait_for_change(self) -> None:
        """Until data, EOF, an error or room to write arrives (the caller checks which)."""
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self.read_paused and len(self.buffer) <= _LOW_WATER and self.transport is not None:
            self.transport.resume_reading()
            self.read_paused = False
        return data

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, protocol: _BufferingProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._spoiled = False
        # the current exchange: bytes read since the request was written, and the offset where the final
        # (non-1xx) response head ends, once seen
        self._answering = False
        self._exchange_bytes = 0
        self._head: bytearray | None = bytearray()  # bytes kept until the head's end is found
        self._head_from = 0  # where the head being looked for starts (after any 1xx heads)
        self.head_end: int | None = None

    def _note_read(self, data: bytes) -> None:
        self._answering = True
        self._exchange_bytes += len(data)
        head = self._head
        if head is None:
            return
        scan = max(self._head_from, len(head) - 3)
        head += data
        while True:
            end = head.find(b"\r\n\r\n", scan)
            if end < 0:
                if len(head) > _HEAD_SCAN_MAX:
                    self._head = None  # no head: the exchange cannot be vouched for
                return
            end += 4
            status_line = bytes(head[self._head_from:self._head_from + 10])
            if status_line.startswith(b"HTTP/1.") and status_line[9:10] == b"1":
                self._head_from = scan = end  # a 1xx head (100 Continue, 103 Early Hints): the answer follows it
                continue
            self.head_end, self._head = end, None
            return

    def read_past(self, body_bytes: int) -> bool:
        """Whether this exchange read more than its response head and ``body_bytes`` of body (the body's length
        on the wire: true of a Content-Length or empty body, not of a chunked one), or had no head found."""
        return self.head_end is None or self._exchange_bytes > self.head_end + body_bytes

    def spoil(self) -> None:
        """Never reuse this connection: the idle check (``is_readable``) will say it has something unread."""
        self._spoiled = True

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._protocol
        if not p.buffer and not p.eof:
            try:
                async with asyncio.timeout(timeout):
                    while not p.buffer and not p.eof:
                        await p.wait_for_change()
            except TimeoutError:
                raise httpcore.ReadTimeout(f"no data within {timeout:g} s") from None
        if p.buffer:
            data = p.take(max_bytes)
            self._note_read(data)
            return data
        if p.error is not None:
            raise httpcore.ReadError(str(p.error) or type(p.error).__name__) from p.error
        return b""  # EOF: h11 turns it into "server disconnected" where that is an error

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._answering:  # a new request on this connection: a new exchange
            self._answering, self._exchange_bytes = False, 0
            self._head, self._head_from, self.head_end = bytearray(), 0, None
        p = self._protocol
        if self._transport.is_closing():
            raise httpcore.WriteError(str(p.error) if p.error else "connection closed")
        self._transport.write(buffer)
        if p.write_paused:  # the kernel's send buffer is full: wait until the loop drained it
            try:
                async with asyncio.timeout(timeout):
                    while p.write_paused and not self._transport.is_closing():
                        await p.wait_for_change()
            except TimeoutError:
                raise httpcore.WriteTimeout(f"could not send within {timeout:g} s") from None
            if p.error is not None:
                raise httpcore.WriteError(str(p.error)) from p.error

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                tls_transport = await loop.start_tls(self._transport, self._protocol, ssl_context,
                                                     server_hostname=server_hostname)
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout(f"TLS handshake not done within {timeout:g} s") from None
        except (OSError, ssl.SSLError, ConnectionError) as exc:  # SSLCertVerificationError is an SSLError
            self._transport.abort()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        if tls_transport is None:  # the loop closed the connection during the handshake
            raise httpcore.ConnectError("connection closed during the TLS handshake")
        return AsyncioStream(tls_transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # httpcore asks this of idle keep-alive connections: data or EOF = unusable
            p = self._protocol
            return self._spoiled or bool(p.buffer) or p.eof
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Dials an already-resolved, already-checked address (transport.GuardedBackend resolves and guards)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    _BufferingProtocol, host, port, local_addr=(local_address, 0) if local_address else None)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} within {timeout:g} s") from None
        except OSError as exc:  # asyncio words a refusal "Connect call failed": say what the system said
            reason = os.strerror(exc.errno) if exc.errno else (str(exc) or type(exc).__name__)
            raise httpcore.ConnectError(f"cannot connect to {host}:{port}: {reason}") from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the fetcher")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

