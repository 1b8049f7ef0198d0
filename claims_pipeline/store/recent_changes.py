"""Which confirmed page changes an audit reports as CONTENT_CHANGED: those confirmed since the previous audit.

A page's change is confirmed by whichever fetch sees the new text the second time: the audit's own fetch, or
one in between, such as a one-scope run of another country citing the same page, or `claims-pipeline fetch
URL`. Counting only the audit's own confirmations lost those: the next audit fetched the page unchanged and
never flagged it. Counting every change within a fixed number of days reported one change in two monthly
reports. So an audit reports each change confirmed after the previous audit's run (the report's "previous
run", audit/last-run.txt, written when a report is written): once, whichever fetch confirmed it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from claims_pipeline.store.clock import to_utc
from claims_pipeline.store.records import PageState


def last_audit_file(home: Path) -> Path:
    return home / "audit" / "last-run.txt"


def previous_audit_run(home: Path) -> str | None:
    """run_at of the last audit whose report was written, or None before the first."""
    try:
        return last_audit_file(home).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def changed_since(page: PageState, since: datetime | str | None) -> bool:
    """Was the page's latest change confirmed after `since`? With no previous audit, any confirmed change counts.
    A state recorded before confirmation times were kept has none: its own fetch's flag stands."""
    confirmed = to_utc(page.change_confirmed_at)
    if confirmed is None:
        return bool(page.content_changed)
    return since is None or confirmed > to_utc(since)


def changes_since(pages: dict[str, PageState], since: datetime | str | None) -> dict[str, PageState]:
    """The same states with content_changed set by changed_since (set or cleared)."""
    out: dict[str, PageState] = {}
    for url, p in pages.items():
        flag = changed_since(p, since)
        out[url] = p if flag == p.content_changed else replace(p, content_changed=flag)
    return out
