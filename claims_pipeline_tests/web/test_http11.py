"""The fetcher's HTTP/1.1 connection pool (web/http11.py) against raw sockets on 127.0.0.1 that answer exactly
what each test needs: keep-alive reuse and expiry, responses that end the connection, 1xx heads, truncated and
missing responses, oversized heads, the per-origin connection limit, and slots given back on every path."""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest

from claims_pipeline.web.asyncio_stream import AsyncioBackend
from claims_pipeline.web.http11 import OriginPool
from claims_pipeline.web.ssrf import AddressGuard
from claims_pipeline.web.transport import GuardedTransport
from claims_pipeline_tests.web.conftest import read_request

TIMEOUTS = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}


def pool_for(port: int, limit: int = 2, keepalive_s: float = 30.0) -> OriginPool:
    return OriginPool(scheme="http", host="127.0.0.1", port=port, backend=AsyncioBackend(), tls=None,
                      limit=limit, keepalive_s=keepalive_s)


async def get(pool: OriginPool, port: int, path: str = "/", timeouts: dict | None = None) -> tuple[int, bytes]:
    request = httpx.Request("GET", f"http://127.0.0.1:{port}{path}", extensions={"timeout": timeouts or TIMEOUTS})
    response = await pool.send(request)
    try:
        body = b"".join([chunk async for chunk in response.aiter_raw()])
    finally:
        await response.aclose()
    return response.status_code, body


def get_twice(port: int, limit: int = 1) -> list[tuple[int, bytes]]:
    """Two requests one after the other on a new pool: (status, body) of each."""

    async def run() -> list[tuple[int, bytes]]:
        pool = pool_for(port, limit=limit)
        try:
            return [await get(pool, port, "/a"), await get(pool, port, "/b")]
        finally:
            await pool.aclose()

    return asyncio.run(run())


