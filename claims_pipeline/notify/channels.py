"""The channels of notify.urls / notify.urls_env, and one message sent to one of them through Apprise, in a
process of its own that checks every address it dials (sender.py, guard.py).

A channel is named by its position and service ("channel 2 (mailtos)"), never by its URL: a URL may carry a token
or a password. ${ENV_VAR} in a URL is read from the environment when the message is sent; every value read so,
and the expanded URL, is a secret: none appears in what send() returns (the error it records), and Apprise's own
log lines (which may quote an address) stay in the sending process, which writes them nowhere."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from claims_pipeline.config.settings import ENV_REF_RE, NotifySettings
from claims_pipeline.notify.guard import Reach

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class Channel:
    id: str  # a stable digest of the URL as written (before ${VAR} is read): the state file's key
    label: str  # "channel 2 (mailtos)": what logs, metadata and errors call it
    url: str = field(repr=False)  # the URL to send to (secrets included); "" when it cannot be formed
    problem: str = ""  # why it cannot be formed (a variable not set), in words safe to record
    secrets: tuple[str, ...] = field(default=(), repr=False)


def channels(settings: NotifySettings, environ: Mapping[str, str] | None = None) -> list[Channel]:
    """Every configured channel: notify.urls in order, then those of the variable notify.urls_env names."""
    env = os.environ if environ is None else environ
    written = [(u.strip(), False) for u in settings.urls if u.strip()]
    if settings.urls_env:
        written += [(u, True) for u in env.get(settings.urls_env, "").split()]
    out = []
    for n, (template, from_env) in enumerate(written, start=1):
        scheme = _SCHEME_RE.match(template)
        label = f"channel {n} ({scheme.group(1).lower() if scheme else 'unknown service'})"
        digest = hashlib.sha256(template.encode("utf-8")).hexdigest()[:16]
        # a URL from the environment is a secret as a whole, as is every value a ${VAR} brings in
        secrets = [template] if from_env else []
        names = ENV_REF_RE.findall(template)
        missing = sorted({name for name in names if not env.get(name)})
        values = [env[name] for name in names if env.get(name)]
        secrets += values + [quote(v, safe="") for v in values]  # as read, and as a log line may quote it
        url = ENV_REF_RE.sub(lambda m: env.get(m.group(1)) or "", template)
        if missing:
            out.append(Channel(digest, label, "", f"environment variable {', '.join(missing)} not set"))
            continue
        out.append(Channel(digest, label, url, secrets=tuple(s for s in {*secrets, url} if len(s) >= 4)))
    if settings.urls_env and not env.get(settings.urls_env, "").split():  # named, so it is meant to be set
        out.append(Channel("env:" + settings.urls_env, f"channels of {settings.urls_env}", "",
                           f"environment variable {settings.urls_env} not set"))
    return out


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """text with every secret (longest first, so a value inside the URL goes with the URL) replaced by ***."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class Sent:
    ok: bool
    error: str = ""  # why not, with the secrets taken out


def send(channel: Channel, title: str, body: str, *, reach: Reach | None = None, timeout_s: float = 30.0,
         failure: bool = False, warning: bool = False) -> Sent:
    """One message to one channel, in a process of its own (sender.py: every address it dials checked against
    `reach` and the fixed refusals of guard.py, redirects kept to the channel's origin, answers bounded), ended at
    `timeout_s` whatever the service does. Never raises: a channel that is down, refuses, is not allowed or cannot
    be formed is a Sent(ok=False) saying why, with its secrets taken out."""
    if channel.problem:
        return Sent(False, channel.problem)
    reach = reach or Reach()
    job = {"url": channel.url, "title": title, "body": body, "deadline_s": timeout_s,
           "kind": "failure" if failure else "warning" if warning else "info",
           "allow_hosts": list(reach.allow_hosts), "allow_networks": list(reach.allow_networks),
           "loopback": reach.loopback}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "claims_pipeline.notify.sender"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_sender_environment(), text=True)
    except OSError as exc:
        return Sent(False, f"cannot start the sending process: {exc}"[:400])
    try:
        out, err = proc.communicate(json.dumps(job), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=5)
        return Sent(False, f"no answer within notify.timeout_s ({timeout_s:g} s): the send was ended")
    except BaseException:  # a stop of the command: the send goes with it
        proc.kill()
        raise
    try:
        outcome = json.loads(out)
    except ValueError:
        last = (err.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return Sent(False, redact(f"the sending process failed: {last}", channel.secrets)[:400])
    if outcome.get("ok"):
        return Sent(True)
    return Sent(False, redact(str(outcome.get("error") or "failed"), channel.secrets)[:400])


# a proxy of the environment would be dialled instead of the channel, and reach what the guard refuses for it
_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy"}


def _sender_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.lower() not in _PROXY_VARIABLES}
    # the sender is this package's module: found where this one was, installed or not
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return env
