"""Notifications: after each audit, a short message of what is new since the channel's last notification, the
headline numbers and where the report is; after a failed run, that it failed. Sent through Apprise to the
channels of the `notify` settings (off when none), each send in a process of its own that reaches only the
addresses the deployment allows and ends at notify.timeout_s (channels.py, sender.py, guard.py); the Dagster layer calls this after audit_report and
verdict_report and from its run-failure sensor, the CLI after a failed audit.

What is "new" is kept per channel in <home>/notify/state.json: the keys of every finding the channel was last
told about (news.py). A finding is new when its key is not there; after a message is delivered the channel's
keys become the current findings (a finding that goes away and comes back is new again). When a channel had
nothing new, nothing is sent (notify.always_send: a short "nothing new" message instead). A send that fails
changes no keys: the news it carried is sent with the channel's next message, and a failed run's notice too;
the failure is recorded (returned, written to the state) and never raised.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import NotifySettings
from claims_pipeline.notify.channels import Channel, channels, redact, send
from claims_pipeline.notify.guard import Reach
from claims_pipeline.notify.message import audit_message, failure_message
from claims_pipeline.notify.news import KINDS, Findings, Item, current_findings, short
from claims_pipeline.store.files import locked, write_text_atomically

STATE_VERSION = 1
MAX_PENDING_FAILURES = 20


@dataclass
class ChannelResult:
    label: str
    status: str  # "sent", "failed" (kept for the next message), "nothing new" (nothing sent)
    new: int = 0
    error: str = ""


@dataclass
class Outcome:
    """What a notification step did, safe to log and to show in the UI (no URL, no secret)."""

    status: str  # "off", "no report", "sent", "nothing new", "failed", "partly sent"
    channels: list[ChannelResult] = field(default_factory=list)
    new_by_kind: dict[str, int] = field(default_factory=dict)
    title: str = ""
    body: str = ""  # the message as sent to the channel with the most news
    error: str = ""  # the step itself could not run (the state file, the report): nothing was sent

    def line(self) -> str:
        if self.status in ("off", "no report"):
            return {"off": "notifications off (no notify.urls)", "no report": "no report to notify yet"}[self.status]
        if self.error:
            return f"notification failed: {self.error}"
        per = "; ".join(f"{c.label}: {c.status}{f' ({c.error})' if c.error else ''}" for c in self.channels)
        return f"notification {self.status}: {per}"


def _now(now: datetime | None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": STATE_VERSION, "channels": {}}
    if not isinstance(doc, dict) or not isinstance(doc.get("channels"), dict):
        return {"version": STATE_VERSION, "channels": {}}
    return doc


def _save(path: Path, state: dict[str, Any]) -> None:
    write_text_atomically(path, json.dumps(state, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def _summarise(results: list[ChannelResult]) -> str:
    statuses = {r.status for r in results}
    if statuses == {"failed"}:
        return "failed"
    if "failed" in statuses:
        return "partly sent"
    return "sent" if "sent" in statuses else "nothing new"


def notify_audit(conf: NotifySettings, home: Path, *, reach: Reach, now: datetime | None = None,
                 environ: Mapping[str, str] | None = None) -> Outcome:
    """After an audit (or a verdict report): tell each channel of `conf` what is new in the newest report under
    the home folder `home`, reaching only the addresses `reach` allows (guard.py). Never raises for a file it
    cannot read or write (the report, the state, their lock): the outcome says so, the audit stands."""
    if not conf.configured:
        return Outcome("off")
    try:
        return _notify_audit(conf, home, reach, now, environ)
    except (OSError, ValueError, KeyError, TimeoutError) as exc:
        return Outcome("failed", error=f"{type(exc).__name__}: {exc}"[:400])


def _notify_audit(conf: NotifySettings, home_dir: Path, reach: Reach, now: datetime | None,
                  environ: Mapping[str, str] | None) -> Outcome:
    found = current_findings(home_dir)
    if found is None:
        return Outcome("no report")
    home = HomeLayout(home_dir)
    when = _now(now)
    out = Outcome("nothing new", new_by_kind={})
    with locked(home.notify_lock):
        state = _load(home.notify_state)
        told = _at_once(channels(conf, environ), state, lambda channel, kept: _tell(
            channel, kept, found, when, conf, out, reach))
        out.channels.extend(told)
        _save(home.notify_state, state)
    out.status = _summarise(out.channels)
    return out


_OUT_LOCK = threading.Lock()  # the channels' sends run at once; the outcome keeps the message with the most news


def _at_once(found_channels: list[Channel], state: dict[str, Any],
             tell: Callable[[Channel, dict[str, Any]], ChannelResult]) -> list[ChannelResult]:
    """tell(channel, its kept state) for every channel, all at once: each send ends at notify.timeout_s, so the
    step takes one send's deadline however many channels are slow. Results in the channels' order. Two entries of
    one URL share their state: those are told one after the other."""
    kept_of = []
    for channel in found_channels:
        kept = state["channels"].setdefault(channel.id, {})
        kept["label"] = channel.label
        kept_of.append(kept)
    if len({id(k) for k in kept_of}) < len(kept_of):
        return [tell(channel, kept) for channel, kept in zip(found_channels, kept_of, strict=True)]
    with ThreadPoolExecutor(max_workers=max(1, len(found_channels)), thread_name_prefix="notify") as pool:
        return list(pool.map(tell, found_channels, kept_of))


def _tell(channel: Channel, kept: dict[str, Any], found: Findings, when: str, conf: NotifySettings,
          out: Outcome, reach: Reach | None = None) -> ChannelResult:
    notified: dict[str, list[str]] = kept.setdefault("notified", {})
    first = "last_sent_at" not in kept
    told = {kind: set(notified.get(kind, [])) for kind in found.covered}  # once per kind, not once per item
    new = [i for i in found.items if i.kind in told and i.key not in told[i.kind]]
    failures = list(kept.get("pending_failures") or [])
    if not new and not failures and not conf.always_send:
        _remember(kept, found)  # findings gone since are forgotten: they are new again if they come back
        kept.pop("unsent_since", None)  # what a failed send held is gone from the report too: nothing owed
        return ChannelResult(channel.label, "nothing new")
    title, body = audit_message(found, new, since=None if first else kept.get("last_sent_at"),
                                unsent_since=kept.get("unsent_since"), failures=failures,
                                max_items=conf.max_items, report_url=conf.report_url)
    with _OUT_LOCK:
        if len(new) >= sum(out.new_by_kind.values()):
            out.title, out.body = title, body
            out.new_by_kind = _by_kind(new)
    sent = send(channel, title, body, reach=reach, timeout_s=conf.timeout_s, warning=bool(new))
    if not sent.ok:
        kept.setdefault("unsent_since", when)
        kept["last_error"] = {"at": when, "error": sent.error}
        return ChannelResult(channel.label, "failed", len(new), sent.error)
    _remember(kept, found)
    kept["last_sent_at"] = when
    kept["last_report"] = str(found.report_dir)
    for key in ("unsent_since", "last_error", "pending_failures"):
        kept.pop(key, None)
    return ChannelResult(channel.label, "sent", len(new))


def _remember(kept: dict[str, Any], found: Findings) -> None:
    for kind in found.covered:
        kept["notified"][kind] = found.keys(kind)


def _by_kind(items: list[Item]) -> dict[str, int]:
    return {k: n for k in KINDS if (n := sum(1 for i in items if i.kind == k))}


def notify_failure(conf: NotifySettings, home: Path, *, reach: Reach, job: str, run_id: str, error: str,
                   now: datetime | None = None, environ: Mapping[str, str] | None = None) -> Outcome:
    """A run failed: tell each channel of `conf` (with any earlier failure it was not told of), reaching only the
    addresses `reach` allows; their state is kept under the home folder `home`. A channel that cannot be told
    keeps the notice for its next message."""
    if not conf.configured or not conf.on_run_failure:
        return Outcome("off")
    try:
        return _notify_failure(conf, home, reach, job, run_id, error, now, environ)
    except (OSError, ValueError, KeyError, TimeoutError) as exc:
        return Outcome("failed", error=f"{type(exc).__name__}: {exc}"[:400])


def _notify_failure(conf: NotifySettings, home_dir: Path, reach: Reach, job: str, run_id: str, error: str,
                    now: datetime | None, environ: Mapping[str, str] | None) -> Outcome:
    home = HomeLayout(home_dir)
    when = _now(now)
    out = Outcome("sent")
    with locked(home.notify_lock):
        state = _load(home.notify_state)

        def tell(channel: Channel, kept: dict[str, Any]) -> ChannelResult:
            notice = {"at": when, "job": short(job, 80), "run_id": str(run_id),
                      "error": redact(short(error, 300), channel.secrets)}
            failures = [*(kept.get("pending_failures") or []), notice][-MAX_PENDING_FAILURES:]
            title, body = failure_message(failures)
            with _OUT_LOCK:
                out.title, out.body = title, body
            sent = send(channel, title, body, reach=reach, timeout_s=conf.timeout_s, failure=True)
            if sent.ok:
                kept.pop("pending_failures", None)
                return ChannelResult(channel.label, "sent")
            kept["pending_failures"] = failures
            kept["last_error"] = {"at": when, "error": sent.error}
            return ChannelResult(channel.label, "failed", error=sent.error)

        out.channels.extend(_at_once(channels(conf, environ), state, tell))
        _save(home.notify_state, state)
    out.status = _summarise(out.channels)
    return out


__all__ = ["Outcome", "ChannelResult", "Reach", "notify_audit", "notify_failure"]
