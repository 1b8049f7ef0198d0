"""The page cache: an index (SQLAlchemy Core, SQLite by default) plus content-addressed blobs.

Every fetch is appended to `fetches`; the `urls` row carries the change-detection state (see settle.py);
confirmed changes go to `changes` with their diff. Crash safety: the blobs of a fetch are written (atomically)
BEFORE the one transaction that records it, so a kill at any moment leaves rows whose blobs exist and, at worst,
an orphan blob or temp file (consistency.gc removes those).

PageState.text is the text the latest usable fetch read (a 304: the text it stands for): the figures are checked
on what the page says now. Only the CHANGE waits for the second sighting: a new text seen once is carried with
PageState.unconfirmed_since set (its first sighting), and content_changed, changed_at and the diff move when it is
confirmed (so a page that differs on every fetch never flags a change).

Bulk runs (pages.refresh_pages) read conditional_bases() once (validators to send + the cached fetch each 304
will stand for), write each result with append() (same per-URL transaction, no read-back) and read all states
once at the end: a warm run's 304 costs one short transaction and no text-blob read (SQLite: fast304.py).

`now` overrides the fetch time wherever given (tests and backfills move the clock); otherwise the
FetchResult's own fetched_at is used, else the current time.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import (
    Connection,
    CursorResult,
    Engine,
    RowMapping,
    and_,
    bindparam,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError, ProgrammingError

from claims_pipeline.store import schema
from claims_pipeline.store.blob_stores import open_blob_store
from claims_pipeline.store.blobs import text_hash as text_hash_of
from claims_pipeline.store.clock import iso, to_utc, utc_now
from claims_pipeline.store.diffs import text_diff
from claims_pipeline.store.engine import add_columns, is_sqlite, lock_schema, make_engine, write_transaction
from claims_pipeline.store.errors import CacheError, database_problem, unreachable, write_failure_advice
from claims_pipeline.store.fast304 import NotModifiedGroup, NotModifiedWriter
from claims_pipeline.store.records import Basis, PageState
from claims_pipeline.store.settle import ChangeState, Settlement, settle
from claims_pipeline.web.records import FetchResult, FetchStatus

if TYPE_CHECKING:
    from claims_pipeline.config.settings import PageCacheSpec

log = logging.getLogger(__name__)

USABLE = (FetchStatus.OK.value, FetchStatus.NOT_MODIFIED.value)  # fetches that show the page's text
_CHUNK = 500  # URLs per IN (...) clause: well under SQLite's variable limit
_RECORD_ATTEMPTS = 4


@dataclass(frozen=True, slots=True)
class FetchRow:
    """One entry of a URL's fetch history."""

    id: int
    url: str
    run_id: str | None
    fetched_at: str
    http_status: int | None
    fetch_status: str
    content_type: str
    content_kind: str
    raw_hash: str | None
    text_hash: str | None
    reused_text: bool
    etag: str | None
    last_modified: str | None
    note: str
    final_url: str | None
    changed: bool


class RunInfo(TypedDict):
    """A registered fetch run (start_run, finish_run)."""

    run_id: str
    started_at: str | None
    finished_at: str | None
    url_count: int


@dataclass(frozen=True, slots=True)
class ChangeRow:
    url: str
    changed_at: str
    confirmed_at: str
    old_hash: str
    new_hash: str
    diff: str | None
    fetch_id: int  # the fetch that confirmed it


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


Reread = Callable[[bytes, str, str], "str | None"]  # (raw bytes, content type, url) -> text, or None


