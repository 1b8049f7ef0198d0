"""The fetcher's keep-alive connections (httpcore's pool under httpx, dialled through the guarded backend), seen
from the fetcher: raw servers on 127.0.0.1 answer exactly what each test needs, and each test asserts the
FetchResults and how many connections the server accepted. Reuse across 304s and pages, idle connections the
server closed, responses that end their connection, 1xx heads, truncated, missing and oversized answers as the
usual fetch statuses, bytes sent after a response never read as the next one, an IDN host dialled (and its TLS
name sent) in its ASCII form."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import threading
import time
from typing import Any

import pytest

from claims_pipeline.config.settings import Settings, settings_from_dict
from claims_pipeline.web import transport
from claims_pipeline.web.asyncio_stream import AsyncioBackend
from claims_pipeline.web.fetcher import Fetcher
from claims_pipeline.web.records import FetchResult, FetchStatus
from claims_pipeline.web.transport import tls_context
from claims_pipeline_tests.time_scale import scaled
from claims_pipeline_tests.web.conftest import read_request, run_fetch


def page(name: str) -> bytes:
    text = f"{name} states a rate of 6.32 % for the year. " * 12
    return f"<html><head><title>{name}</title></head><body><p>{text}</p></body></html>".encode()


def ok_answer(name: str, extra: bytes = b"") -> bytes:
    body = page(name)
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


def path_of(head: bytes) -> str:
    return head.split(b" ", 2)[1].decode()


def settings_for(port: int, hosts: list[str], **overrides: Any) -> Settings:
    """One connection per host at a time (requests on a host run one after the other), robots.txt off so the
    raw server sees only the pages."""
    fetch: dict[str, Any] = {
        "address_map": {h: f"127.0.0.1:{port}" for h in hosts},
        "allow_networks": ["127.0.0.1/32"],
        "default_host": {"concurrency": 1, "interval_ms": 0},
        "gov_host": {"concurrency": 1, "interval_ms": 0},
        "per_host_overrides": {},
        "robots_enabled": False,
        "req_per_sec": 500,
        "connect_timeout_s": 1.0,
        "request_timeout_s": 1.0,
        "max_retries": 1,
        "retry_backoff_s": [0.02],
        "retry_jitter_pct": 0,
        "max_html_bytes": 100_000,
        "breaker_failures": 50,
    }
    fetch.update(overrides)
    return settings_from_dict({"fetch": fetch})


def by_path(results: list[FetchResult]) -> dict[str, FetchResult]:
    return {r.url.split("/", 3)[3]: r for r in results}


def test_304s_and_pages_share_one_keep_alive_connection(tcp_server):
    """A 304 is closed by the fetcher without reading a body: the connection still goes back to the pool."""
    seen: list[bytes] = []

    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            seen.append(head)
            path = path_of(head)
            if path.startswith("/same"):
                conn.sendall(b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n')
            else:
                conn.sendall(ok_answer(path))

    port, accepted = tcp_server(serve)
    urls = [f"http://keep.fixture:{port}/same{i}?q=1&r=%20" for i in range(4)] + \
        [f"http://keep.fixture:{port}/page{i}" for i in range(2)]
    results = run_fetch(settings_for(port, ["keep.fixture"]), urls,
                        validators={u: ('"v1"', None) for u in urls[:4]})
    statuses = [r.status for r in sorted(results, key=lambda r: r.url)]
    assert statuses == [FetchStatus.OK] * 2 + [FetchStatus.NOT_MODIFIED] * 4
    assert len(accepted) == 1
    first = seen[0].decode().lower()
    assert first.startswith("get /same0?q=1&r=%20 http/1.1\r\n")
    assert f"host: keep.fixture:{port}" in first and 'if-none-match: "v1"' in first


def test_an_idle_connection_the_server_closed_is_dialled_anew_without_a_failure(tcp_server):
    """The server's keep-alive timeout closes the idle connection between two requests on a host: the next
    request dials again instead of failing (and being retried) on a dead connection."""

    def one_answer_then_close(conn: socket.socket) -> None:
        conn.sendall(ok_answer(path_of(read_request(conn))))
        time.sleep(0.05)

    port, accepted = tcp_server(one_answer_then_close)
    settings = settings_for(port, ["idle.fixture"], default_host={"concurrency": 1, "interval_ms": 300})
    results = run_fetch(settings, [f"http://idle.fixture:{port}/a", f"http://idle.fixture:{port}/b"])
    assert [(r.status, r.attempts) for r in results] == [(FetchStatus.OK, 1)] * 2
    assert len(accepted) == 2


def test_an_idle_connection_past_its_keep_alive_time_is_not_reused(tcp_server, monkeypatch):
    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            conn.sendall(ok_answer(path_of(head)))

    port, accepted = tcp_server(serve)
    monkeypatch.setattr(transport, "KEEPALIVE_S", 0.05)
    settings = settings_for(port, ["expiry.fixture"], default_host={"concurrency": 1, "interval_ms": 200})
    results = run_fetch(settings, [f"http://expiry.fixture:{port}/a", f"http://expiry.fixture:{port}/b"])
    assert [r.status for r in results] == [FetchStatus.OK] * 2 and len(accepted) == 2


def test_a_request_cut_off_by_its_deadline_gives_its_connection_up_and_the_host_goes_on(tcp_server):
    """The response deadline cancels a trickling answer inside the pool: with one connection per host, the next
    page still gets one (a leaked slot would wait out the pool timeout), and it is a new one."""

    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            if path_of(head) == "/trickle":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n<html>")
                for _ in range(20):
                    time.sleep(0.05)
                    conn.sendall(b"x")
                return
            conn.sendall(ok_answer(path_of(head)))

    port, accepted = tcp_server(serve)
    settings = settings_for(port, ["cut.fixture"], request_timeout_s=0.4)
    results = by_path(run_fetch(settings, [f"http://cut.fixture:{port}/trickle", f"http://cut.fixture:{port}/after"]))
    assert results["trickle"].status == FetchStatus.UNAVAILABLE and "deadline" in results["trickle"].note
    assert results["after"].status == FetchStatus.OK and results["after"].elapsed_s < 0.4
    assert len(accepted) == 2


@pytest.mark.parametrize("answer", [
    ok_answer("/x", b"Connection: close\r\n"),
    ok_answer("/x").replace(b"HTTP/1.1", b"HTTP/1.0", 1),
    ok_answer("/x").replace(b"Content-Length", b"X-No-Length", 1),  # the body runs to the end of the connection
], ids=["connection-close", "http-1.0", "read-to-eof"])
def test_a_response_that_ends_its_connection_is_read_whole_and_its_connection_not_reused(tcp_server, answer):
    def answer_and_close(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(answer)
        conn.shutdown(socket.SHUT_WR)

    port, accepted = tcp_server(answer_and_close)
    results = run_fetch(settings_for(port, ["close.fixture"]), [f"http://close.fixture:{port}/{i}" for i in range(3)])
    assert all(r.status == FetchStatus.OK and "6.32 %" in r.text for r in results), [r.note for r in results]
    assert len(accepted) == 3


def test_informational_heads_are_skipped_and_a_chunked_body_is_read_whole(tcp_server):
    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            body = page(path_of(head))
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                         b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"%x\r\n%s\r\n" % (100, body[:100]))
            time.sleep(0.02)  # the rest in a later packet
            conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) - 100, body[100:]))

    port, accepted = tcp_server(serve)
    results = run_fetch(settings_for(port, ["hints.fixture"]), [f"http://hints.fixture:{port}/p{i}" for i in range(3)])
    assert sorted(r.text.split(" states")[0] for r in results) == ["/p0", "/p1", "/p2"]
    assert len(accepted) == 1


def test_broken_answers_become_fetch_statuses_and_the_host_goes_on(tcp_server):
    """Each broken answer is the status a person can act on; with one connection per host, the page after them
    still gets its connection (one kept by a failed exchange would make it wait for the pool timeout)."""
    answers = {
        "/silent": b"",  # closed without a byte
        "/cut": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n<html><body>abcd",
        "/garbage": b"NOT HTTP AT ALL\r\n\r\n",
        "/huge-head": b"HTTP/1.1 200 OK\r\nX-Filler: " + b"a" * 200_000 + b"\r\n\r\n",
        "/too-large": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>" + b"x" * 150_000,
        "/declared-large": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 900000\r\n\r\n<html>",
        "/no-answer": None,
    }

    def scripted(conn: socket.socket) -> None:
        while head := read_request(conn):
            answer = answers.get(path_of(head), ok_answer(path_of(head)))
            if answer is None:
                time.sleep(1.5)
                return
            conn.sendall(answer)
            if path_of(head) in answers:
                conn.shutdown(socket.SHUT_WR)
                return

    port, _ = tcp_server(scripted)
    urls = [f"http://broken.fixture:{port}{p}" for p in answers] + [f"http://broken.fixture:{port}/fine"]
    got = by_path(run_fetch(settings_for(port, ["broken.fixture"], request_timeout_s=0.5), urls))
    expect = {
        "silent": (FetchStatus.UNAVAILABLE, "RemoteProtocolError: Server disconnected without sending a response."),
        "cut": (FetchStatus.UNAVAILABLE, "RemoteProtocolError: peer closed connection without sending complete message body"),
        "garbage": (FetchStatus.UNAVAILABLE, "RemoteProtocolError"),
        "huge-head": (FetchStatus.UNAVAILABLE, "RemoteProtocolError"),
        "too-large": (FetchStatus.TOO_LARGE, "100000"),
        "declared-large": (FetchStatus.TOO_LARGE, "Content-Length 900000"),
        # the read timeout and the response deadline are both 0.5 s: either may fire first
        "no-answer": (FetchStatus.UNAVAILABLE, ("ReadTimeout", "response deadline 0.5 s exceeded")),
        "fine": (FetchStatus.OK, ""),
    }
    for name, (status, notes) in expect.items():
        r = got[name]
        assert r.status == status and any(n in r.note for n in (notes if isinstance(notes, tuple) else (notes,))), \
            (name, r.status, r.note)


def test_a_response_left_unfinished_does_not_lend_its_connection(tcp_server):
    """A body abandoned at the size cap still has bytes on its way: that connection is closed, the next page gets
    a new one and its own answer."""

    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            if path_of(head).startswith("/big"):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in range(30):
                    conn.sendall(b"2710\r\n" + b"y" * 10_000 + b"\r\n")
                conn.sendall(b"0\r\n\r\n")
            else:
                conn.sendall(ok_answer(path_of(head)))

    port, accepted = tcp_server(serve)
    settings = settings_for(port, ["cap.fixture"], max_html_bytes=100_000)
    results = by_path(run_fetch(settings, [f"http://cap.fixture:{port}/big?x", f"http://cap.fixture:{port}/after"]))
    assert results["big?x"].status == FetchStatus.TOO_LARGE and "100000" in results["big?x"].note
    assert results["after"].status == FetchStatus.OK and results["after"].text.startswith("/after states")
    assert len(accepted) == 2


@pytest.mark.parametrize("stray", [
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(page("/stray")), page("/stray")),
    page("/stray"),  # a body sent with the 304
], ids=["a-second-answer", "a-304-body"])
def test_bytes_sent_after_a_304_are_never_read_as_the_next_response(tcp_server, stray):
    """A server that sends more than its 304 in the same packet: those bytes sit in the HTTP parser's buffer, not
    the socket's, where the idle check cannot see them. Kept, the connection would hand them to the next request
    as its response (the next page would get "/stray"'s text, or a protocol error and a retry)."""

    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            if path_of(head).startswith("/cached"):
                conn.sendall(b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n' + stray)
            else:
                conn.sendall(ok_answer(path_of(head)))

    port, accepted = tcp_server(serve)
    urls = [f"http://stray.fixture:{port}/cached", f"http://stray.fixture:{port}/next",
            f"http://stray.fixture:{port}/cached2", f"http://stray.fixture:{port}/last"]
    results = by_path(run_fetch(settings_for(port, ["stray.fixture"]), urls,
                                validators={urls[0]: ('"v1"', None), urls[2]: ('"v1"', None)}))
    assert results["cached"].status == results["cached2"].status == FetchStatus.NOT_MODIFIED
    for name in ("next", "last"):
        r = results[name]
        assert (r.status, r.attempts, r.text.split(" states")[0]) == (FetchStatus.OK, 1, f"/{name}"), r.note
    assert len(accepted) == 3  # each 304's connection is dropped: /next and /cached2 shared the second one


def test_bytes_sent_after_a_page_are_never_read_as_the_next_response(tcp_server):
    def serve(conn: socket.socket) -> None:
        while head := read_request(conn):
            conn.sendall(ok_answer(path_of(head)) + ok_answer("/stray"))

    port, accepted = tcp_server(serve)
    results = run_fetch(settings_for(port, ["twice.fixture"]), [f"http://twice.fixture:{port}/p{i}" for i in range(3)])
    assert sorted(r.text.split(" states")[0] for r in results) == ["/p0", "/p1", "/p2"]
    assert len(accepted) == 3


def test_a_host_never_has_more_connections_than_its_concurrency(tcp_server):
    open_now, most = [0], [0]
    lock = threading.Lock()

    def slow(conn: socket.socket) -> None:
        with lock:
            open_now[0] += 1
            most[0] = max(most[0], open_now[0])
        try:
            while head := read_request(conn):
                time.sleep(0.1)
                conn.sendall(ok_answer(path_of(head)))
        finally:
            with lock:
                open_now[0] -= 1

    port, accepted = tcp_server(slow)
    settings = settings_for(port, ["busy.fixture"], default_host={"concurrency": 2, "interval_ms": 0})
    results = run_fetch(settings, [f"http://busy.fixture:{port}/p{i}" for i in range(6)])
    assert all(r.status == FetchStatus.OK for r in results)
    assert most[0] == 2 and len(accepted) == 2


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
        conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
        conn.shutdown(socket.SHUT_WR)
        time.sleep(0.5)

    port, accepted = tcp_server(busy)

    async def run() -> list[FetchResult]:
        async with Fetcher(settings_for(port, ["full.fixture"]).fetch, settings_for(port, ["full.fixture"]).pdf, inner_backend=_SlowToWrite()) as f:
            return [r async for r in f.fetch_many([f"http://full.fixture:{port}/"])]

    [r] = asyncio.run(run())
    assert (r.status, r.http_status) == (FetchStatus.UNAVAILABLE, 503) and r.note.startswith("http 503"), r.note


@pytest.fixture
def idn_tls_server(tmp_path, tcp_server):
    """An HTTPS server on 127.0.0.1 that records the TLS server name (SNI) and Host header of every request."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=xn--fa-hia.test", "-addext",
                    "subjectAltName=DNS:xn--fa-hia.test"], check=True, capture_output=True, timeout=scaled(30))
    names: list[str | None] = []
    heads: list[bytes] = []
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.sni_callback = lambda sock, name, _ctx: names.append(name)

    def handler(raw: socket.socket) -> None:
        with ctx.wrap_socket(raw, server_side=True) as conn:
            while head := read_request(conn):
                heads.append(head)
                conn.sendall(ok_answer("/idn"))

    port, _ = tcp_server(handler)
    return port, cert, names, heads


def test_an_idn_host_is_dialled_and_named_to_tls_by_its_ascii_name(idn_tls_server, monkeypatch):
    """The resolver, the certificate check and SNI get the ASCII (IDNA 2008) name the Host header carries, never
    one re-encoded from the Unicode form (IDNA 2003 turns 'faß' into 'fass', another domain)."""
    port, cert, names, heads = idn_tls_server
    asked: list[str] = []

    def resolver(host: str) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    # the test certificate is the only one trusted, in a TLS context built for this test alone
    monkeypatch.setenv(ssl.get_default_verify_paths().openssl_cafile_env, str(cert))
    tls_context.cache_clear()
    try:
        [r] = run_fetch(settings_for(port, [], address_map={}), [f"https://faß.test:{port}/"], resolver=resolver)
    finally:
        tls_context.cache_clear()
    assert r.status == FetchStatus.OK, r.note  # the certificate names xn--fa-hia.test: checked against that name
    assert asked == ["xn--fa-hia.test"] and names == ["xn--fa-hia.test"]
    assert f"host: xn--fa-hia.test:{port}".encode() in heads[0].lower()
