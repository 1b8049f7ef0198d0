"""What one fetch records, decided from the URL's change state and what was fetched (no I/O here): the row's
content fields (a 304's are those of the fetch it stands for), whether our reading changed and not the page,
the settled change state, and which facts (a diff, a re-reading) must first be made with no lock held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from claims_pipeline.store.change_confirmation import ChangeState, Settlement, settle
from claims_pipeline.store.records import Basis
from claims_pipeline.web.records import FetchResult, FetchStatus

USABLE = (FetchStatus.OK.value, FetchStatus.NOT_MODIFIED.value)  # fetches that show the page's text


@dataclass(frozen=True, slots=True)
class _Fetched:
    """The content fields of one fetch row. A 304's are those of the cached fetch it stands for: nothing was
    downloaded, the page is what that fetch read."""

    raw_hash: str | None
    text_hash: str | None
    content_type: str
    content_kind: str
    etag: str | None
    last_modified: str | None
    note: str
    usable: bool  # the fetch shows the page's text: a sighting for change detection


@dataclass(frozen=True, slots=True)
class _Recording:
    """What one fetch writes: its row's fields, the URL's change state and, when it confirms a change, the
    (old hash, new hash) of the diff to keep."""

    fetched: _Fetched
    before: ChangeState  # the state the fetch is settled against (re-based when only our reading changed)
    settled: Settlement
    diff_key: tuple[str, str] | None


@dataclass(frozen=True, slots=True)
class _Needed:
    """A fact to compute with no lock held before the fetch can be recorded: a change's diff, or the hash of
    the stable text's bytes read anew, each keyed as its cache in PageCache._write."""

    diff: tuple[str, str] | None = None
    reread: tuple[str, str] | None = None


def _fetched(result: FetchResult, status: FetchStatus, raw_hash: str | None, text_hash: str | None,
             basis: Basis | None) -> _Fetched:
    """The row's content fields; basis: the cached fetch a 304 answers (None: no cached copy)."""
    note = result.note or ""
    content_type, content_kind = result.content_type or "", result.content_kind or ""
    etag, last_modified = result.etag, result.last_modified
    if status is FetchStatus.NOT_MODIFIED:
        if basis is None:
            note = _joined(note, "304 without a cached copy")
        else:
            raw_hash, text_hash = basis.raw_hash, basis.text_hash
            content_type = content_type or basis.content_type
            content_kind = content_kind or basis.content_kind
            etag = etag or basis.etag
            last_modified = last_modified or basis.last_modified
    usable = status.value in USABLE and text_hash is not None
    return _Fetched(raw_hash, text_hash, content_type, content_kind, etag, last_modified, note, usable)


def _stable_replaced(fetched: _Fetched, before: ChangeState) -> str | None:
    """The stable text's hash when this fetch shows another text (None: it shows the same, or none yet)."""
    stable = before.stable_hash
    return stable if fetched.usable and stable and fetched.text_hash != stable else None


def _decide(url: str, fetched: _Fetched, before: ChangeState, fetched_at: datetime, *, same_bytes_as_stable: bool,
            rereads: Mapping[tuple[str, str], str | None] | None, diffs: Mapping[tuple[str, str], str | None],
            may_wait: bool) -> _Recording | _Needed:
    """What to record for one fetch, from the URL's change state and what was fetched. When a fact made with
    no lock held is missing, and may_wait, the fact needed instead (past a few waits, the record goes on:
    without the re-reading; with its diff made under the lock).

    same_bytes_as_stable: these bytes are those the stable text was read from. rereads: the hashes of stable
    texts' bytes read anew by this version (None: this cache does not re-read). diffs: the diffs made."""
    note = fetched.note
    stable = _stable_replaced(fetched, before)
    if stable is not None and same_bytes_as_stable:
        # The page sent the same bytes as when its stable text was read: the text differs only because this
        # version of claims_pipeline reads pages differently (an upgrade). That is no change of the page:
        # the new reading becomes the stable text, with no change flagged and no pending sighting.
        before = _rebased(before, fetched.text_hash)
        note = _joined(note, "same bytes as the stable text's fetch, read anew by this version")
    elif stable is not None and rereads is not None:
        # Other bytes (a nonce, a timestamp in the HTML) and another text: before calling it a change, read
        # the stable fetch's own bytes with this version. If they give the new text, only the reading changed.
        key = (url, stable)
        if key not in rereads and may_wait:
            return _Needed(reread=key)
        if rereads.get(key) == fetched.text_hash:
            before = _rebased(before, fetched.text_hash)
            note = _joined(note, "the stable text's own bytes, read anew by this version, give this text: "
                                 "no page change")
    settled = settle(before, fetched.text_hash if fetched.usable else None, fetched_at)
    diff_key = (settled.old_hash, fetched.text_hash) if settled.confirmed and settled.old_hash and fetched.text_hash \
        else None
    if diff_key is not None and diff_key not in diffs and may_wait:
        return _Needed(diff=diff_key)
    return _Recording(replace(fetched, note=note), before, settled, diff_key)


def _rebased(state: ChangeState, text_hash: str | None) -> ChangeState:
    """The state with this text as the stable one and no pending sighting: only our reading of the page moved."""
    return replace(state, stable_hash=text_hash, pending_hash=None, pending_since=None)


def _joined(note: str, more: str) -> str:
    return f"{note}; {more}" if note else more