class PageCache:
    def __init__(
        self,
        db_url: str,
        blob_dir: Path | str,
        *,
        diff_context_lines: int = 2,
        max_diff_lines: int = 200,
        reread: Reread | None = None,
    ) -> None:
        self.db_url = db_url
        # How this version turns stored bytes into text (pages.py passes the web layer's reader; the store does
        # not import it). With it, a new text is first checked against the stable fetch's bytes read anew.
        self.reread = reread
        self.blobs = open_blob_store(blob_dir)  # a folder, or a URL: file://, s3://, gs://
        _refuse_an_emptied_index(db_url, self.blobs)
        self.engine: Engine = make_engine(db_url)
        self._fast304 = NotModifiedWriter(self.engine) if is_sqlite(self.engine) else None
        self.diff_context_lines = diff_context_lines
        self.max_diff_lines = max_diff_lines
        _create_tables(self.engine)

    @classmethod
    def at(cls, spec: PageCacheSpec) -> PageCache:
        """The page cache the spec names (Settings.page_cache)."""
        return cls(spec.db_url, spec.blobs, diff_context_lines=spec.diff_context_lines,
                   max_diff_lines=spec.max_diff_lines)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> PageCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- writing ---------------------------------------------------------------------------------
    @contextmanager
    def not_modified_recorder(self) -> Iterator[NotModifiedGroup | None]:
        """For the fetch loop's own thread: record plain 304s without a thread hop, committed in small groups,
        and without ever waiting for a lock (see fast304.NotModifiedGroup); what it hands back is not stored:
        give it to append() on a writer thread. None on databases without the fast path."""
        if self._fast304 is None:
            yield None
            return
        with self._fast304.without_waiting() as group:
            yield group

    def record(self, result: FetchResult, now: str | datetime | None = None, *, run_id: str | None = None,
               basis: Basis | None = None) -> PageState:
        """Append one fetch to the URL's history, settle change detection, and return the page's state."""
        state = self._write(result, now, run_id=run_id, basis=basis, read_back=True)
        assert state is not None
        return state

    def append(self, result: FetchResult, now: str | datetime | None = None, *, run_id: str | None = None,
               basis: Basis | None = None) -> None:
        """record() without reading the state back: a bulk run reads all states once at its end (cache.states),
        so a 304 costs no text-blob read here. Same transaction and guarantees as record()."""
        self._write(result, now, run_id=run_id, basis=basis, read_back=False)

    def _write(self, result: FetchResult, now: str | datetime | None, *, run_id: str | None, basis: Basis | None,
               read_back: bool) -> PageState | None:
        status = FetchStatus(result.status)
        fetched_at = to_utc(now) or to_utc(result.fetched_at) or utc_now()
        downloaded = status is not FetchStatus.NOT_MODIFIED
        # Blobs first: a row must never point at a blob that is not on disk.
        raw_hash = self.blobs.put(result.raw, "raw") if downloaded and result.raw is not None else None
        new_text_hash = self.blobs.put_text(result.text) if downloaded and result.text is not None else None
        fast = self._fast304 if (basis is not None and status is FetchStatus.NOT_MODIFIED and not read_back) else None
        # Diffs of confirmed changes, by (old_hash, new_hash), computed with no transaction open: whether a fetch
        # confirms a change, and against which text, is only known under the write lock, so a transaction that
        # finds it needs a diff not computed yet ends without writing anything, the diff is made here, and the
        # fetch is recorded again. Kept across retries, so a lock timeout never recomputes one.
        diffs: dict[tuple[str, str], str | None] = {}
        rereads: dict[tuple[str, str], str | None] = {}  # (url, stable text hash) -> hash of its bytes read anew
        attempt = waited = 0
        while True:
            try:
                if fast is not None and basis is not None and fast.try_record(result, basis, fetched_at, run_id):
                    return None
                with write_transaction(self.engine) as conn:
                    # another process moving the page's state between our tries could ask for yet another diff;
                    # past a few waits, make it in the transaction (bounded: see diffs.py)
                    needed = self._record_in(conn, result, status, fetched_at, raw_hash, new_text_hash, run_id, basis,
                                             diffs, rereads, may_wait=waited < _RECORD_ATTEMPTS)
                    if needed is None and not read_back:
                        return None
                    if needed is None:
                        # read back inside the same transaction: another process's later fetch cannot leak in
                        return self._states_in(conn, [result.url])[result.url]
            except (IntegrityError, OperationalError):
                # IntegrityError: another process inserted the same new URL first (Postgres); OperationalError:
                # SQLite stayed locked past busy_timeout. Both are safe to redo: nothing was committed.
                attempt += 1
                if attempt == _RECORD_ATTEMPTS:
                    raise
                continue
            # the transaction wrote nothing and is over: compute what it needed with no lock held, then retry
            waited += 1
            if needed.diff is not None:
                diffs[needed.diff] = self.diff_between(*needed.diff, new_text=result.text)
            if needed.reread is not None:
                rereads[needed.reread] = self._reread_hash(*needed.reread)

    def diff_between(self, old_hash: str, new_hash: str, *, new_text: str | None = None) -> str | None:
        """The diff from stored text old_hash to new_hash (new_text: that text, when the caller holds it), as a
        confirmed change keeps it; None when a text is not stored. CPU-heavy on big pages: the recording path
        calls it outside write transactions."""
        old_text = self.blobs.get_text(old_hash)
        new_text = new_text if new_text is not None else self.blobs.get_text(new_hash)
        if old_text is None or new_text is None:
            return None
        return text_diff(old_text, new_text, context_lines=self.diff_context_lines, max_lines=self.max_diff_lines)

    def _reread_hash(self, url: str, stable_hash: str) -> str | None:
        """The hash of the text this version reads from the bytes that gave the stable text (None: unknown)."""
        with self.engine.connect() as conn:
            row = conn.execute(_STMT.stable_source, {"url": url, "text_hash": stable_hash}).first()
        if row is None or self.reread is None:
            return None
        raw = self.blobs.get(row.raw_hash, "raw")
        if raw is None:
            return None
        try:
            text = self.reread(raw, row.content_type or "", row.final_url or url)
        except Exception:  # a reader failure only means we cannot tell: the usual rule applies
            log.exception("re-reading the stable bytes of %s failed", url)
            return None
        return None if text is None else text_hash_of(text)

    def _record_in(self, conn: Connection, result: FetchResult, status: FetchStatus, fetched_at: datetime,
                   raw_hash: str | None, text_hash: str | None, run_id: str | None, basis: Basis | None,
                   diffs: dict[tuple[str, str], str | None], rereads: Mapping[tuple[str, str], str | None], *,
                   may_wait: bool) -> _Needed | None:
        """Record one fetch in the caller's write transaction; or write nothing and return what must be
        computed with no lock held first."""
        url = result.url
        url_row = conn.execute(_STMT.url_row, {"url": url}).mappings().first()
        if status is FetchStatus.NOT_MODIFIED and basis is None:
            # The 304 answers the validators we sent, so the fetch they came from (basis, read in bulk before
            # the run) is what the page still is; without one, it is the latest usable fetch.
            row = conn.execute(_STMT.latest_usable, {"url": url}).first()
            basis = None if row is None else Basis(*row)
        fetched = _fetched(result, status, raw_hash, text_hash, basis)
        before = _change_state(url_row)
        stable = _stable_replaced(fetched, before)
        same_bytes = stable is not None and fetched.raw_hash is not None and conn.execute(
            _STMT.same_bytes_read_as, {"url": url, "raw_hash": fetched.raw_hash, "text_hash": stable}).first() is not None
        decided = _decide(url, fetched, before, fetched_at, same_bytes_as_stable=same_bytes,
                          rereads=rereads if self.reread is not None else None, diffs=diffs, may_wait=may_wait)
        if isinstance(decided, _Needed):
            return decided
        if decided.diff_key is not None and decided.diff_key not in diffs:
            diffs[decided.diff_key] = self.diff_between(*decided.diff_key, new_text=result.text)
        diff = None if decided.diff_key is None else diffs[decided.diff_key]
        _write_fetch(conn, result, status, fetched_at, run_id, decided, url_known=url_row is not None, diff=diff)
        return None

    # ---- runs (resume after a kill) ---------------------------------------------------------------
    def start_run(self, run_id: str | None = None, *, now: str | datetime | None = None, url_count: int = 0) -> str:
        """Register a fetch run (idempotent: an existing run_id is kept, for resuming)."""
        run_id = run_id or uuid.uuid4().hex
        r = schema.runs
        with write_transaction(self.engine) as conn:
            exists = conn.execute(select(r.c.run_id).where(r.c.run_id == run_id)).first()
            if exists is None:
                conn.execute(insert(r).values(run_id=run_id, started_at=to_utc(now) or utc_now(), url_count=url_count))
        return run_id

    def finish_run(self, run_id: str, *, now: str | datetime | None = None) -> None:
        r = schema.runs
        with write_transaction(self.engine) as conn:
            conn.execute(update(r).where(r.c.run_id == run_id).values(finished_at=to_utc(now) or utc_now()))

    def run_info(self, run_id: str) -> RunInfo | None:
        r = schema.runs
        with self.engine.connect() as conn:
            row = conn.execute(select(r).where(r.c.run_id == run_id)).mappings().first()
        if row is None:
            return None
        return RunInfo(run_id=row["run_id"], started_at=iso(row["started_at"]), finished_at=iso(row["finished_at"]),
                       url_count=row["url_count"])

    def urls_done_in_run(self, run_id: str, urls: Iterable[str]) -> set[str]:
        """URLs that already have a fetch recorded under run_id."""
        f = schema.fetches
        done: set[str] = set()
        with self.engine.connect() as conn:
            for chunk in _chunks(list(urls)):
                stmt = select(f.c.url).where(and_(f.c.run_id == run_id, f.c.url.in_(chunk))).distinct()
                done.update(r[0] for r in conn.execute(stmt))
        return done

    # ---- reading ---------------------------------------------------------------------------------
    def state(self, url: str) -> PageState | None:
        return self.states([url]).get(url)

    def identity(self) -> str:
        """This index's first fetch (id and when it was recorded): fetch ids are only comparable within one
        index, and a deleted and rebuilt cache numbers its fetches from 1 again."""
        f = schema.fetches
        with self.engine.connect() as conn:
            row = conn.execute(select(f.c.id, f.c.recorded_at).order_by(f.c.id).limit(1)).first()
        return "" if row is None else f"{row.id}@{iso(row.recorded_at)}"

    def states(self, urls: Iterable[str], *, with_text: bool = True) -> dict[str, PageState]:
        """PageState of every given URL that has been fetched at least once. with_text=False leaves
        PageState.text None (the text blob is only checked to exist): for callers that keep text_hash and read
        the text later, such as the Dagster fetch asset, so a run does not read and unzip every page twice."""
        out: dict[str, PageState] = {}
        with self.engine.connect() as conn:
            for chunk in _chunks(list(dict.fromkeys(urls))):
                out.update(self._states_in(conn, chunk, with_text=with_text))
        return out

    def fetch_statuses(self, urls: Iterable[str]) -> dict[str, str]:
        """Each fetched URL's fetch_status as states() gives it (a usable fetch reads OK when its text is stored,
        UNAVAILABLE when not), without building the states: what a run reads of every page before it fetches."""
        u, f = schema.urls, schema.fetches
        out: dict[str, str] = {}
        with self.engine.connect() as conn:
            for chunk in _chunks(list(dict.fromkeys(urls))):
                rows = conn.execute(select(u.c.url, f.c.fetch_status, f.c.text_hash)
                                    .join(f, f.c.id == u.c.latest_fetch_id).where(u.c.url.in_(chunk))).all()
                present = self.blobs.exists_many((h, "text") for _, status, h in rows if status in USABLE and h)
                for url, status, h in rows:
                    if status in USABLE:
                        status = FetchStatus.OK.value if (h, "text") in present else FetchStatus.UNAVAILABLE.value
                    out[url] = status
        return out

    def _states_in(self, conn: Connection, chunk: list[str], *, with_text: bool = True) -> dict[str, PageState]:
        u, f, c = schema.urls, schema.fetches, schema.changes
        stmt = (
            select(u, f.c.fetch_status, f.c.http_status, f.c.content_kind, f.c.note, f.c.fetched_at,
                   f.c.raw_hash, f.c.text_hash.label("fetch_text_hash"), f.c.changed, c.c.diff,
                   c.c.fetch_id.label("change_fetch_id"))
            .join(f, f.c.id == u.c.latest_fetch_id)
            .outerjoin(c, c.c.id == u.c.last_change_id)
            .where(u.c.url.in_(chunk))
        )
        rows = conn.execute(stmt).mappings().all()
        present = None if with_text else self.blobs.exists_many(  # one batch: parallel requests on object storage
            (r["fetch_text_hash"], "text") for r in rows if r["fetch_status"] in USABLE and r["fetch_text_hash"])
        return {row["url"]: self._page_state(row, with_text, present) for row in rows}

    def _page_state(self, row: RowMapping, with_text: bool = True, present: set[tuple[str, str]] | None = None) -> PageState:
        status, note = row["fetch_status"], row["note"] or ""
        text = None
        # the text the latest fetch read; a failed fetch reads none, and keeps the confirmed text's hash
        text_hash, unconfirmed_since = row["stable_hash"], None
        if status in USABLE:
            found = False
            if row["fetch_text_hash"]:
                text_hash = row["fetch_text_hash"]
                if text_hash != row["stable_hash"]:  # a new text seen once: its change awaits the next sighting
                    unconfirmed_since = iso(row["pending_since"] if row["pending_hash"] == text_hash
                                            else row["fetched_at"])
                if with_text:
                    text = self.blobs.get_text(text_hash)
                    found = text is not None
                elif present is not None:
                    found = (text_hash, "text") in present
                else:
                    found = self.blobs.exists(text_hash, "text")
            if not found:
                reason = "304 without a cached copy" if not row["fetch_text_hash"] else "cached text blob missing or damaged"
                status, note = FetchStatus.UNAVAILABLE.value, note if reason in note else (note + "; " if note else "") + reason
            else:
                status = FetchStatus.OK.value  # a 304 means the cached text still stands
        return PageState(
            url=row["url"],
            fetch_status=status,
            http_status=row["http_status"],
            content_kind=row["content_kind"] or "",
            note=note,
            fetched_at=iso(row["fetched_at"]) or "",
            text_hash=text_hash,
            raw_hash=row["raw_hash"],
            text=text,
            content_changed=bool(row["changed"]),
            changed_at=iso(row["changed_at"]),
            stable_since=iso(row["stable_since"]),
            diff=row["diff"],
            change_confirmed_at=iso(row["change_confirmed_at"]),
            change_fetch_id=row["change_fetch_id"],
            unconfirmed_since=unconfirmed_since,
        )

    def text(self, text_hash: str | None) -> str | None:
        return self.blobs.get_text(text_hash)

    def history(self, url: str) -> list[FetchRow]:
        """Every fetch of url, oldest first."""
        f = schema.fetches
        with self.engine.connect() as conn:
            rows = conn.execute(select(f).where(f.c.url == url).order_by(f.c.id)).mappings().all()
        return [
            FetchRow(
                id=r["id"], url=r["url"], run_id=r["run_id"], fetched_at=iso(r["fetched_at"]) or "",
                http_status=r["http_status"], fetch_status=r["fetch_status"], content_type=r["content_type"],
                content_kind=r["content_kind"], raw_hash=r["raw_hash"], text_hash=r["text_hash"],
                reused_text=bool(r["reused_text"]), etag=r["etag"], last_modified=r["last_modified"], note=r["note"],
                final_url=r["final_url"], changed=bool(r["changed"]),
            )
            for r in rows
        ]

    def changes(self, url: str) -> list[ChangeRow]:
        """Every confirmed change of url, oldest first."""
        c = schema.changes
        with self.engine.connect() as conn:
            rows = conn.execute(select(c).where(c.c.url == url).order_by(c.c.id)).mappings().all()
        return [
            ChangeRow(r["url"], iso(r["changed_at"]) or "", iso(r["confirmed_at"]) or "", r["old_hash"], r["new_hash"], r["diff"],
                      r["fetch_id"])
            for r in rows
        ]

    def validators(self, urls: Iterable[str]) -> dict[str, tuple[str | None, str | None]]:
        """(etag, last_modified) of each URL's latest usable fetch, when it has validators and its text blob
        is on disk (a 304 must leave us with the text it stands for)."""
        return {url: (b.etag, b.last_modified) for url, b in self.conditional_bases(urls).items()}

    def conditional_bases(self, urls: Iterable[str]) -> dict[str, Basis]:
        """For each URL that can be re-fetched conditionally, the cached fetch its validators come from, read
        in one query per chunk: pass validators() of these to the fetcher and basis= to record()/append()."""
        f = schema.fetches
        out: dict[str, Basis] = {}
        with self.engine.connect() as conn:
            for chunk in _chunks(list(dict.fromkeys(urls))):
                latest = (
                    select(func.max(f.c.id).label("id"))
                    .where(and_(f.c.url.in_(chunk), f.c.fetch_status.in_(USABLE), f.c.text_hash.is_not(None)))
                    .group_by(f.c.url)
                    .subquery()
                )
                stmt = select(f.c.url, f.c.raw_hash, f.c.text_hash, f.c.content_type, f.c.content_kind, f.c.etag,
                              f.c.last_modified).join(latest, latest.c.id == f.c.id)
                bases = {url: Basis(*fields) for url, *fields in conn.execute(stmt)}
                bases = {url: b for url, b in bases.items() if b.etag or b.last_modified}
                present = self.blobs.exists_many((b.text_hash, "text") for b in bases.values())
                out.update((url, b) for url, b in bases.items() if (b.text_hash, "text") in present)
        return out

    def fresh_urls(self, urls: Iterable[str], ttl_days: float, now: str | datetime | None = None) -> set[str]:
        """URLs whose latest fetch was usable and is younger than ttl_days."""
        u, f = schema.urls, schema.fetches
        cutoff = (to_utc(now) or utc_now()) - timedelta(days=ttl_days)
        fresh: set[str] = set()
        with self.engine.connect() as conn:
            for chunk in _chunks(list(dict.fromkeys(urls))):
                stmt = (
                    select(u.c.url)
                    .join(f, f.c.id == u.c.latest_fetch_id)
                    .where(and_(u.c.url.in_(chunk), f.c.fetch_status.in_(USABLE), f.c.fetched_at >= cutoff))
                )
                fresh.update(r[0] for r in conn.execute(stmt))
        return fresh

    def referenced_hashes(self) -> set[tuple[str, str]]:
        """(hash, kind) of every blob a fetch row points at."""
        f = schema.fetches
        refs: set[tuple[str, str]] = set()
        with self.engine.connect() as conn:
            for (h,) in conn.execute(select(f.c.raw_hash).where(f.c.raw_hash.is_not(None)).distinct()):
                refs.add((h, "raw"))
            for (h,) in conn.execute(select(f.c.text_hash).where(f.c.text_hash.is_not(None)).distinct()):
                refs.add((h, "text"))
        return refs


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


