"""Opening the page cache's index: an index cut to 0 bytes beside stored pages refused, the tables created (or
checked against this version's schema) under a lock, and a database error said as what to check.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    Connection,
    Engine,
    inspect,
)
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError, ProgrammingError

from claims_pipeline.store import schema
from claims_pipeline.store.engine import add_columns, is_sqlite, lock_schema, write_transaction
from claims_pipeline.store.errors import CacheError, database_problem, unreachable, write_failure_advice


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
