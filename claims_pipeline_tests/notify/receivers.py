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
