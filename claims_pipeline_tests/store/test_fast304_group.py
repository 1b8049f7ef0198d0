"""The event loop thread's 304 groups (fast304.NotModifiedGroup, SQLite only): several URLs' plain 304s share
one commit, each URL's rows are stored whole or not at all, and whatever cannot be stored is handed back."""

import sqlite3
import time

import pytest

from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.clock import to_utc
from claims_pipeline.store.fast304 import NotModifiedGroup
from claims_pipeline_tests.store.helpers import day, make_cache, not_modified, ok

URLS = [f"https://www.example.gov/tax/p{i}" for i in range(5)]


def _seeded(tmp_path):
    cache = make_cache(tmp_path)
    for u in URLS:
        cache.record(ok(u, f"text of {u}", etag='"a"'), now=day(1))
    return cache, cache.conditional_bases(URLS)


def _reader(cache: PageCache) -> sqlite3.Connection:
    """Another connection, as another process would open it: it sees committed rows only."""
    return sqlite3.connect(cache.engine.url.database, timeout=0, isolation_level=None)


def _stored_304s(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM fetches WHERE fetch_status = 'NOT_MODIFIED'").fetchone()[0]


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_group_is_committed_at_its_size_and_each_304_becomes_visible_whole(tmp_path):
    cache, bases = _seeded(tmp_path)
    other = _reader(cache)
    when = to_utc(day(2))
    with cache.engine.connect() as c:
        raw = c.connection.dbapi_connection
        raw.execute("PRAGMA busy_timeout = 0")
        group = NotModifiedGroup(cache._fast304, raw, max_rows=3, max_hold_s=60, clock=_Clock())
        assert group.record(not_modified(URLS[0]), bases[URLS[0]], when, "r") == []
        assert group.record(not_modified(URLS[1]), bases[URLS[1]], when, "r") == []
        assert group.pending == 2 and _stored_304s(other) == 0  # written, not committed: nobody else sees them
        with pytest.raises(sqlite3.OperationalError, match="locked"):  # and the group holds the write lock
            other.execute("BEGIN IMMEDIATE")
        assert group.record(not_modified(URLS[2]), bases[URLS[2]], when, "r") == []
        assert group.pending == 0 and _stored_304s(other) == 3  # the third filled it: committed
        other.execute("BEGIN IMMEDIATE")  # the lock is free again
        other.execute("ROLLBACK")
    for u in URLS[:3]:
        last = cache.history(u)[-1]
        assert last.fetch_status == "NOT_MODIFIED" and last.text_hash == bases[u].text_hash
        assert cache.state(u).fetched_at == "2026-03-02T12:00:00+00:00"  # the URL row moved with its fetch row
    other.close()


def test_a_group_is_committed_once_its_first_304_is_max_hold_old(tmp_path):
    cache, bases = _seeded(tmp_path)
    other, clock, when = _reader(cache), _Clock(), to_utc(day(2))
    with cache.engine.connect() as c:
        group = NotModifiedGroup(cache._fast304, c.connection.dbapi_connection, max_rows=100, max_hold_s=0.05, clock=clock)
        assert group.due_in() is None  # nothing open
        group.record(not_modified(URLS[0]), bases[URLS[0]], when, "r")
        clock.now += 0.03
        assert group.due_in() == pytest.approx(0.02)  # what the caller's timer waits for
        group.record(not_modified(URLS[1]), bases[URLS[1]], when, "r")
        assert _stored_304s(other) == 0
        clock.now += 0.03
        group.record(not_modified(URLS[2]), bases[URLS[2]], when, "r")  # the group is 60 ms old: committed
        assert _stored_304s(other) == 3 and group.due_in() is None
        group.record(not_modified(URLS[3]), bases[URLS[3]], when, "r")
        assert group.flush() == [] and _stored_304s(other) == 4  # flush commits what is open
    other.close()


def test_a_304_that_is_not_the_plain_case_is_handed_back_at_the_flush_and_the_others_are_stored(tmp_path):
    cache, bases = _seeded(tmp_path)
    unknown = "https://www.example.gov/never-fetched"
    with cache.engine.connect() as c:
        group = NotModifiedGroup(cache._fast304, c.connection.dbapi_connection, max_rows=100, max_hold_s=60, clock=_Clock())
        when = to_utc(day(2))
        assert group.record(not_modified(unknown), bases[URLS[0]], when, "r") == []
        assert group.flush() == [not_modified(unknown)]  # nothing of the group was plain: nothing written
        assert group.pending == 0
        group.record(not_modified(URLS[0]), bases[URLS[0]], when, "r")
        assert group.record(not_modified(unknown), bases[URLS[0]], when, "r") == []
        group.record(not_modified(URLS[1]), bases[URLS[1]], when, "r")
        assert group.pending == 3
        assert group.flush() == [not_modified(unknown)]
    assert [cache.history(u)[-1].fetch_status for u in URLS[:2]] == ["NOT_MODIFIED"] * 2
    assert cache.state(unknown) is None


def test_a_failing_write_rolls_the_group_back_and_hands_every_304_of_it_back(tmp_path):
    cache, bases = _seeded(tmp_path)
    with cache.engine.begin() as c:  # a real failure inside SQLite: the fetch row of URLS[2] cannot be written
        c.exec_driver_sql(f"CREATE TRIGGER no_p2 BEFORE INSERT ON fetches WHEN NEW.url = '{URLS[2]}' "
                          "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    with cache.engine.connect() as c:
        group = NotModifiedGroup(cache._fast304, c.connection.dbapi_connection, max_rows=3, max_hold_s=60, clock=_Clock())
        when = to_utc(day(2))
        results = [not_modified(u) for u in URLS[:3]]
        assert group.record(results[0], bases[URLS[0]], when, "r") == []
        assert group.record(results[1], bases[URLS[1]], when, "r") == []
        assert group.record(results[2], bases[URLS[2]], when, "r") == results  # it filled the group: all three back
        assert group.pending == 0
        assert group.record(not_modified(URLS[3]), bases[URLS[3]], when, "r") == []  # a new group starts
        assert group.flush() == []
    assert [len(cache.history(u)) for u in URLS] == [1, 1, 1, 2, 1]


def test_a_failing_commit_hands_the_whole_group_back(tmp_path):
    cache, bases = _seeded(tmp_path)
    with cache.engine.connect() as c:
        raw = c.connection.dbapi_connection
        group = NotModifiedGroup(cache._fast304, raw, max_rows=100, max_hold_s=60, clock=_Clock())
        when = to_utc(day(2))
        results = [not_modified(u) for u in URLS[:2]]
        for r in results:
            assert group.record(r, bases[r.url], when, "r") == []
        # a deferred foreign-key violation in the same transaction: SQLite refuses the COMMIT itself
        raw.execute("PRAGMA defer_foreign_keys = ON")
        raw.execute("INSERT INTO changes (url, fetch_id, changed_at, confirmed_at, old_hash, new_hash) "
                    "VALUES ('https://nowhere.example/', 999999, '2026-03-02', '2026-03-02', 'a', 'b')")
        assert group.flush() == results
    assert all(len(cache.history(u)) == 1 for u in URLS)
    with cache.engine.connect() as c:
        assert c.exec_driver_sql("SELECT count(*) FROM changes").scalar() == 0


def test_a_write_lock_held_elsewhere_hands_the_304_back_without_waiting(tmp_path):
    cache, bases = _seeded(tmp_path)
    other = _reader(cache)
    other.execute("BEGIN IMMEDIATE")
    with cache._fast304.without_waiting() as group:
        started = time.monotonic()
        assert group.record(not_modified(URLS[0]), bases[URLS[0]], to_utc(day(2)), "r") == [not_modified(URLS[0])]
        assert time.monotonic() - started < 1.0  # busy_timeout 0: no wait for the lock
        assert group.pending == 0
    other.execute("ROLLBACK")
    other.close()
    assert len(cache.history(URLS[0])) == 1


def _history(cache: PageCache) -> tuple[list[dict], list[dict]]:
    """Every fetch and URL row, ids kept (a URL's latest_fetch_id must name its own new fetch), minus recorded_at."""
    from sqlalchemy import select

    from claims_pipeline.store import schema

    with cache.engine.connect() as conn:
        fetches = [dict(r) for r in conn.execute(select(schema.fetches).order_by(schema.fetches.c.id)).mappings()]
        urls = [dict(r) for r in conn.execute(select(schema.urls).order_by(schema.urls.c.url)).mappings()]
    for r in fetches:
        r.pop("recorded_at")
    return fetches, urls


def test_a_bulk_group_leaves_the_rows_and_states_the_per_url_path_leaves(tmp_path):
    """Plain 304s, one during a pending change (plain: it keeps the pending sighting), one that would confirm a
    change (not plain: handed back, then recorded the generic way), recorded through one group written in bulk
    and, on an identical cache, one URL at a time: the same rows, ids and states, and no 304 lost."""
    urls = [f"https://www.example.gov/tax/q{i}" for i in range(12)]

    def seeded(path):
        cache = make_cache(path)
        for u in urls:
            cache.record(ok(u, f"text of {u}", etag='"a"'), now=day(1))
        for u in urls[3:5]:  # a new text seen once: pending
            cache.record(ok(u, f"new text of {u}", etag='"b"'), now=day(2))
        return cache

    when = to_utc(day(3))
    per_url, grouped = seeded(tmp_path / "per_url"), seeded(tmp_path / "grouped")
    bases = per_url.conditional_bases(urls)
    assert bases == grouped.conditional_bases(urls)
    # the per-URL path in the order the group ends up storing them: the plain ones, then the two handed back
    for u in [u for u in urls if u not in urls[3:5]] + urls[3:5]:
        per_url.append(not_modified(u), now=when, run_id="r", basis=bases[u])
    with grouped._fast304.without_waiting() as group:
        handed = []
        for u in urls:
            handed += group.record(not_modified(u), bases[u], when, "r")
        handed += group.flush()
    assert [r.url for r in handed] == urls[3:5]  # the 304 of the new text confirms it: not plain
    for r in handed:
        grouped.append(r, now=when, run_id="r", basis=bases[r.url])
    per_rows, grouped_rows = _history(per_url), _history(grouped)
    assert len(grouped_rows[0]) == len(urls) * 2 + 2  # every 304 stored
    assert grouped_rows == per_rows  # ids included: each URL's latest_fetch_id names its own new fetch
    assert grouped.states(urls) == per_url.states(urls)