def serve_ok(conn: socket.socket) -> None:
    while read_request(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


def test_a_keep_alive_connection_is_reused(tcp_server):
    port, accepted = tcp_server(serve_ok)

    async def run() -> list[tuple[int, bytes]]:
        pool = pool_for(port)
        try:
            return [await get(pool, port, f"/{i}") for i in range(5)]
        finally:
            await pool.aclose()

    assert asyncio.run(run()) == [(200, b"ok")] * 5
    assert len(accepted) == 1


def test_the_request_carries_host_path_query_and_headers(tcp_server):
    seen: list[bytes] = []

    def record(conn: socket.socket) -> None:
        seen.append(read_request(conn))
        conn.sendall(b"HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n")

    port, _ = tcp_server(record)

    async def run() -> httpx.Response:
        pool = pool_for(port)
        request = httpx.Request("GET", f"http://127.0.0.1:{port}/a/b?c=1&d=%20", headers={"If-None-Match": '"v1"'},
                                extensions={"timeout": TIMEOUTS})
        response = await pool.send(request)
        await response.aread()
        await pool.aclose()
        return response

    response = asyncio.run(run())
    assert response.status_code == 304 and response.headers["etag"] == '"v1"' and response.content == b""
    head = seen[0].decode()
    assert head.startswith("GET /a/b?c=1&d=%20 HTTP/1.1\r\n")
    assert f"host: 127.0.0.1:{port}" in head.lower() and 'if-none-match: "v1"' in head.lower()


def test_an_idle_connection_the_server_closed_is_not_reused(tcp_server):
    """An idle keep-alive connection the server has closed (its keep-alive timeout) reads as EOF: dropped, and
    the next request dials anew instead of failing on a dead connection."""

    def one_response_then_close(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")
        time.sleep(0.05)

    port, accepted = tcp_server(one_response_then_close)

    async def run() -> list[tuple[int, bytes]]:
        pool = pool_for(port)
        first = await get(pool, port, "/a")
        await asyncio.sleep(0.3)
        second = await get(pool, port, "/b")
        await pool.aclose()
        return [first, second]

    assert asyncio.run(run()) == [(200, b"ok"), (200, b"ok")]
    assert len(accepted) == 2


def test_an_expired_idle_connection_is_not_reused(tcp_server):
    port, accepted = tcp_server(serve_ok)

    async def run() -> None:
        pool = pool_for(port, keepalive_s=0.05)
        await get(pool, port, "/a")
        await asyncio.sleep(0.15)
        await get(pool, port, "/b")
        await pool.aclose()

    asyncio.run(run())
    assert len(accepted) == 2


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\n\r\nok",  # no length: the body runs to the end of the connection
])
def test_a_response_that_ends_the_connection_is_read_whole_and_not_reused(tcp_server, answer):
    def answer_and_close(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(answer)
        conn.shutdown(socket.SHUT_WR)

    port, accepted = tcp_server(answer_and_close)

    assert get_twice(port, limit=2) == [(200, b"ok"), (200, b"ok")]
    assert len(accepted) == 2


def test_an_informational_head_is_skipped(tcp_server):
    def continue_then_answer(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                         b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    port, accepted = tcp_server(continue_then_answer)

    assert get_twice(port, limit=2) == [(200, b"ok")] * 2 and len(accepted) == 1


def test_failures_are_httpx_errors_and_every_slot_comes_back(tcp_server):
    """Each failure is the httpx error the fetcher classifies; with a limit of one connection, the request
    after each failure still gets its slot (a leaked slot would make it wait for the pool timeout)."""
    answers = iter([
        b"",  # closed without a byte
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabcd",  # body cut short
        b"NOT HTTP AT ALL\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"X-Filler: " + b"a" * 200_000 + b"\r\n\r\n",  # a head over 100 kB
        None,  # no answer: read timeout
    ])

    def scripted(conn: socket.socket) -> None:
        read_request(conn)
        answer = next(answers, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        if answer is None:
            time.sleep(1.0)
            return
        conn.sendall(answer)
        conn.shutdown(socket.SHUT_WR)

    port, _ = tcp_server(scripted)
    quick = {**TIMEOUTS, "read": 0.3, "pool": 0.5}

    async def run() -> list[str]:
        pool = pool_for(port, limit=1)
        out = []
        for _ in range(5):
            try:
                await get(pool, port, timeouts=quick)
                out.append("no error")
            except httpx.TransportError as exc:
                out.append(f"{type(exc).__name__}: {exc}")
        out.append(repr(await get(pool, port, timeouts=quick)))
        await pool.aclose()
        return out

    got = asyncio.run(run())
    assert got[0] == "RemoteProtocolError: Server disconnected without sending a response."
    assert got[1].startswith("RemoteProtocolError: peer closed connection without sending complete message body")
    assert got[2].startswith("RemoteProtocolError")
    assert got[3].startswith("RemoteProtocolError")
    assert got[4].startswith("ReadTimeout")
    assert got[5] == "(200, b'ok')"


def test_refused_connection_is_a_connect_error():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def run() -> None:
        await get(pool_for(port), port)

    with pytest.raises(httpx.ConnectError):
        asyncio.run(run())


def test_the_connection_limit_queues_requests_and_times_out_the_pool(tcp_server):
    def slow_ok(conn: socket.socket) -> None:
        while read_request(conn):
            time.sleep(0.3)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    port, accepted = tcp_server(slow_ok)

    async def run() -> tuple[list[tuple[int, bytes]], str]:
        pool = pool_for(port, limit=1)
        both = await asyncio.gather(get(pool, port, "/a"), get(pool, port, "/b"))
        try:
            await asyncio.gather(get(pool, port, "/c"), get(pool, port, "/d", {**TIMEOUTS, "pool": 0.05}))
            error = "none"
        except httpx.PoolTimeout as exc:
            error = str(exc)
        await asyncio.sleep(0.4)  # /c finishes
        await pool.aclose()
        return list(both), error

    both, error = asyncio.run(run())
    assert both == [(200, b"ok")] * 2 and len(accepted) == 1  # one after the other, on one connection
    assert "no free connection to 127.0.0.1" in error


def test_a_cancelled_or_abandoned_request_gives_its_slot_back_and_its_connection_is_not_reused(tcp_server):
    def answer_slowly(conn: socket.socket) -> None:
        while read_request(conn):
            time.sleep(0.2)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
            time.sleep(0.1)  # the body comes later
            conn.sendall(b"ok")

    port, accepted = tcp_server(answer_slowly)

    async def run() -> tuple[int, bytes]:
        pool = pool_for(port, limit=1)
        task = asyncio.create_task(get(pool, port, "/cancelled"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # a response closed before its body arrived: the connection would still carry that body
        response = await pool.send(httpx.Request("GET", f"http://127.0.0.1:{port}/abandoned",
                                                 extensions={"timeout": TIMEOUTS}))
        await response.aclose()
        out = await get(pool, port, "/after", {**TIMEOUTS, "pool": 0.5})
        await pool.aclose()
        return out

    assert asyncio.run(run()) == (200, b"ok")
    assert len(accepted) == 3  # neither the cancelled nor the abandoned exchange's connection was reused


def test_a_response_closed_unread_keeps_its_connection_when_all_of_it_has_arrived(tcp_server):
    """The fetcher closes a 304 (and some small answers) without reading a body: when the whole response is
    already in, the connection goes back to the pool instead of being closed."""

    def not_modified(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n")

    port, accepted = tcp_server(not_modified)

    async def run() -> list[int]:
        pool = pool_for(port, limit=1)
        statuses = []
        for i in range(4):
            response = await pool.send(httpx.Request("GET", f"http://127.0.0.1:{port}/{i}",
                                                     extensions={"timeout": TIMEOUTS}))
            statuses.append(response.status_code)
            await response.aclose()
        await pool.aclose()
        return statuses

    assert asyncio.run(run()) == [304] * 4 and len(accepted) == 1


def test_a_chunked_body_is_read_whole_and_its_connection_kept(tcp_server):
    def chunked(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"5\r\nhello\r\n")
            time.sleep(0.02)  # the rest in a later packet
            conn.sendall(b"6\r\n world\r\n0\r\n\r\n")

    port, accepted = tcp_server(chunked)

    assert get_twice(port) == [(200, b"hello world")] * 2 and len(accepted) == 1


def test_bytes_that_came_after_a_response_in_the_same_read_keep_its_connection_out_of_the_pool(tcp_server):
    """A server that sends more than its response (a body with a 304, a second answer) in the same packet: those
    bytes sit in h11's buffer, not the socket's, so the idle check cannot see them. Kept, the connection would
    hand them to the next request as its response."""

    def answer_twice(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                         b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")

    port, accepted = tcp_server(answer_twice)

    assert get_twice(port) == [(200, b"ok")] * 2 and len(accepted) == 2


class _SlowToWrite(AsyncioBackend):
    """Connects, then lets the loop run a while before the request is written (a TLS handshake, a busy loop)."""

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        stream = await super().connect_tcp(host, port, timeout, local_address, socket_options)
        await asyncio.sleep(0.2)
        return stream


def test_an_answer_sent_before_the_request_could_be_written_is_the_response(tcp_server):
    """A server that answers at once and closes (a 503 when it is full) leaves the connection closing before our
    request goes out: the write fails, but the answer is there to read, and it says more than a WriteError."""

    def busy(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 4\r\n\r\nbusy")
        conn.shutdown(socket.SHUT_WR)
        time.sleep(0.5)

    port, accepted = tcp_server(busy)

    async def run() -> tuple[int, bytes]:
        pool = OriginPool(scheme="http", host="127.0.0.1", port=port, backend=_SlowToWrite(), tls=None,
                          limit=1, keepalive_s=30.0)
        out = await get(pool, port)
        assert not pool._idle  # the request never reached the server: that connection is done
        await pool.aclose()
        return out

    assert asyncio.run(run()) == (503, b"busy")


def test_an_idn_host_is_dialled_by_the_ascii_name_of_its_host_header(tcp_server):
    """httpx's url.host is the Unicode form of an IDN; the resolver (and TLS, for SNI and the certificate check)
    must get the ASCII name the Host header carries (IDNA 2008), not one Python's codec derives again from the
    Unicode form (IDNA 2003: 'faß' becomes 'fass', another domain)."""
    port, _ = tcp_server(serve_ok)
    asked: list[str] = []

    def resolver(host: str) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    async def run() -> tuple[int, bytes]:
        transport = GuardedTransport(guard=AddressGuard.from_lists([], ["127.0.0.1/32"]), resolver=resolver,
                                     address_map={}, verify_tls=True)
        request = httpx.Request("GET", f"http://xn--fa-hia.test:{port}/", extensions={"timeout": TIMEOUTS})
        response = await transport.handle_async_request(request)
        try:
            return response.status_code, await response.aread()
        finally:
            await response.aclose()
            await transport.aclose()

    assert asyncio.run(run()) == (200, b"ok")
    assert asked == ["xn--fa-hia.test"]
