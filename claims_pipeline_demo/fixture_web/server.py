"""A real HTTP server on 127.0.0.1 that plays many web sites, for tests, the demo and benchmarks.

One ThreadingHTTPServer; the virtual host is the ``Host`` header (port stripped). Clients reach it by
mapping fictional host names to it (``address_map()``, used as ``fetch.address_map``), so URLs look real.

Static sites: ``<sites_dir>/<host>/<path>``; a directory serves its ``index.html``; the content type comes
from the extension; every file gets an ETag (content hash) and a Last-Modified, and conditional requests
(If-None-Match, else If-Modified-Since) get a real 304. ``page.html.v2`` replaces ``page.html`` from epoch 2
on (``set_epoch``). ``robots.txt`` is the site folder's file (404 when absent), or, for a host given to
``robots_as(host, "/_/status/503")``, that built-in behaviour (a robots.txt that fails, hangs or redirects).

Built-in behaviours, on ANY host, under ``/_/`` (generated in code, no files needed):
  /_/page/<name>[?size=N&changes=1]  HTML page with figures; ETag/Last-Modified; changes with the epoch if asked
  /_/redirect?to=<url-or-path>       302 to the target            /_/chain/<n>  n redirects then a page
  /_/loop-a, /_/loop-b               a redirect loop               /_/status/<code>  that status (404, 410, 500…)
  /_/cookie-gate[?never=1]           Set-Cookie + 302 to itself; 200 once the cookie comes back (never: always 302)
  /_/flaky?fails=N&code=503[&retry_after=S]  first N requests (per host+path) fail with code, then a page
  /_/cf-challenge                    403 + cf-mitigated: challenge + "Just a moment..." title
  /_/cf-429                          429 + cf-mitigated (a rate-limit wall)
  /_/cf-503                          503 + cf-mitigated: challenge, plain "503" title (the header is the only marker)
  /_/cf-999                          999 (LinkedIn-style "request denied") + cf-mitigated: challenge, plain title
  /_/cf-wall?code=N&marker=M         a wall on any status N, marked by M: title ("Just a moment..."), header
                                     (cf-mitigated: challenge on a plain page with figures) or both (the default)
  /_/cf-ok                           normal 200 page that carries a cf-ray header (NOT a wall)
  /_/challenge-200                   200 whose title is "Attention Required! | Cloudflare"
  /_/js-shell                        200 thin HTML shell built by scripts
  /_/slow?delay=S                    waits S seconds before the status line
  /_/trickle?chunks=N&every=S        headers at once, then N small body pieces S seconds apart
  /_/reset                           reads the request, then resets the TCP connection (RST)
  /_/gzip-bomb?mb=N                  N MB of zeros sent gzip-compressed (Content-Encoding: gzip), ~N KB
  /_/oversized?mb=N[&chunked=1]      an N MB HTML body (with Content-Length, or streamed without it)
  /_/charset/misstated               says utf-8, is windows-1252      /_/charset/undeclared  no charset at all
  /_/charset/header-only             ISO-8859-2, named by the Content-Type header only
  /_/redirect-refused                302 to http://127.0.0.2:<port>/… (an address the SSRF guard must refuse)
  /_/binary                          a PNG image                       /_/pdf/text  a small text PDF
  /_/pdf/corrupt                     %PDF- header then garbage         /_/pdf/not-a-pdf  application/pdf, no PDF
  /_/pdf/scanned, /_/pdf/encrypted, /_/pdf/bomb   the package's sites/pdfs.fixture/{scanned,encrypted,bomb}.pdf
                                     (image only; user password; ~350 KB inflating to ~120 MB), whatever sites_dir is
  /_/pdf/padded?kb=N[&chunked=1]     a valid one-page text PDF padded (unreferenced filler object) to N*1000 bytes,
                                     with Content-Length, or streamed without it (then the connection closes)
  /_/fault/<name>[?to=<url>]         a scripted edge case (fixture_web/faults.py): octet-stream PDFs, empty/partial
                                     2xx, XHTML as XML, padded or uncompressed gzip, redirect stubs, a title trap
Every request is logged (``requests()``, and JSONL at ``log_path``): start, end, host, path, status,
If-None-Match / If-Modified-Since seen, body bytes sent.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import socket
import struct
import threading
import time
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from claims_pipeline_demo.fixture_web import make_pdfs
from claims_pipeline_demo.fixture_web.faults import fault
from claims_pipeline_demo.fixture_web.generated import (
    FIGURES_PAGE,
    JS_SHELL,
    challenge_page,
    gzip_bomb,
    header_charset_page,
    misstated_charset_page,
    page_html,
    png_bytes,
    text_pdf,
    undeclared_charset_page,
)

DEFAULT_SITES_DIR = Path(__file__).resolve().parent / "sites"
_BASE_MTIME = 1767225600.0  # 2026-01-01T00:00:00Z: generated pages' Last-Modified baseline
# The highest epoch the fixture web serves: a page is served as its variant file.vN for the highest N <= epoch,
# looked for from the epoch down, so an epoch from a hostile epoch file (10**12) would make every request hang.
MAX_EPOCH = 100


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers; every response sets Content-Length or closes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet; we keep our own structured log
        pass

    def parse_request(self) -> bool:
        self._arrived = time.time()  # the request line has just been read: the closest we get to "start"
        self.server.web._in_flight(+1)
        ok = super().parse_request()
        if not ok:  # a malformed request never reaches do_GET, which would log and decrement
            self.server.web._in_flight(-1)
        return ok

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:  # the client (or our own /_/reset) dropped the connection: nothing to report
            pass

    # ---- plumbing ---------------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        web = self.server.web
        self._start = getattr(self, "_arrived", time.time())
        self._status: int | str = 0
        self._sent = 0
        split = urlsplit(self.path)
        self._vhost = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]").lower() \
            if not (self.headers.get("Host") or "").startswith("[") else (self.headers.get("Host") or "")[1:].split("]")[0]
        if split.path == "/robots.txt" and self._vhost in web.robots_behaviours:  # logged as /robots.txt still
            split = urlsplit(web.robots_behaviours[self._vhost])
        self._query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        try:
            if split.path.startswith("/_/"):
                self._builtin(split.path[3:])
            else:
                self._static(split.path)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            self._status = self._status or "client-gone"
            self.close_connection = True
        except Exception as exc:  # a bad query (e.g. ?delay=x) is a 500 naming the problem, not a dead thread
            if not self._status:
                self._send(500, f"fixture web error: {type(exc).__name__}: {exc}".encode(), "text/plain")
            self.close_connection = True
        finally:
            web._log({
                "start": self._start, "end": time.time(), "host": self._vhost, "path": self.path,
                "status": self._status, "if_none_match": self.headers.get("If-None-Match"),
                "if_modified_since": self.headers.get("If-Modified-Since"), "bytes_sent": self._sent,
                "user_agent": self.headers.get("User-Agent"), "client_port": self.client_address[1],
            })
            web._in_flight(-1)

    def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            self._sent += len(body)

    def _send_raw(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        """Exactly these headers (plus Content-Length when they name none and a body may follow) and body."""
        self._status = status
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if status not in (204, 304) and not any(k.lower() == "content-length" for k, _ in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)
            self._sent += len(body)

    def _send_cacheable(self, body: bytes, ctype: str, mtime: float) -> None:
        """200 with validators, or 304 when the client's validators still match."""
        etag = _etag(body)
        last_modified = formatdate(mtime, usegmt=True)
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        fresh = False
        if inm is not None:  # RFC 9110: If-None-Match wins over If-Modified-Since
            fresh = etag in [t.strip().removeprefix("W/") for t in inm.split(",")] or inm.strip() == "*"
        elif ims:
            try:
                fresh = int(mtime) <= parsedate_to_datetime(ims).timestamp()
            except (TypeError, ValueError):
                fresh = False
        headers = {"ETag": etag, "Last-Modified": last_modified}
        if fresh:
            self._status = 304
            self.send_response(304)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send(200, body, ctype, headers)

    # ---- static sites -------------------------------------------------------------------------------
    def _static(self, path: str) -> None:
        web = self.server.web
        site = web.sites_dir / self._vhost
        rel = path.lstrip("/")
        target = (site / rel).resolve() if rel else site.resolve()
        if not self._vhost or site.resolve() not in (target, *target.parents) or not site.is_dir():
            self._send(404, b"<html><head><title>Not found</title></head><body>no such site</body></html>")
            return
        if target.is_dir():
            target = target / "index.html"
        chosen = web.variant_for(target)
        if chosen is None:
            self._send(404, b"<html><head><title>Not found</title></head><body>not found</body></html>")
            return
        file, variant = chosen
        body = file.read_bytes()
        ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype.startswith("text/") and "charset" not in ctype:
            ctype += "; charset=utf-8"
        self._send_cacheable(body, ctype, file.stat().st_mtime + variant * 86400)

    # ---- built-in behaviours ------------------------------------------------------------------------
    def _builtin(self, name: str) -> None:
        web, q = self.server.web, self._query
        port = self.server.server_address[1]
        if name.startswith("page/"):
            epoch = web.epoch if q.get("changes") else 1
            body = page_html(self._vhost, name[5:], epoch, int(q.get("size", "0")))
            self._send_cacheable(body, "text/html; charset=utf-8", _BASE_MTIME + epoch * 86400)
        elif name == "redirect":
            self._send(302, b"", headers={"Location": q.get("to", "/_/page/target")})
        elif name.startswith("chain/"):
            n = int(name[6:] or 0)
            loc = f"/_/chain/{n - 1}" if n > 1 else "/_/page/chain-end"
            self._send(302, b"", headers={"Location": loc})
        elif name == "cookie-gate":  # sets a cookie and redirects to itself; only a client that sends it back gets in
            if "gate=open" in (self.headers.get("Cookie") or "") and not q.get("never"):
                self._send(200, page_html(self._vhost, "cookie-gate", 1, 0))
            else:
                self._send(302, b"", headers={"Location": self.path, "Set-Cookie": "gate=open; Path=/"})
        elif name in ("loop-a", "loop-b"):
            self._send(302, b"", headers={"Location": "/_/loop-b" if name == "loop-a" else "/_/loop-a"})
        elif name.startswith("status/"):
            code = int(name[7:])
            self._send(code, f"<html><head><title>{code}</title></head><body>status {code}</body></html>".encode())
        elif name == "flaky":
            seen = web._count(self._vhost, self.path)
            if seen <= int(q.get("fails", "1")):
                headers = {"Retry-After": q["retry_after"]} if "retry_after" in q else {}
                code = int(q.get("code", "503"))
                self._send(code, f"<html><head><title>{code}</title></head><body>try later</body></html>".encode(),
                           headers=headers)
            else:
                self._send_cacheable(page_html(self._vhost, "flaky", 1, 0), "text/html; charset=utf-8", _BASE_MTIME)
        elif name == "cf-challenge":
            self._send(403, challenge_page("Just a moment..."),
                       headers={"cf-mitigated": "challenge", "cf-ray": "8a1b2c3d4e5f-CDG", "Server": "cloudflare"})
        elif name == "cf-429":
            self._send(429, challenge_page("Access denied"),
                       headers={"cf-mitigated": "challenge", "cf-ray": "8a1b2c3d4e60-CDG", "Retry-After": "0"})
        elif name in ("cf-503", "cf-999"):  # the title is no challenge title: only the header marks the wall
            code = int(name[3:])
            self._send(code, f"<html><head><title>{code}</title></head><body>request denied</body></html>".encode(),
                       headers={"cf-mitigated": "challenge", "cf-ray": "8a1b2c3d4e62-CDG", "Server": "cloudflare"})
        elif name == "cf-wall":
            marker = q.get("marker", "both")
            headers = {"cf-ray": "8a1b2c3d4e63-CDG", "Server": "cloudflare"}
            if marker in ("header", "both"):
                headers["cf-mitigated"] = "challenge"
            body = challenge_page("Just a moment...") if marker in ("title", "both") else FIGURES_PAGE
            self._send(int(q.get("code", "503")), body, headers=headers)
        elif name == "cf-ok":
            body = FIGURES_PAGE
            self._send(200, body, headers={"cf-ray": "8a1b2c3d4e61-CDG", "Server": "cloudflare",
                                           "cf-cache-status": "DYNAMIC"})
        elif name == "challenge-200":
            self._send(200, challenge_page("Attention Required! | Cloudflare"))
        elif name == "js-shell":
            self._send(200, JS_SHELL)
        elif name == "slow":
            time.sleep(float(q.get("delay", "2")))
            self._send(200, page_html(self._vhost, "slow", 1, 0))
        elif name == "trickle":
            self._trickle(int(q.get("chunks", "20")), float(q.get("every", "0.2")))
        elif name == "reset":
            self._reset()
        elif name == "gzip-bomb":
            body = gzip_bomb(int(q.get("mb", "50")))
            self._send(200, body, headers={"Content-Encoding": "gzip"})
        elif name == "oversized":
            self._oversized(int(q.get("mb", "8")), bool(q.get("chunked")))
        elif name == "charset/misstated":
            self._send(200, misstated_charset_page(), "text/html; charset=utf-8")
        elif name == "charset/undeclared":
            self._send(200, undeclared_charset_page(), "text/html")
        elif name == "charset/header-only":
            self._send(200, header_charset_page(), "text/html; charset=ISO-8859-2")
        elif name == "redirect-refused":
            self._send(302, b"", headers={"Location": f"http://127.0.0.2:{port}/_/page/internal"})
        elif name == "binary":
            self._send(200, png_bytes(), "image/png")
        elif name == "pdf/text":
            self._send_cacheable(text_pdf(), "application/pdf", _BASE_MTIME)
        elif name == "pdf/corrupt":  # a PDF header, then garbage: no page tree, no xref
            self._send(200, b"%PDF-1.7\n" + bytes(range(256)) * 8 + b"\n%%EOF\n", "application/pdf")
        elif name == "pdf/not-a-pdf":  # served as a PDF, but the body is not one
            self._send(200, b"\x00\x01garbage bytes" * 50, "application/pdf")
        elif name in ("pdf/scanned", "pdf/encrypted", "pdf/bomb"):  # the committed files, made by make_pdfs
            self._send(200, (make_pdfs.PDF_DIR / f"{name[4:]}.pdf").read_bytes(), "application/pdf")
        elif name.startswith("fault/") and (scripted := fault(name[6:], q)) is not None:
            self._send_raw(*scripted)
        elif name == "pdf/padded":
            self._send_padded_pdf(int(q.get("kb", "300")) * 1000, bool(q.get("chunked")))
        else:
            self._send(404, b"<html><head><title>Not found</title></head><body>no such behaviour</body></html>")

    def _send_padded_pdf(self, size: int, streamed: bool) -> None:
        body = _padded_pdf(size)
        if not streamed:
            self._send(200, body, "application/pdf")
            return
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/pdf")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for i in range(0, len(body), 65536):
            self.wfile.write(body[i:i + 65536])
            self._sent += len(body[i:i + 65536])

    def _trickle(self, chunks: int, every: float) -> None:
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self.wfile.write(b"<html><head><title>slowly</title></head><body>")
        for i in range(chunks):
            time.sleep(every)
            piece = f"<p>piece {i} of a page that arrives slowly</p>".encode()
            self.wfile.write(piece)
            self.wfile.flush()
            self._sent += len(piece)
        self.wfile.write(b"</body></html>")

    def _reset(self) -> None:
        self._status = "reset"
        self.close_connection = True
        # SO_LINGER with a zero timeout makes close() send RST instead of FIN: a "connection reset by peer"
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _oversized(self, mb: int, chunked: bool) -> None:
        block = (b"<p>" + b"filler text, 5.5 % of nothing " * 32 + b"</p>\n")
        total = mb * 1_000_000
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if chunked:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(total + 13))
        self.end_headers()
        self.wfile.write(b"<html><body>\n")
        sent = 0
        while sent < total:
            piece = block[: total - sent]
            self.wfile.write(piece)
            sent += len(piece)
            self._sent += len(piece)


