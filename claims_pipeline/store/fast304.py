"""SQLite fast path for the commonest write of a warm run: a 304 for a URL whose cached copy is known.

Why: a warm audit records hundreds of 304s, and through SQLAlchemy's Connection.execute each one paid ~35 µs of
statement bookkeeping per statement, more than SQLite's own work. Here the same Core statements are compiled ONCE
by SQLAlchemy for the engine's dialect (no hand-written SQL: columns stay defined in schema.py), their bind and
result processors taken from the column types, and executed on the DBAPI cursor. The transaction is the same as
the generic path's: BEGIN IMMEDIATE, read the URL's change state, insert the fetch row, update the URL, COMMIT.

Only the plain case is handled (URL row exists, and the 304 confirms no change). Anything else returns False
before writing and the caller takes the generic path (cache.PageCache._record_in), so rare cases stay in one
place. SQLite only: other databases use the generic path (see engine.is_sqlite).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, TYPE_CHECKING

from sqlalchemy import Engine, bindparam, insert, select, update

from claims_pipeline.store import schema
from claims_pipeline.store.clock import utc_now
from claims_pipeline.store.engine import BUSY_TIMEOUT_MS
from claims_pipeline.store.settle import ChangeState, settle
from claims_pipeline.web.records import FetchResult, FetchStatus

if TYPE_CHECKING:
    from claims_pipeline.store.cache import Basis

_STATE_COLUMNS = ("stable_hash", "stable_since", "pending_hash", "pending_since", "changed_at", "change_confirmed_at")
_FETCH_COLUMNS = (
    "url", "run_id", "fetched_at", "recorded_at", "http_status", "fetch_status", "content_type", "content_kind",
    "raw_hash", "text_hash", "reused_text", "etag", "last_modified", "note", "final_url", "changed", "elapsed_s",
    "attempts",
)
_URL_SET_COLUMNS = ("latest_fetch_id", "last_fetched_at", "pending_hash", "pending_since")


class _Compiled:
    """One statement compiled for a dialect: SQL text, parameter order and per-parameter bind processors."""

    def __init__(self, stmt: Any, engine: Engine, column_keys: list[str] | None = None) -> None:
        compiled = stmt.compile(dialect=engine.dialect, column_keys=column_keys)
        if compiled.positiontup is None:
            raise ValueError("fast304 needs a positional paramstyle (SQLite's qmark)")
        self.sql: str = compiled.string
        self.names: tuple[str, ...] = tuple(compiled.positiontup)
        binds = compiled.binds
        self.processors: tuple[Callable[[Any], Any] | None, ...] = tuple(
            binds[name].type.bind_processor(engine.dialect) for name in self.names
        )

    def params(self, values: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(
            (proc(values[name]) if proc is not None else values[name])
            for name, proc in zip(self.names, self.processors)
        )


class NotModifiedWriter:
    def __init__(self, engine: Engine) -> None:
        u, f = schema.urls, schema.fetches
        self.engine = engine
        self.read_state = _Compiled(select(*(u.c[c] for c in _STATE_COLUMNS)).where(u.c.url == bindparam("url")), engine)
        self.state_processors = tuple(u.c[c].type.result_processor(engine.dialect, None) for c in _STATE_COLUMNS)
        self.insert_fetch = _Compiled(insert(f), engine, list(_FETCH_COLUMNS))
        self.update_url = _Compiled(update(u).where(u.c.url == bindparam("where_url")), engine, list(_URL_SET_COLUMNS))

    def try_record(self, result: FetchResult, basis: "Basis", fetched_at: datetime, run_id: str | None) -> bool:
        """Record the 304 in one transaction and return True, or write nothing and return False."""
        raw = self.engine.raw_connection()  # the pool's connect hook already set WAL, busy_timeout, foreign keys
        try:
            return self._record_on(raw, result, basis, fetched_at, run_id)
        finally:
            raw.close()

    @contextmanager
    def without_waiting(self) -> Iterator[Callable[[FetchResult, "Basis", datetime, str | None], bool]]:
        """A recorder for the event loop's own thread: one connection held for the run, and a lock held by
        another writer is not waited for (busy_timeout 0), so the loop never stalls on the database. It returns
        False (nothing written) whenever the caller must hand the result to its writer thread instead: the
        database is busy, or the 304 is not the plain case."""
        raw = self.engine.raw_connection()
        raw.cursor().execute("PRAGMA busy_timeout = 0")

        def record(result: FetchResult, basis: "Basis", fetched_at: datetime, run_id: str | None) -> bool:
            try:
                return self._record_on(raw, result, basis, fetched_at, run_id)
            except sqlite3.OperationalError as exc:  # "database is locked": the writer thread will wait for it
                if "locked" in str(exc) or "busy" in str(exc):
                    return False
                raise

        try:
            yield record
        finally:
            try:
                raw.cursor().execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")  # back to the pool as it came
            finally:
                raw.close()

    def _record_on(self, raw: Any, result: FetchResult, basis: "Basis", fetched_at: datetime, run_id: str | None) -> bool:
        cur = raw.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")  # take the write lock before reading: two processes serialise
            row = cur.execute(self.read_state.sql, self.read_state.params({"url": result.url})).fetchone()
            if row is None:
                raw.rollback()
                return False
            values = [proc(v) if proc is not None else v for proc, v in zip(self.state_processors, row)]
            before = ChangeState(*values)
            settled = settle(before, basis.text_hash, fetched_at)
            moved = (settled.state.stable_hash, settled.state.stable_since) != (before.stable_hash, before.stable_since)
            if settled.confirmed or moved:  # a change (diff, changes row) or a first baseline: the generic path
                raw.rollback()
                return False
            cur.execute(self.insert_fetch.sql, self.insert_fetch.params({
                "url": result.url,
                "run_id": run_id,
                "fetched_at": fetched_at,
                "recorded_at": utc_now(),
                "http_status": result.http_status,
                "fetch_status": FetchStatus.NOT_MODIFIED.value,
                "content_type": result.content_type or basis.content_type,
                "content_kind": result.content_kind or basis.content_kind,
                "raw_hash": basis.raw_hash,
                "text_hash": basis.text_hash,
                "reused_text": True,
                "etag": result.etag or basis.etag,
                "last_modified": result.last_modified or basis.last_modified,
                "note": result.note or "",
                "final_url": result.final_url,
                "changed": False,
                "elapsed_s": float(result.elapsed_s or 0.0),
                "attempts": int(result.attempts or 0),
            }))
            fetch_id = cur.lastrowid
            # settle() left stable_* and changed_* as they were (not confirmed): only these move
            cur.execute(self.update_url.sql, self.update_url.params({
                "where_url": result.url,
                "latest_fetch_id": fetch_id,
                "last_fetched_at": fetched_at,
                "pending_hash": settled.state.pending_hash,
                "pending_since": settled.state.pending_since,
            }))
            raw.commit()
            return True
        except BaseException:
            raw.rollback()
            raise
        finally:
            cur.close()
