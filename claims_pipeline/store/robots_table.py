"""robots.txt across runs, in the page cache's index (the `robots` table): the RobotsStore the fetcher uses.

One row per origin, replaced on every save (upsert by primary key); whether a row may be reused, re-validated
or replaced is decided in claims_pipeline.web.robots.RobotsCache, not here.
"""

from __future__ import annotations

from sqlalchemy import Engine, RowMapping, bindparam, delete, insert, select

from claims_pipeline.store import schema
from claims_pipeline.store.engine import write_transaction
from claims_pipeline.web.robots import RobotsRecord

_T = schema.robots
_LOAD = select(_T).where(_T.c.origin == bindparam("origin"))
_DELETE = delete(_T).where(_T.c.origin == bindparam("origin"))
_INSERT = insert(_T)
_CHUNK = 500


def _record(row: RowMapping) -> RobotsRecord:
    return RobotsRecord(origin=row["origin"], status=row["status"], body=row["body"] or "",
                        fetched_at=row["fetched_at"], etag=row["etag"], last_modified=row["last_modified"])


class RobotsTable:
    """``RobotsTable(cache.engine)``; the table itself is created with the rest of the cache (PageCache)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def load(self, origin: str) -> RobotsRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(_LOAD, {"origin": origin}).mappings().first()
        return None if row is None else _record(row)

    def load_many(self, origins: list[str]) -> dict[str, RobotsRecord]:
        """The stored copies among these origins, in a few queries (chunks keep under bound-parameter limits)."""
        found: dict[str, RobotsRecord] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(origins), _CHUNK):
                for row in conn.execute(select(_T).where(_T.c.origin.in_(origins[i:i + _CHUNK]))).mappings():
                    found[row["origin"]] = _record(row)
        return found

    def save(self, record: RobotsRecord) -> None:
        # delete + insert in one write transaction: a portable upsert (SQLite and Postgres alike)
        with write_transaction(self.engine) as conn:
            conn.execute(_DELETE, {"origin": record.origin})
            conn.execute(_INSERT, {"origin": record.origin, "status": record.status, "body": record.body,
                                   "fetched_at": record.fetched_at, "etag": record.etag,
                                   "last_modified": record.last_modified})

    def forget(self, origin: str) -> None:
        """Drop an origin's copy: its next run asks the site again."""
        with write_transaction(self.engine) as conn:
            conn.execute(_DELETE, {"origin": origin})
