"""The channels of notify.urls / notify.urls_env, and one message sent to one of them through Apprise.

A channel is named by its position and service ("channel 2 (mailtos)"), never by its URL: a URL may carry a token
or a password. ${ENV_VAR} in a URL is read from the environment when the message is sent; every value read so,
and the expanded URL, is a secret: none appears in what send() returns (the error it records), and Apprise's own
log lines (which may quote an address) never reach the process's log handlers."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from claims_pipeline.config.settings import ENV_REF_RE, NotifySettings

_APPRISE_LOG = logging.getLogger("apprise")
# Apprise logs through the "apprise" logger, naming services by address (a webhook's path may be its token):
# nothing of it propagates to the root logger (the CLI's stderr, a Dagster run's captured logs); the result of
# each send is recorded by this module, with the secrets taken out.
_APPRISE_LOG.propagate = False
_APPRISE_LOG.addHandler(logging.NullHandler())

# The HTTP and e-mail libraries under Apprise log each request at DEBUG with its path (a webhook's token) or host;
# Apprise itself too, and its notify() may let its records propagate while it captures them, so it is redacted as well
_TRANSPORT_LOGGERS = ("apprise", "urllib3", "requests", "requests_oauthlib", "oauthlib")


class _Redacting(logging.Filter):
    """Takes the secrets out of a record before any handler sees it."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = redact(text, self.secrets)
        if clean != text:
            record.msg, record.args = clean, None
        return True


@contextlib.contextmanager
def _redacted_logs(secrets: tuple[str, ...]) -> Iterator[None]:
    """While a message is sent: every logger of the transport libraries redacts the secrets (a filter on a logger
    sees only its own records, so each existing one gets it)."""
    names = [n for n in list(logging.Logger.manager.loggerDict) if n.split(".")[0] in _TRANSPORT_LOGGERS]
    loggers = [logging.getLogger(n) for n in {*names, *_TRANSPORT_LOGGERS, "urllib3.connectionpool"}]
    guard = _Redacting(secrets)
    for logger in loggers:
        logger.addFilter(guard)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(guard)


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


def send(channel: Channel, title: str, body: str, *, failure: bool = False, warning: bool = False) -> Sent:
    """One message to one channel. Never raises: a channel that is down, refuses or cannot be formed is a
    Sent(ok=False) saying why."""
    if channel.problem:
        return Sent(False, channel.problem)
    import apprise

    try:
        sender = apprise.Apprise()
        with _redacted_logs(channel.secrets):
            added = sender.add(channel.url)
        if not added:
            return Sent(False, "not a URL Apprise can send to (unknown service, or a required part missing)")
        kind = apprise.NotifyType.FAILURE if failure else apprise.NotifyType.WARNING if warning else apprise.NotifyType.INFO
        with _redacted_logs(channel.secrets):
            result = sender.notify(body=body, title=title, notify_type=kind, body_format=apprise.NotifyFormat.TEXT,
                                   log_level=logging.WARNING)
        if result:
            return Sent(True)
        said = [e.message for e in result.logs() if e.level in ("WARNING", "ERROR", "CRITICAL")]
        why = "; ".join(dict.fromkeys(line.strip() for line in said if line.strip()))[:400]
        return Sent(False, redact(f"{result.status.name.lower()}: {why}" if why else result.status.name.lower(),
                                  channel.secrets))
    except Exception as exc:  # a plugin's own bug: recorded like a refusal, never raised into the audit
        return Sent(False, redact(f"{type(exc).__name__}: {exc}", channel.secrets)[:400])
