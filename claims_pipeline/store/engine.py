"""The cache's database engine. Every dialect-specific line lives here, so the core paths in cache.py stay plain
SQLAlchemy Core and a Postgres URL works for the multi-machine deployment.

SQLite: WAL (readers never block the writer), a busy timeout (a second process waits instead of failing),
foreign keys on, and write transactions opened with BEGIN IMMEDIATE so two processes recording the same URL
serialise their read-settle-write instead of both reading the old row.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, Table, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import ConnectionPoolEntry

BUSY_TIMEOUT_MS = 30_000
_WRITE_OPTION = "claims_pipeline_write"


def make_engine(db_url: str) -> Engine:
    """An engine for the cache index; creates the folder of a SQLite file."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite":
        return create_engine(db_url, pool_pre_ping=True)
    if url.database and url.database != ":memory:":
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(db_url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    _configure_sqlite(engine)
    return engine


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (pysqlite's own BEGIN is deferred and late)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL survives a process kill; power loss may drop the tail
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(_WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction that will write: takes SQLite's write lock up front (no-op elsewhere)."""
    with engine.connect() as conn:
        conn = conn.execution_options(**{_WRITE_OPTION: True})
        with conn.begin():
            yield conn


# Any fixed 64-bit number: the key of the Postgres advisory lock that serialises creating the tables.
_SCHEMA_LOCK_KEY = 0x636C61696D73  # "claims"


def lock_schema(conn: Connection) -> None:
    """Within a write transaction: make processes that create the tables at once take turns. Postgres runs
    CREATE TABLE … IF NOT EXISTS checks and creates as separate steps, so two fresh processes collide on a
    new database; a transaction-scoped advisory lock orders them. SQLite: BEGIN IMMEDIATE already did."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK_KEY})


def add_columns(conn: Connection, table: Table, names: Sequence[str]) -> None:
    """Within a write transaction (lock_schema held): ALTER TABLE … ADD COLUMN for those of `names` the table
    lacks, each with its server default (a table made by an earlier version, whose rows then read the default)."""
    from sqlalchemy import inspect

    have = {c["name"] for c in inspect(conn).get_columns(table.name)}
    for name in names:
        if name in have:
            continue
        column = table.c[name]
        kind = column.type.compile(dialect=conn.dialect)
        default = column.server_default.arg if column.server_default is not None else None  # type: ignore[attr-defined]
        default_sql = "" if default is None else f" DEFAULT '{default}'"
        null_sql = "" if column.nullable else " NOT NULL"
        conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN {name} {kind}{null_sql}{default_sql}'))


def insert_if_missing(conn: Connection, table: Table,
                      values: Mapping[str, object] | Sequence[Mapping[str, object]]) -> None:
    """INSERT rows unless one with their primary key exists (another process may insert it at the same moment)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        conn.execute(pg_insert(table).values(values).on_conflict_do_nothing())
    elif conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        conn.execute(sqlite_insert(table).values(values).on_conflict_do_nothing())
    else:
        raise NotImplementedError(f"insert_if_missing on {conn.dialect.name}")


def database_time(conn: Connection) -> float:
    """Now, in epoch seconds, on the clock every process sharing this database agrees on: PostgreSQL's own
    (clock_timestamp(), the moment of the call, not of the transaction's start), so machines' clocks may
    differ; SQLite's file is one machine's, so its clock (time.time())."""
    if conn.dialect.name == "postgresql":
        return float(conn.execute(text("SELECT extract(epoch from clock_timestamp())")).scalar_one())
    return time.time()


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def integrity_problems(engine: Engine) -> list[str]:
    """SQLite's integrity_check findings ([] when healthy); other databases check themselves."""
    if not is_sqlite(engine):
        return []
    with engine.connect() as conn:
        rows = [r[0] for r in conn.execute(text("PRAGMA integrity_check"))]
        conn.rollback()
    return [] if rows == ["ok"] else rows