def _padded_pdf(size: int) -> bytes:
    """A valid one-page text PDF of exactly ``size`` bytes (when size allows): an unreferenced, uncompressed
    filler object makes up the difference, so caps can be tested on a PDF that reads cleanly."""
    def build(filler: int) -> bytes:
        b = make_pdfs.PdfBuilder()
        content = b.stream(make_pdfs.text_ops([(72, 720, 12, "Padded schedule 2026"),
                                               (72, 700, 12, "Registration fee: 2.5 % above EUR 300,000")]))
        b.add(b"<< /Length %010d >>\nstream\n" % filler + b"0" * filler + b"\nendstream")  # fixed-width Length
        font = b.add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        pages = b.reserve()
        page = b.add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> "
                     b"/Contents %d 0 R >>" % (pages, font, content))
        b.set(pages, b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % page)
        return b.build(b.add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages))

    filler = max(0, size - len(build(0)))
    filler = max(0, filler - (len(build(filler)) - size))  # startxref's offset gained digits: take them back
    return build(filler)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # shutting down never waits for a handler that is sleeping on purpose
    request_queue_size = 128
    web: FixtureWeb


class FixtureWeb:
    """``with FixtureWeb() as web: web.url("www.tax.gov.xa", "/"), web.address_map()``."""

    def __init__(self, sites_dir: str | Path | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 log_path: str | Path | None = None) -> None:
        self.sites_dir = Path(sites_dir) if sites_dir else DEFAULT_SITES_DIR
        self.epoch = 1
        self.log_path = Path(log_path) if log_path else None
        self._log_lock = threading.Lock()
        self._log_entries: list[dict[str, Any]] = []
        self._counts: dict[tuple[str, str], int] = {}
        self.robots_behaviours: dict[str, str] = {}  # host -> built-in path (with query) served as its robots.txt
        self._idle = threading.Condition()
        self._active = 0  # handlers between reading a request line and logging it
        self._server = _Server((host, port), _Handler)
        self._server.web = self
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    # ---- lifecycle ----------------------------------------------------------------------------------
    def start(self) -> FixtureWeb:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fixture-web", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FixtureWeb:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- addressing ----------------------------------------------------------------------------------
    def url(self, host: str, path: str = "/") -> str:
        """The URL as a corpus would cite it (no port); ``address_map`` routes the host here."""
        return f"http://{host}{path if path.startswith('/') else '/' + path}"

    def site_hosts(self) -> list[str]:
        return sorted(p.name for p in self.sites_dir.iterdir() if p.is_dir()) if self.sites_dir.is_dir() else []

    def address_map(self, hosts: list[str] | None = None) -> dict[str, str]:
        """host -> 'ip:port' for fetch.address_map: the given hosts, else every site host and '*.fixture'."""
        target = f"{self.host}:{self.port}"
        names = hosts if hosts is not None else [*self.site_hosts(), "*.fixture"]
        return {h: target for h in names}

    # ---- state -------------------------------------------------------------------------------------
    def set_epoch(self, n: int) -> None:
        """Serve the pages of epoch n (variant_for looks at each epoch from n down: n is capped at MAX_EPOCH)."""
        self.epoch = max(0, min(int(n), MAX_EPOCH))

    def robots_as(self, host: str, behaviour: str) -> None:
        """Serve ``host``'s /robots.txt with a built-in behaviour, e.g. "/_/status/503" or "/_/slow?delay=2"."""
        if not behaviour.startswith("/_/"):
            raise ValueError(f"not a built-in behaviour: {behaviour!r}")
        self.robots_behaviours[host.lower()] = behaviour

    def variant_for(self, file: Path) -> tuple[Path, int] | None:
        """The epoch variant of a static file: ``file.vN`` for the highest N <= epoch, else the file itself."""
        for n in range(self.epoch, 1, -1):
            candidate = file.with_name(f"{file.name}.v{n}")
            if candidate.is_file():
                return candidate, n
        return (file, 0) if file.is_file() else None

    def _count(self, host: str, path: str) -> int:
        with self._log_lock:
            self._counts[(host, path)] = self._counts.get((host, path), 0) + 1
            return self._counts[(host, path)]

    # ---- request log -------------------------------------------------------------------------------
    def _log(self, entry: dict[str, Any]) -> None:
        with self._log_lock:
            self._log_entries.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    def _in_flight(self, delta: int) -> None:
        with self._idle:
            self._active += delta
            if self._active <= 0:
                self._idle.notify_all()

    def requests(self, settle_s: float = 0.5) -> list[dict[str, Any]]:
        """Every request logged so far, in arrival order (a copy).

        A client can see a response a moment before its handler logs it; so first wait (up to ``settle_s``)
        for handlers still running to finish."""
        with self._idle:
            self._idle.wait_for(lambda: self._active <= 0, timeout=settle_s)
        with self._log_lock:
            return [dict(e) for e in self._log_entries]

    def clear_log(self) -> None:
        with self._log_lock:
            self._log_entries.clear()
