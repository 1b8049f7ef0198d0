"""The fetcher's asyncio network backend against real sockets on 127.0.0.1: flow
control both ways, timeouts, resets, refused connections. (TLS: test_fetcher_units.py's HTTPS server; keep-alive
reuse and expiry: test_connection_reuse.py.)"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import struct
import threading
import time

import httpcore

from claims_pipeline.web.asyncio_stream import AsyncioBackend
from claims_pipeline_tests.web.conftest import read_request


def test_a_large_body_read_slowly_arrives_whole(tcp_server):
    """Reading stops at the high-water mark (the kernel buffers, the sender waits) and resumes: nothing lost."""
    body = bytes(range(256)) * (6 * 1024 * 1024 // 256)  # 6 MB, more than the socket buffers hold
    expected = hashlib.sha256(body).hexdigest()

    def send_big(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    port, _ = tcp_server(send_big)
    paused_seen = []

    async def run() -> str:
        backend = AsyncioBackend()
        stream = await backend.connect_tcp("127.0.0.1", port, timeout=2)
        await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout=2)
        got = bytearray()
        while True:
            chunk = await stream.read(65536, timeout=5)
            if not chunk:
                break
            got += chunk
            paused_seen.append(stream._protocol.read_paused)  # type: ignore[attr-defined]
            if len(got) % (1024 * 1024) < 65536:
                await asyncio.sleep(0.02)  # a slow consumer
            if len(got) >= len(body):
                head, _, rest = bytes(got).partition(b"\r\n\r\n")
                if len(rest) >= len(body):
                    break
        await stream.aclose()
        return hashlib.sha256(bytes(got).partition(b"\r\n\r\n")[2][: len(body)]).hexdigest()

    assert asyncio.run(run()) == expected
    assert any(paused_seen), "the buffer never reached the high-water mark: the test proves nothing"


def test_a_large_write_waits_for_a_slow_reader_and_times_out_on_a_stuck_one(tcp_server):
    received = []

    def slow_reader(conn: socket.socket) -> None:
        total = 0
        while chunk := conn.recv(65536):
            total += len(chunk)
            time.sleep(0.001)
        received.append(total)

    stuck = threading.Event()

    def never_reads(conn: socket.socket) -> None:
        stuck.wait(5)

    port_slow, _ = tcp_server(slow_reader)
    port_stuck, _ = tcp_server(never_reads)
    payload = b"x" * (16 * 1024 * 1024)

    async def run() -> type[Exception] | None:
        backend = AsyncioBackend()
        stream = await backend.connect_tcp("127.0.0.1", port_slow, timeout=2)
        await stream.write(payload, timeout=20)
        await stream.aclose()
        stuck_stream = await backend.connect_tcp("127.0.0.1", port_stuck, timeout=2)
        try:
            await stuck_stream.write(payload * 4, timeout=0.3)
        except httpcore.WriteTimeout as exc:
            return type(exc)
        finally:
            await stuck_stream.aclose()
        return None

    started = time.monotonic()
    assert asyncio.run(run()) is httpcore.WriteTimeout
    stuck.set()
    deadline = time.monotonic() + 10
    while not received and time.monotonic() < deadline:
        time.sleep(0.01)
    assert received == [len(payload)]
    assert time.monotonic() - started < 20


def test_read_timeout_reset_and_refused_are_httpcore_errors(tcp_server):
    silent = threading.Event()

    def says_nothing(conn: socket.socket) -> None:
        silent.wait(5)

    def resets(conn: socket.socket) -> None:
        read_request(conn)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() sends RST

    port_silent, _ = tcp_server(says_nothing)
    port_reset, _ = tcp_server(resets)
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port_closed = unused.getsockname()[1]

    async def run() -> dict[str, BaseException]:
        backend = AsyncioBackend()
        errors: dict[str, BaseException] = {}
        stream = await backend.connect_tcp("127.0.0.1", port_silent, timeout=2)
        t0 = time.monotonic()
        try:
            await stream.read(1024, timeout=0.2)
        except httpcore.ReadTimeout as exc:
            errors["timeout"] = exc
            errors["timeout_s"] = time.monotonic() - t0  # type: ignore[assignment]
        await stream.aclose()
        stream = await backend.connect_tcp("127.0.0.1", port_reset, timeout=2)
        await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout=2)
        try:
            while await stream.read(1024, timeout=2):
                pass
        except httpcore.ReadError as exc:
            errors["reset"] = exc
        try:
            await stream.write(b"more", timeout=1)
        except httpcore.WriteError as exc:
            errors["write_after_reset"] = exc
        try:
            await backend.connect_tcp("127.0.0.1", port_closed, timeout=2)
        except httpcore.ConnectError as exc:
            errors["refused"] = exc
        return errors

    errors = asyncio.run(run())
    silent.set()
    assert isinstance(errors["timeout"], httpcore.ReadTimeout) and 0.15 < errors["timeout_s"] < 2  # type: ignore[operator]
    assert "reset" in str(errors["reset"]).lower()
    assert isinstance(errors["write_after_reset"], httpcore.WriteError)
    assert "refused" in str(errors["refused"]).lower()