def _refuse_an_emptied_index(db_url: str, blobs: object) -> None:
    """A SQLite index file of 0 bytes beside stored pages was cut short (a full disk, an interrupted copy or
    restore): SQLite would take it for a new, empty database, and the cache would start again without a word,
    the pages' history lost and every page's next text taken as its baseline. Refused, naming the file and
    what to do. A 0-byte file with no stored page is a first run that stopped early: used as it is."""
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return
    index = Path(url.database).expanduser()
    try:
        if index.stat().st_size != 0:
            return
    except OSError:  # absent (a new cache), or not to be looked at here: opening it says what is wrong
        return
    iter_blobs = getattr(blobs, "iter_blobs", None)
    if iter_blobs is not None and next(iter(iter_blobs()), None) is None:
        return
    raise CacheError(f"page cache index {index} is empty (0 bytes) while the page cache holds stored pages: it was "
                     "cut short (a full disk, an interrupted copy?), and a new index would lose every page's history "
                     f"without a word. Restore it from a backup, or move it aside (mv {index} {index}.damaged) to "
                     "start a new index (the next audit takes every page as new)")


def _create_tables(engine: Engine) -> None:
    # In a write transaction from the start: two processes opening a fresh SQLite file at once would otherwise
    # both read "no table" in deferred transactions and deadlock upgrading to write; on Postgres an advisory
    # lock orders them. Retry covers the rest (a lock timeout, a creation raced by a database we don't lock).
    where = engine.url.render_as_string(hide_password=True)
    for attempt in range(3):
        try:
            with write_transaction(engine) as conn:
                lock_schema(conn)
                schema.metadata.create_all(conn)
                add_columns(conn, schema.host_leases, schema.HOST_LEASE_ADDED)
                _check_schema(conn, where)
            return
        except CacheError:
            raise
        except DatabaseError as exc:
            if "not a database" in str(exc.orig) or "unable to open" in str(exc.orig) or "readonly" in str(exc.orig):
                raise CacheError(f"{where}: cannot use it as the page cache ({exc.orig}); check the path and its "
                                 "permissions (cache.db_url), or move the file aside to start a new cache") from None
            problem = database_problem(exc)
            if unreachable(problem) or attempt == 2 or not isinstance(exc, (OperationalError, IntegrityError, ProgrammingError)):
                raise CacheError(_cache_database_message(where, engine, problem)) from None


