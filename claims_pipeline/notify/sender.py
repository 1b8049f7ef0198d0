"""One message to one channel, in a process of its own (channels.send starts it: `python -m
claims_pipeline.notify.sender`, the job as JSON on stdin, the outcome as JSON on stdout).

Why a process: Apprise's services talk through requests, smtplib and others, each with its own sockets and threads.
In a process of its own the send is
  - guarded: an audit hook (sys.addaudithook, which cannot be removed: hence not in the caller's process) checks
    every socket.connect / sendto against the deployment's address rules (guard.py) before it happens, whatever
    library makes it; a connect by name or to a Unix socket is refused (every library here resolves first);
  - bounded: requests follows a redirect only within the channel's origin (a redirect elsewhere is not followed,
    so the message and its secret headers never leave the origin the settings named), reads at most
    BODY_CAP_BYTES of an answer, and proxies from the environment are not used; the caller kills the process at
    the send's deadline, and an alarm ends it too should the caller die first;
  - unable to keep the caller alive: a worker thread stuck in a socket read dies with the process.
Nothing of the URL or of Apprise's log reaches the caller's log: the outcome is a line the caller redacts."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from typing import Any
from urllib.parse import urljoin, urlsplit

from claims_pipeline.notify.guard import ChannelGuard, Reach
from claims_pipeline.web.ssrf import AddressRefused

BODY_CAP_BYTES = 64 * 1024  # a webhook's answer is read for its status only: no service needs more to say "ok"
_notes: list[str] = []  # what the guards stopped, said in the outcome (Apprise's own line names no cause)


class NotAllowed(ConnectionRefusedError):
    """An OSError, so that a library trying a name's addresses in turn goes on to the next one."""


def _note(text: str) -> None:
    if text not in _notes:
        _notes.append(text)


def install_address_hook(guard: ChannelGuard) -> None:
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in ("socket.connect", "socket.sendto", "socket.sendmsg"):
            return
        sock, address = args[0], args[-1]
        if address is None:  # a send on a connected socket: its connect was checked
            return
        family = getattr(sock, "family", None)
        if family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
            _note("a connection that is not TCP/UDP over IP was refused")
            raise NotAllowed("notifications connect over IP only")
        host = str(address[0])
        try:
            guard.check(host)
        except ValueError:  # a name, resolved by the C library behind the check's back
            _note(f"a connection by name ({host}) was refused")
            raise NotAllowed(f"connect by name {host!r} refused: not checked") from None
        except AddressRefused as exc:
            _note(f"refused address {exc.address} ({exc.reason})")
            raise NotAllowed(str(exc)) from None

    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        infos = real_getaddrinfo(host, *args, **kwargs)
        if isinstance(host, str) and guard.is_allowed_name(host):  # fetch.allow_hosts names a host, not an address
            guard.note_resolved(str(info[4][0]) for info in infos)
        return infos

    socket.getaddrinfo = getaddrinfo
    sys.addaudithook(hook)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def install_http_bounds() -> None:
    import requests

    target_of = requests.sessions.SessionRedirectMixin.get_redirect_target

    def same_origin_target(self: Any, resp: Any) -> Any:
        target = target_of(self, resp)
        if target is not None and _origin(urljoin(resp.url, target)) != _origin(resp.url):
            _note(f"HTTP {resp.status_code}: a redirect to another origin was not followed")
            return None
        return target

    read: Any = requests.models.Response.iter_content

    def capped(self: Any, chunk_size: int = 1, decode_unicode: bool = False) -> Any:
        # the answer's status says whether the message was taken; of its body, the first BODY_CAP_BYTES are kept
        # (a service's error text) and the connection is closed on the rest
        size = 0
        for chunk in read(self, chunk_size, decode_unicode):
            if size + len(chunk) > BODY_CAP_BYTES:
                yield chunk[: BODY_CAP_BYTES - size]
                self.close()
                return
            size += len(chunk)
            yield chunk

    requests.sessions.SessionRedirectMixin.get_redirect_target = same_origin_target  # type: ignore[method-assign]
    requests.models.Response.iter_content = capped  # type: ignore[method-assign, assignment]


def send(job: dict[str, Any]) -> dict[str, Any]:
    import logging

    import apprise

    logging.getLogger("apprise").propagate = False
    asset = apprise.AppriseAsset()
    sender = apprise.Apprise(asset=asset)
    if not sender.add(job["url"]):
        return {"ok": False, "error": "not a URL Apprise can send to (unknown service, or a required part missing)"}
    kinds = {"failure": apprise.NotifyType.FAILURE, "warning": apprise.NotifyType.WARNING}
    result = sender.notify(body=job["body"], title=job["title"], notify_type=kinds.get(job["kind"], apprise.NotifyType.INFO),
                           body_format=apprise.NotifyFormat.TEXT, log_level=logging.WARNING)
    if result:  # an address refused on the way (a name's IPv6 one) does not undo a delivery
        return {"ok": True}
    said = [e.message for e in result.logs() if e.level in ("WARNING", "ERROR", "CRITICAL")]
    why = "; ".join(dict.fromkeys([*_notes, *(line.strip() for line in said if line.strip())]))[:400]
    status = result.status.name.lower()
    return {"ok": False, "error": f"{status}: {why}" if why else status}


def main() -> None:
    job = json.loads(sys.stdin.read())
    # should the caller die before it can kill this process, the process still ends (SIGALRM's default)
    signal.alarm(max(1, int(float(job["deadline_s"])) + 2))
    install_address_hook(ChannelGuard(Reach(tuple(job["allow_hosts"]), tuple(job["allow_networks"]),
                                            loopback=bool(job["loopback"]))))
    install_http_bounds()
    try:
        outcome = send(job)
    except Exception as exc:  # a plugin's own bug: recorded like a refusal
        outcome = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}
    sys.stdout.write(json.dumps(outcome))
    sys.stdout.flush()
    os._exit(0)  # a thread Apprise left behind must not hold the exit


if __name__ == "__main__":
    main()
