"""SQLite fast path for the commonest write of a warm run: a 304 for a URL whose cached copy is known.

Why: a warm audit records hundreds of 304s, and through SQLAlchemy's Connection.execute each statement costs
more in statement bookkeeping than SQLite's own work. Here the same Core statements are compiled ONCE
by SQLAlchemy for the engine's dialect (no hand-written SQL: columns stay defined in schema.py), their bind and
result processors taken from the column types, and executed on the DBAPI cursor. The writes are the same as the
generic path's: under BEGIN IMMEDIATE, read the URL's change state, insert the fetch row, update the URL. On
the event loop's thread (NotModifiedGroup) several URLs' 304s share one commit and are written in bulk (three
statements for the group, executemany); try_record commits each alone.

Only the plain case is handled (URL row exists, and the 304 confirms no change). Anything else returns False
before writing and the caller takes the generic path (cache.PageCache._record_in), so rare cases stay in one
place. SQLite only: other databases use the generic path (see engine.is_sqlite).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, bindparam, func, insert, select, update
from sqlalchemy.engine.interfaces import DBAPICursor
from sqlalchemy.pool import PoolProxiedConnection

from claims_pipeline.store import schema
from claims_pipeline.store.change_confirmation import ChangeState, settle
from claims_pipeline.store.clock import utc_now
from claims_pipeline.store.engine import BUSY_TIMEOUT_MS
from claims_pipeline.store.records import Basis
from claims_pipeline.web.records import FetchResult, FetchStatus

log = logging.getLogger(__name__)

_STATE_COLUMNS = ("stable_hash", "stable_since", "pending_hash", "pending_since", "changed_at", "change_confirmed_at")
_FETCH_COLUMNS = (
    "url", "run_id", "fetched_at", "recorded_at", "http_status", "fetch_status", "content_type", "content_kind",
    "raw_hash", "text_hash", "reused_text", "etag", "last_modified", "note", "final_url", "changed", "elapsed_s",
    "attempts",
)
_URL_SET_COLUMNS = ("latest_fetch_id", "last_fetched_at", "pending_hash", "pending_since")
_IN_CHUNK = 500  # URLs per IN (...) clause: well under SQLite's variable limit

Pending304 = tuple[FetchResult, Basis, datetime, "str | None"]  # a 304 of an open group: (result, basis, fetched_at, run_id)


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
        self.max_fetch_id = _Compiled(select(func.max(f.c.id)), engine)
        self._read_states_by_n: dict[int, _Compiled] = {}

    def try_record(self, result: FetchResult, basis: Basis, fetched_at: datetime, run_id: str | None) -> bool:
        """Record the 304 in one transaction and return True, or write nothing and return False."""
        raw = self.engine.raw_connection()  # the pool's connect hook already set WAL, busy_timeout, foreign keys
        try:
            return self._record_on(raw, result, basis, fetched_at, run_id)
        finally:
            raw.close()

    @contextmanager
    def without_waiting(self) -> Iterator[NotModifiedGroup]:
        """A recorder for the event loop's own thread: one connection held for the run, and a lock held by
        another writer is not waited for (busy_timeout 0), so the loop never stalls on the database. Its 304s are
        committed in small groups (see NotModifiedGroup); the caller flushes the last one before it leaves."""
        raw = self.engine.raw_connection()
        raw.cursor().execute("PRAGMA busy_timeout = 0")
        group = NotModifiedGroup(self, raw)
        try:
            yield group
        finally:
            try:
                lost = group.flush()  # the caller's flush has normally run: this only guards an early exit
                if lost:
                    log.error("%d 304 records could not be stored: %s", len(lost), ", ".join(r.url for r in lost[:5]))
            finally:
                try:
                    raw.cursor().execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")  # back to the pool as it came
                finally:
                    raw.close()

    def _record_on(self, raw: PoolProxiedConnection, result: FetchResult, basis: Basis, fetched_at: datetime, run_id: str | None) -> bool:
        cur = raw.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")  # take the write lock before reading: two processes serialise
            if not self.write_in(cur, result, basis, fetched_at, run_id):
                raw.rollback()
                return False
            raw.commit()
            return True
        except BaseException:
            raw.rollback()
            raise
        finally:
            cur.close()

    def write_in(self, cur: DBAPICursor, result: FetchResult, basis: Basis, fetched_at: datetime, run_id: str | None) -> bool:
        """The 304's rows, inside the caller's write transaction; False (nothing written) when it is not the
        plain case."""
        row = cur.execute(self.read_state.sql, self.read_state.params({"url": result.url})).fetchone()
        if row is None:
            return False
        plain = self._plain(result, basis, fetched_at, run_id, row)
        if plain is None:
            return False
        fetch_row, url_row = plain
        cur.execute(self.insert_fetch.sql, self.insert_fetch.params(fetch_row))
        url_row["latest_fetch_id"] = cur.lastrowid
        cur.execute(self.update_url.sql, self.update_url.params(url_row))
        return True

    def write_many(self, cur: DBAPICursor, group: Sequence[Pending304]) -> list[FetchResult]:
        """The rows of a group of 304s (distinct URLs) inside the caller's write transaction, in three
        statements: the URLs' states read at once, the fetch rows inserted and the URL rows updated with
        executemany. Returns the results that are not the plain case (nothing of them written)."""
        states: dict[str, Any] = {}
        urls = [r.url for r, *_ in group]
        for i in range(0, len(urls), _IN_CHUNK):
            chunk = urls[i:i + _IN_CHUNK]
            read = self._read_states(len(chunk))
            for url, *row in cur.execute(read.sql, read.params({f"u{j}": u for j, u in enumerate(chunk)})).fetchall():
                states[url] = row
        other: list[FetchResult] = []
        fetch_rows, url_rows = [], []
        for result, basis, fetched_at, run_id in group:
            row = states.get(result.url)
            plain = None if row is None else self._plain(result, basis, fetched_at, run_id, row)
            if plain is None:
                other.append(result)
                continue
            fetch_rows.append(self.insert_fetch.params(plain[0]))
            url_rows.append(plain[1])
        if not fetch_rows:
            return other
        # SQLite gives a new row the largest rowid + 1 (fetches.id is a plain INTEGER PRIMARY KEY), and the write
        # lock is held: the group's rows take the next ids in order. Checked, not assumed: else nothing is kept.
        first = (cur.execute(self.max_fetch_id.sql).fetchone()[0] or 0) + 1
        cur.executemany(self.insert_fetch.sql, fetch_rows)
        last = cur.execute(self.max_fetch_id.sql).fetchone()[0]
        if last != first + len(fetch_rows) - 1:
            raise RuntimeError(f"fetch ids {first}..{last} for {len(fetch_rows)} rows: not consecutive")
        for fetch_id, url_row in enumerate(url_rows, start=first):
            url_row["latest_fetch_id"] = fetch_id
        cur.executemany(self.update_url.sql, [self.update_url.params(r) for r in url_rows])
        return other

    def _read_states(self, n: int) -> _Compiled:
        """SELECT url, state columns FROM urls WHERE url IN (n parameters), compiled once per n."""
        got = self._read_states_by_n.get(n)
        if got is None:
            u = schema.urls
            stmt = select(u.c.url, *(u.c[c] for c in _STATE_COLUMNS)).where(
                u.c.url.in_([bindparam(f"u{j}") for j in range(n)]))
            got = self._read_states_by_n[n] = _Compiled(stmt, self.engine)
        return got

    def _plain(self, result: FetchResult, basis: Basis, fetched_at: datetime, run_id: str | None,
               row: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The fetch row and the URL row's new values (latest_fetch_id to fill in) of a plain 304 against the
        URL's stored state; None when it is not the plain case (a change or a first baseline settles)."""
        values = [proc(v) if proc is not None else v for proc, v in zip(self.state_processors, row)]
        before = ChangeState(*values)
        settled = settle(before, basis.text_hash, fetched_at)
        moved = (settled.state.stable_hash, settled.state.stable_since) != (before.stable_hash, before.stable_since)
        if settled.confirmed or moved:  # a change (diff, changes row) or a first baseline: the generic path
            return None
        fetch_row = {
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
        }
        # settle() left stable_* and changed_* as they were (not confirmed): only these move
        url_row = {
            "where_url": result.url,
            "latest_fetch_id": None,
            "last_fetched_at": fetched_at,
            "pending_hash": settled.state.pending_hash,
            "pending_since": settled.state.pending_since,
        }
        return fetch_row, url_row


