"""Which confirmed page changes an audit reports as CONTENT_CHANGED: each one once, in the first report written
after its confirmation, whichever fetch confirmed it.

A page's change is confirmed by whichever fetch sees the new text the second time: the audit's own fetch, or
one in between (a one-scope run, `claims-pipeline fetch URL`, the worklist). The audit reads every cited page's
state from the page cache, so it sees those too, and reports the changes whose confirming fetch is newer than
the previous report's watermark: the newest fetch row id when that audit read the cache (audit/reported-
through.txt, written with the report, with the cache's identity: a rebuilt cache numbers its fetches anew).
Ids only grow, so a run given another clock (`--now`) neither hides a
change nor reports one twice; a report that was not written (a failed blocking check) moves nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from claims_pipeline.store.records import PageState


def last_audit_file(home: Path) -> Path:
    return home / "audit" / "last-run.txt"


def reported_through_file(home: Path) -> Path:
    return home / "audit" / "reported-through.txt"


def previous_audit_run(home: Path) -> str | None:
    """run_at of the last audit whose report was written, or None before the first."""
    try:
        return last_audit_file(home).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def reported_through(home: Path, cache_identity: str) -> int | None:
    """The fetch id up to which the last written report saw this page cache, or None: before the first report,
    or when the cache is another one than that report read (deleted and rebuilt: its ids start again)."""
    try:
        watermark, identity = reported_through_file(home).read_text(encoding="utf-8").strip().split(" ", 1)
        return int(watermark) if identity == cache_identity else None
    except (OSError, ValueError):
        return None


def changed_since(page: PageState, watermark: int | None) -> bool:
    """Was the page's latest change confirmed by a fetch after `watermark`? Before any report, every confirmed
    change counts. A state recorded before confirming fetches were kept has none: its own fetch's flag stands."""
    if page.change_fetch_id is None:
        return bool(page.content_changed)
    return watermark is None or page.change_fetch_id > watermark


def changes_since(pages: dict[str, PageState], watermark: int | None) -> dict[str, PageState]:
    """The same states with content_changed set by changed_since (set or cleared)."""
    out: dict[str, PageState] = {}
    for url, p in pages.items():
        flag = changed_since(p, watermark)
        out[url] = p if flag == p.content_changed else replace(p, content_changed=flag)
    return out
