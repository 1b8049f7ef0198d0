"""Which confirmed page changes an audit reports as CONTENT_CHANGED: each change once, in the first report that
covers its page after it was confirmed, whichever fetch confirmed it.

A page's change is confirmed by whichever fetch sees the new text the second time: the audit's own fetch, or
one in between (a one-scope run, `claims-pipeline fetch URL`, the worklist). The audit reads every cited page's
state from the page cache, so it sees those too. What was reported is kept per page: audit/reported-changes.json
maps each URL to the confirming fetch's row id of the change a written report showed, and that report's run.
A page's change is reported when its id is not the one recorded for it. So a change is never reported twice
(not by a later report, nor after a fetch that landed while an audit read the cache), and never lost (a report
that did not cover the page, or that was not written because a blocking check failed, records nothing for it).

The ledger names the page cache it belongs to (its first fetch): a deleted and rebuilt cache numbers its fetches
anew, and every change in it is new. With no ledger but an earlier report (a version before the ledger), a page
without a record counts only changes confirmed after that report's run, so an upgrade repeats nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.store.clock import to_utc
from claims_pipeline.store.files import write_text_atomically
from claims_pipeline.store.records import PageState

if TYPE_CHECKING:
    from claims_pipeline.store.cache import ChangeRow, PageCache


def last_audit_file(home: Path) -> Path:
    return HomeLayout(home).last_run_file


def ledger_file(home: Path) -> Path:
    return HomeLayout(home).ledger


def previous_audit_run(home: Path) -> str | None:
    """run_at of the last audit whose report was written, or None before the first."""
    try:
        return last_audit_file(home).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


@dataclass
class ReportedChanges:
    cache: str  # the page cache's identity (PageCache.identity)
    changes: dict[str, tuple[int, str]] = field(default_factory=dict)  # url → (confirming fetch id, report run_at)
    before_ledger: str | None = None  # an earlier version's last report: pages without a record count after it


def load_reported(home: Path, cache_identity: str) -> ReportedChanges:
    try:
        data = json.loads(ledger_file(home).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ReportedChanges(cache_identity, before_ledger=previous_audit_run(home))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or data.get("cache") != cache_identity:
        return ReportedChanges(cache_identity)  # another (rebuilt) cache, or no readable ledger
    changes = {str(u): (int(v[0]), str(v[1])) for u, v in (data.get("changes") or {}).items()}
    return ReportedChanges(cache_identity, changes)


def save_reported(home: Path, reported: ReportedChanges) -> None:
    """Replace the ledger atomically (the caller holds the audit lock for its read-modify-write)."""
    doc = {"cache": reported.cache, "changes": {u: list(v) for u, v in sorted(reported.changes.items())}}
    write_text_atomically(ledger_file(home), json.dumps(doc, indent=1))


def _utc(value: str) -> datetime:
    """to_utc of a time that is set (a non-empty ISO string: the callers test it, or the cache requires it)."""
    at = to_utc(value)
    assert at is not None
    return at


def unreported(page: PageState, key: str, reported: ReportedChanges) -> bool:
    """Has the page (ledger key `key`) a confirmed change no written report showed?"""
    if page.change_fetch_id is None:
        return False
    record = reported.changes.get(key)
    if record is not None:
        return record[0] != page.change_fetch_id
    if reported.before_ledger and page.change_confirmed_at:
        return _utc(page.change_confirmed_at) > _utc(reported.before_ledger)
    return True


def reported_on(page: PageState, key: str, reported: ReportedChanges) -> str | None:
    """run_at of the written report that showed the page's current change; None when no report showed it yet,
    or when one of a version before the ledger did (its date is not known)."""
    record = reported.changes.get(key)
    if page.change_fetch_id is None or record is None or record[0] != page.change_fetch_id:
        return None
    return record[1] or None


def mark_unreported(pages: dict[str, PageState], keys: dict[str, str], reported: ReportedChanges) -> dict[str, PageState]:
    """The same states (keyed by cited URL; keys maps each to its ledger key), content_changed set by unreported
    and, for a change already shown, change_reported_at by reported_on: a claim still stale on it says when."""
    out: dict[str, PageState] = {}
    for url, p in pages.items():
        key = keys.get(url, url)
        flag = unreported(p, key, reported)
        when = None if flag else reported_on(p, key, reported)
        same = flag == p.content_changed and when == p.change_reported_at
        out[url] = p if same else replace(p, content_changed=flag, change_reported_at=when)
    return out


def with_report(reported: ReportedChanges, covered: dict[str, int], shown: set[str], run_at: str) -> ReportedChanges:
    """The ledger after a report written at run_at: every page it covered has its latest change (ledger key →
    confirming fetch id) seen, whether this report showed it (`shown`) or an earlier one did; a record keeps the
    run of the report that showed its change ("" for one an earlier version reported)."""
    changes = dict(reported.changes)
    for key, fetch_id in covered.items():
        old = changes.get(key)
        if old is None or old[0] != fetch_id:
            changes[key] = (fetch_id, run_at if key in shown else "")
    return ReportedChanges(reported.cache, changes)


def changes_since_report(cache: PageCache, key: str, reported: ReportedChanges) -> list[ChangeRow]:
    """The page's confirmed changes no written report covered, oldest first."""
    rows = cache.changes(key)
    record = reported.changes.get(key)
    if record is not None:
        return [r for r in rows if r.fetch_id > record[0]]
    if reported.before_ledger:
        before = _utc(reported.before_ledger)
        return [r for r in rows if _utc(r.confirmed_at) > before]
    return rows


def with_diffs_since_report(pages: dict[str, PageState], keys: dict[str, str], reported: ReportedChanges,
                            cache: PageCache) -> dict[str, PageState]:
    """The pages to report, where a page changed more than once since a report last covered it carrying the diff
    from the text that report saw to the text now, headed by the count. A change keeps only its own diff, so
    the report showed the last change alone and a figure changed by an earlier one went unseen."""
    out = dict(pages)
    for url, p in pages.items():
        if not p.content_changed:
            continue
        rows = changes_since_report(cache, keys.get(url, url), reported)
        if len(rows) < 2:
            continue
        diff = cache.diff_between(rows[0].old_hash, rows[-1].new_hash)
        head = (f"{len(rows)} changes since a report last covered this page (the first seen {rows[0].changed_at[:10]}): "
                "the page as that report saw it → the page now")
        out[url] = replace(p, diff=head + ("\n" + diff if diff else "\n(the older text is no longer in the cache)"))
    return out


def shown_in_last_report(page: PageState, key: str, reported: ReportedChanges, last_report: str | None) -> bool:
    """Is the page's current change the one the latest written report showed? (The worklist, built after that
    report, still flags it.)"""
    record = reported.changes.get(key)
    return (page.change_fetch_id is not None and record is not None and record[0] == page.change_fetch_id
            and last_report is not None and record[1] == last_report)