# A group is committed at this many 304s, or once its first one is this old (the caller's timer, or the next
# record). The hold bounds what a kill -9 can lose (the last group's 304s: the rerun asks for them again, still
# conditionally) and how long another writer waits for the lock; the size bounds a group on a fast run.
GROUP_MAX_ROWS = 100
GROUP_MAX_HOLD_S = 0.05


class NotModifiedGroup:
    """Plain 304s recorded on the event loop's thread, committed together.

    Why: on a warm run, where most URLs answer 304, SQLite's commit (the WAL frames of four pages, the locks)
    is most of each record's cost; committing a group pays it once, and writing its rows at the commit in bulk
    (write_many) pays the statements' overhead once too. The write lock is taken when a group opens. Each URL's
    rows are still written whole or not at all: a URL that is not the plain case writes nothing and is handed
    back at the flush, and when a statement or the commit fails the group is rolled back and every one of its
    results handed back, for the caller to record the generic way (its writer thread). A lock held by another
    writer is never waited for: the result is handed back.
    """

    def __init__(self, writer: NotModifiedWriter, raw: PoolProxiedConnection, *, max_rows: int = GROUP_MAX_ROWS,
                 max_hold_s: float = GROUP_MAX_HOLD_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._writer, self._raw = writer, raw
        self._max_rows, self._max_hold_s, self._clock = max_rows, max_hold_s, clock
        self._pending: list[Pending304] = []  # the open group: its write lock is held, its rows written at flush
        self._urls: set[str] = set()
        self._opened_at = 0.0

    @property
    def pending(self) -> int:
        """304s in the open group, not committed yet."""
        return len(self._pending)

    def record(self, result: FetchResult, basis: Basis, fetched_at: datetime, run_id: str | None) -> list[FetchResult]:
        """Add the 304 to the open group (opening one if needed: the write lock is taken now). Returns what the
        caller must record another way: [] normally; [result] when the database is busy (or the URL is already
        in the group); what flush() hands back when this 304 filled the group."""
        if result.url in self._urls:
            return [result]
        if not self._pending:
            cur = self._raw.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")  # the write lock before reading: two processes serialise
            except sqlite3.OperationalError as exc:  # "database is locked": the writer thread will wait for it
                if "locked" in str(exc) or "busy" in str(exc):
                    return [result]
                raise
            finally:
                cur.close()
            self._opened_at = self._clock()
        self._pending.append((result, basis, fetched_at, run_id))
        self._urls.add(result.url)
        if len(self._pending) >= self._max_rows or self._clock() - self._opened_at >= self._max_hold_s:
            return self.flush()
        return []

    def due_in(self) -> float | None:
        """Seconds until the open group must be committed (None: no group open)."""
        return None if not self._pending else max(0.0, self._opened_at + self._max_hold_s - self._clock())

    def flush(self) -> list[FetchResult]:
        """Write the open group's rows in bulk (NotModifiedWriter.write_many) and commit them. Returns what is
        not stored: the 304s that are not the plain case (nothing of them written), or every one of the group
        when a statement or the commit failed (rolled back)."""
        if not self._pending:
            return []
        cur = self._raw.cursor()
        try:
            other = self._writer.write_many(cur, self._pending)
        except Exception:
            log.warning("grouped write of %d 304 records failed; handing them back", len(self._pending), exc_info=True)
            return self._roll_back()
        finally:
            cur.close()
        if len(other) == len(self._pending):  # nothing written: close the transaction
            self._roll_back()
            return other
        try:
            self._raw.commit()
        except Exception:
            log.warning("commit of %d grouped 304 records failed; handing them back", len(self._pending), exc_info=True)
            return self._roll_back()
        self._pending, self._urls = [], set()
        return other

    def _roll_back(self) -> list[FetchResult]:
        handed = [r for r, *_ in self._pending]
        self._pending, self._urls = [], set()
        try:
            self._raw.rollback()
        except Exception:  # the connection is broken: what it held is gone either way
            log.debug("rollback of the 304 group failed", exc_info=True)
        return handed
