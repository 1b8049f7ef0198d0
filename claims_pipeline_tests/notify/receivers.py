"""Real receivers on 127.0.0.1 for the notification tests: an HTTP webhook (what Apprise's json:// sends to)
and an SMTP server (aiosmtpd) that accepts one login. Each records what it was sent; the webhook can be taken
down (it answers 503) and brought back."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Webhook:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []  # {"path": ..., "json": ...}
        self.down = False
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if hook.down:
                    self.send_response(503)
                    self.end_headers()
                    return
                hook.received.append({"path": self.path, "json": json.loads(body or b"null")})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Webhook:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class Mailbox:
    """aiosmtpd on 127.0.0.1, accepting AUTH LOGIN/PLAIN of one user and password (over plain SMTP: a test
    on loopback), storing each message it accepts."""

    def __init__(self, user: str, password: str) -> None:
        self.messages: list[EmailMessage] = []
        self.logins: list[str] = []
        box = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
                box.messages.append(message_from_bytes(envelope.content, policy=policy.default))  # type: ignore[arg-type]
                return "250 OK"

        def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
            ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
            if ok:
                box.logins.append(user)
            return AuthResult(success=ok)

        # aiosmtpd's Controller connects to its own port to see it is up, so it needs the number beforehand
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, authenticator=authenticator,
                                     auth_require_tls=False)

    def __enter__(self) -> Mailbox:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()

    def bodies(self) -> list[str]:
        out = []
        for m in self.messages:
            part = m.get_body(preferencelist=("plain", "html"))
            out.append(part.get_content() if part is not None else "")
        return out


@contextmanager
def receivers(user: str, password: str) -> Iterator[tuple[Webhook, Mailbox]]:
    with Webhook() as hook, Mailbox(user, password) as box:
        yield hook, box


class Endpoint:
    """An HTTP server on `host` (127.0.0.1, or a loopback alias such as 127.0.0.2 standing in for an internal
    host the guard must refuse) that records every request it gets, headers included, and answers as `answer`
    says (or answer(path) says): "ok" (200), ("redirect", url, status), ("trickle", seconds per byte) after the headers, or ("giant",
    bytes) of body written as fast as the client reads (`written` counts what the client took)."""

    def __init__(self, host: str = "127.0.0.1", answer: Any = "ok") -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer = answer
        self.written = 0
        self.stop = threading.Event()
        end = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                end.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                answer = end.answer(self.path) if callable(end.answer) else end.answer
                kind = answer if isinstance(answer, str) else answer[0]
                if kind == "redirect":
                    self.send_response(answer[2] if len(answer) > 2 else 307)
                    self.send_header("Location", answer[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif kind == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Length", "1000000")
                    self.end_headers()
                    while not end.stop.wait(answer[1]):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                elif kind == "giant":
                    self.send_response(200)
                    self.send_header("Content-Length", str(answer[1]))
                    self.end_headers()
                    chunk = b"0" * 65536
                    while end.written < answer[1] and not end.stop.is_set():
                        self.wfile.write(chunk)
                        end.written += len(chunk)
                else:
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")

            do_GET = do_PUT = do_POST  # noqa: N815 (a 302 turns the POST into a GET: recorded all the same)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hangs up on a giant or trickled answer is what the tests make happen

        self.server = Server((host, 0), Handler)
        self.host = host
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"{self.host}:{self.port}"

    def __enter__(self) -> Endpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
