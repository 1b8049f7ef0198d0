"""What the cache hands out: the state of one page at the end of a fetch run (the input of priors and reports),
and the cached fetch a conditional request stands on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PageState:
    url: str
    fetch_status: str  # a FetchStatus value of the latest fetch (NOT_MODIFIED is reported as OK)
    http_status: int | None
    content_kind: str
    note: str
    fetched_at: str  # ISO-8601 UTC of the latest fetch
    text_hash: str | None  # hash of the text the latest usable fetch read (a failed fetch: the confirmed text's)
    raw_hash: str | None
    text: str | None  # that text (OK pages): the figures are checked on it
    content_changed: bool  # a confirmed change was detected by this run's fetch
    changed_at: str | None  # fetched_at of the fetch at which the latest confirmed change was first seen
    stable_since: str | None  # fetched_at of the first sighting of the current stable text
    diff: str | None  # unified-style diff of the latest confirmed change (text lines), capped
    change_confirmed_at: str | None = None  # fetched_at of the fetch that confirmed that change (second sighting)
    change_fetch_id: int | None = None  # that fetch's row id: ids only grow, whatever clock the runs were given
    # run_at of the written report that showed that change (the ledger, store/recent_changes.py); None when none
    # has yet, or one of a version before the ledger did
    change_reported_at: str | None = None
    # fetched_at of the first sighting of `text` when it is not the confirmed text yet: the page changed, and the
    # change (content_changed, changed_at, diff) is confirmed on its next sighting (store/change_confirmation.py); None otherwise
    unconfirmed_since: str | None = None


@dataclass(frozen=True, slots=True)
class Basis:
    """The cached fetch whose validators a conditional request sent: what a 304 answer stands for."""

    raw_hash: str | None
    text_hash: str
    content_type: str
    content_kind: str
    etag: str | None
    last_modified: str | None
