"""The page cache: an index (SQLAlchemy Core, SQLite by default) plus content-addressed blobs.

Every fetch is appended to `fetches`; the `urls` row carries the change-detection state (see change_confirmation.py);
confirmed changes go to `changes` with their diff. Crash safety: the blobs of a fetch are written (atomically)
BEFORE the one transaction that records it, so a kill at any moment leaves rows whose blobs exist and, at worst,
an orphan blob or temp file (consistency.gc removes those).

PageCache does the I/O: what one fetch records is decided in record_decision.py (no I/O), the rows it writes
are in fetch_rows.py, and opening the index (tables, schema check) in index_setup.py.

PageState.text is the text the latest usable fetch read (a 304: the text it stands for): the figures are checked
on what the page says now. Only the CHANGE waits for the second sighting: a new text seen once is carried with
PageState.unconfirmed_since set (its first sighting), and content_changed, changed_at and the diff move when it is
confirmed (so a page that differs on every fetch never flags a change).

Bulk runs (pages.refresh_pages) read conditional_bases() once (validators to send + the cached fetch each 304
will stand for), write the results that arrive together with append_many() (one transaction for them, no
read-back; the plain 304s in groups on the fetch loop's thread, SQLite: fast304.py) and read all states once at
the end: a warm run's 304 costs a share of one group's statements and commit, and no text-blob read.

`now` overrides the fetch time wherever given (tests and backfills move the clock); otherwise the
FetchResult's own fetched_at is used, else the current time.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import (
    Connection,
    Engine,
    RowMapping,
    and_,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError

from claims_pipeline.store import schema
from claims_pipeline.store.blob_stores import open_blob_store
from claims_pipeline.store.blobs import text_hash as text_hash_of
from claims_pipeline.store.clock import iso, to_utc, utc_now
from claims_pipeline.store.diffs import text_diff
from claims_pipeline.store.engine import is_sqlite, make_engine, write_transaction
from claims_pipeline.store.fast304 import NotModifiedGroup, NotModifiedWriter
from claims_pipeline.store.fetch_rows import _STMT, _change_state, _write_fetch
from claims_pipeline.store.index_setup import _create_tables, _refuse_an_emptied_index
from claims_pipeline.store.record_decision import USABLE, _decide, _fetched, _Needed, _stable_replaced
from claims_pipeline.store.records import Basis, PageState
from claims_pipeline.web.records import FetchResult, FetchStatus

if TYPE_CHECKING:
    from claims_pipeline.config.settings import PageCacheSpec

log = logging.getLogger(__name__)

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

    def append_many(self, items: Sequence[tuple[FetchResult, datetime, Basis | None]], *,
                    run_id: str | None) -> list[tuple[FetchResult, Exception]]:
        """append() of several fetches (result, fetch time, basis) in ONE write transaction: a run's writer thread
        pays one commit for what arrived together instead of one per URL. Blobs first, as in append(). A fetch
        that needs a fact made with no lock held (a diff, a re-reading) is left out of the transaction and
        appended alone after it; when the transaction fails, each is appended alone, so one bad page costs only
        itself. Returns the fetches that could not be stored, with why."""
        if len(items) == 1:
            result, when, basis = items[0]
            try:
                self.append(result, now=when, run_id=run_id, basis=basis)
                return []
            except Exception as exc:
                return [(result, exc)]
        hashes = []
        for result, _, _ in items:
            downloaded = FetchStatus(result.status) is not FetchStatus.NOT_MODIFIED
            hashes.append((self.blobs.put(result.raw, "raw") if downloaded and result.raw is not None else None,
                           self.blobs.put_text(result.text) if downloaded and result.text is not None else None))
        alone: list[tuple[FetchResult, datetime, Basis | None]] = []
        try:
            with write_transaction(self.engine) as conn:
                # a 304 handed back by the loop's group (the lock was busy) takes the same fast path, in this transaction
                fast = self._fast304
                cur = conn.connection.dbapi_connection.cursor() if fast is not None else None  # type: ignore[union-attr]
                for (result, when, basis), (raw_hash, new_text_hash) in zip(items, hashes, strict=True):
                    if fast is not None and cur is not None and basis is not None \
                            and FetchStatus(result.status) is FetchStatus.NOT_MODIFIED and fast.write_in(cur, result, basis, when, run_id):
                        continue
                    needed = self._record_in(conn, result, FetchStatus(result.status), when, raw_hash, new_text_hash,
                                             run_id, basis, {}, {}, may_wait=True)
                    if needed is not None:
                        alone.append((result, when, basis))
        except Exception:
            log.warning("recording %d fetches together failed; recording each alone", len(items), exc_info=True)
            alone = list(items)
        failed: list[tuple[FetchResult, Exception]] = []
        for result, when, basis in alone:
            try:
                self.append(result, now=when, run_id=run_id, basis=basis)
            except Exception as exc:
                failed.append((result, exc))
        return failed

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



def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), _CHUNK):
        yield list(items[i : i + _CHUNK])
