"""The SQL of recording one fetch: the statements built once, the rows a decided fetch writes (the URL, the fetch,
a confirmed change, the URL's new state), and the change state read back from a URL's row.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    CursorResult,
    RowMapping,
    and_,
    bindparam,
    insert,
    select,
    update,
)

from claims_pipeline.store import schema
from claims_pipeline.store.change_confirmation import ChangeState
from claims_pipeline.store.clock import utc_now
from claims_pipeline.store.record_decision import USABLE, _Recording
from claims_pipeline.web.records import FetchResult, FetchStatus


class _Statements:
    """The per-fetch statements, built once: executing the same statement object lets SQLAlchemy reuse its
    memoised cache key and compiled SQL, instead of rebuilding and re-keying a new expression for every URL
    (rebuilding them would be most of the CPU of recording a warm run's 304s)."""

    def __init__(self) -> None:
        u, f = schema.urls, schema.fetches
        self.url_row = select(u).where(u.c.url == bindparam("url")).with_for_update()
        self.latest_usable = (
            select(f.c.raw_hash, f.c.text_hash, f.c.content_type, f.c.content_kind, f.c.etag, f.c.last_modified)
            .where(and_(f.c.url == bindparam("url"), f.c.fetch_status.in_(USABLE), f.c.text_hash.is_not(None)))
            .order_by(f.c.id.desc())
            .limit(1)
        )
        # did a usable fetch of these very bytes give the stable text? (then a new text is our reading, not the page)
        self.same_bytes_read_as = (
            select(f.c.id)
            .where(and_(f.c.url == bindparam("url"), f.c.raw_hash == bindparam("raw_hash"),
                        f.c.text_hash == bindparam("text_hash"), f.c.fetch_status.in_(USABLE)))
            .limit(1)
        )
        # the latest fetch that gave a text, with its bytes: what the stable text was read from
        self.stable_source = (
            select(f.c.raw_hash, f.c.content_type, f.c.final_url)
            .where(and_(f.c.url == bindparam("url"), f.c.text_hash == bindparam("text_hash"), f.c.raw_hash.is_not(None),
                        f.c.reused_text.is_(False)))
            .order_by(f.c.id.desc())
            .limit(1)
        )
        self.insert_url = insert(u)
        self.insert_fetch = insert(f)
        self.insert_change = insert(schema.changes)
        # SET columns come from the parameter dict; the row is picked by a separately named parameter
        self.update_url = update(u).where(u.c.url == bindparam("where_url"))


_STMT = _Statements()


def _write_fetch(conn: Connection, result: FetchResult, status: FetchStatus, fetched_at: datetime,
                 run_id: str | None, decided: _Recording, *, url_known: bool, diff: str | None) -> None:
    """The rows of one decided fetch: the URL (when new), the fetch, the confirmed change, the URL's state."""
    url, fetched, settled, before = result.url, decided.fetched, decided.settled, decided.before
    if not url_known:
        conn.execute(_STMT.insert_url, {"url": url, "first_seen": fetched_at, "last_fetched_at": fetched_at})
    fetch_id = _inserted_id(conn.execute(
        _STMT.insert_fetch,
        {
            "url": url,
            "run_id": run_id,
            "fetched_at": fetched_at,
            "recorded_at": utc_now(),
            "http_status": result.http_status,
            "fetch_status": status.value,
            "content_type": fetched.content_type,
            "content_kind": fetched.content_kind,
            "raw_hash": fetched.raw_hash,
            "text_hash": fetched.text_hash,
            "reused_text": status is FetchStatus.NOT_MODIFIED,
            "etag": fetched.etag,
            "last_modified": fetched.last_modified,
            "note": fetched.note,
            "final_url": result.final_url,
            "changed": settled.confirmed,
            "elapsed_s": float(result.elapsed_s or 0.0),
            "attempts": int(result.attempts or 0),
        },
    ))
    values: dict[str, object] = {
        "where_url": url,
        "latest_fetch_id": fetch_id,
        "last_fetched_at": fetched_at,
        "stable_hash": settled.state.stable_hash,
        "stable_since": settled.state.stable_since,
        "pending_hash": settled.state.pending_hash,
        "pending_since": settled.state.pending_since,
        "changed_at": settled.state.changed_at if settled.confirmed else before.changed_at,
        "change_confirmed_at": settled.state.change_confirmed_at if settled.confirmed else before.change_confirmed_at,
    }
    if decided.diff_key is not None:
        # only a confirming fetch has a diff; a 304 of the stable page never gets here
        values["last_change_id"] = _inserted_id(conn.execute(
            _STMT.insert_change,
            {
                "url": url,
                "fetch_id": fetch_id,
                "changed_at": settled.state.changed_at,
                "confirmed_at": fetched_at,
                "old_hash": decided.diff_key[0],
                "new_hash": decided.diff_key[1],
                "diff": diff,
            },
        ))
    conn.execute(_STMT.update_url, values)


def _inserted_id(result: CursorResult[Any]) -> int:
    """The id of the row an INSERT just added (always reported for a one-row INSERT)."""
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


def _change_state(row: RowMapping | None) -> ChangeState:
    if row is None:
        return ChangeState()
    return ChangeState(
        stable_hash=row["stable_hash"],
        stable_since=row["stable_since"],
        pending_hash=row["pending_hash"],
        pending_since=row["pending_since"],
        changed_at=row["changed_at"],
        change_confirmed_at=row["change_confirmed_at"],
    )