def _cache_database_message(where: str, engine: Engine, problem: str) -> str:
    """One line: which database (cache.db_url, or the default file under the home), what it said, what to check."""
    if unreachable(problem):
        return (f"page cache database {where} (cache.db_url) does not answer: {problem}; check that the server "
                "runs and accepts connections from here, and the URL's host, port, database and user")
    if is_sqlite(engine) and (advice := write_failure_advice(problem, engine.url.database or where)) is not None:
        return f"page cache index {where} cannot be written: {problem}; {advice}"
    if is_sqlite(engine):
        return (f"page cache index {where} (cache.db_url, by default <home>/cache/index.sqlite) is damaged: {problem}; "
                "check it with `python -m claims_pipeline.store.consistency`, or move it aside with its blob folder "
                "to start a new cache (the next audit fetches every page again)")
    return (f"page cache database {where} (cache.db_url) cannot be used: {problem}; check the database and the "
            "user's rights on it")


def _check_schema(conn: Connection, where: str) -> None:
    """Tables made by another version: a missing column would fail every record with a raw SQL error, an added
    NOT NULL column without a default every insert. Both are named here, with what to do, before any work."""
    inspector = inspect(conn)
    for table in schema.metadata.sorted_tables:
        found = {c["name"]: c for c in inspector.get_columns(table.name)}
        missing = [c.name for c in table.columns if c.name not in found]
        foreign = [n for n, c in found.items() if n not in table.columns and not c.get("nullable", True)
                   and c.get("default") is None]
        if missing or foreign:
            what = f"lacks column(s) {', '.join(missing)}" if missing else f"has required column(s) {', '.join(foreign)}"
            raise CacheError(f"{where}: table {table.name} {what}: this page cache was made by another version of "
                             "claims_pipeline. Move it aside (with its blob folder) to start a new cache, or point "
                             "cache.db_url at a new file.")


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), _CHUNK):
        yield list(items[i : i + _CHUNK])
