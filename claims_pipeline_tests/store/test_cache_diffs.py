"""The diff of a confirmed change is computed with no write transaction open (SQLite: the database's write lock
is free meanwhile), once per change even when recording has to be retried, and is bounded on adversarial
pages. SQLite-only (they probe SQLite's lock and inject its lock timeout), so not in the Postgres rerun."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

import pytest
from sqlalchemy.exc import OperationalError

import claims_pipeline.store.cache as cache_module
from claims_pipeline.store import diffs
from claims_pipeline_tests.store.helpers import day, make_cache, not_modified, ok

URL = "https://www.example.gov/tax/rates"
OLD, NEW = "intro\nVAT 18 %\nend", "intro\nVAT 20 %\nend"


def _write_lock_is_free(tmp_path) -> bool:
    probe = sqlite3.connect(tmp_path / "cache" / "index.sqlite", timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


@pytest.fixture
def diff_calls(monkeypatch, tmp_path):
    """Each text_diff the cache makes, with whether SQLite's write lock was free at that moment."""
    calls: list[bool] = []

    def spy(old, new, **kwargs):
        calls.append(_write_lock_is_free(tmp_path))
        return diffs.text_diff(old, new, **kwargs)

    monkeypatch.setattr(cache_module, "text_diff", spy)
    return calls


def test_the_write_lock_is_free_while_the_diff_is_made(tmp_path, diff_calls):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, OLD), now=day(1))
    cache.record(ok(URL, NEW), now=day(2))
    assert diff_calls == []  # a first sighting makes no diff
    state = cache.record(ok(URL, NEW), now=day(3))
    assert diff_calls == [True]
    assert state.content_changed and state.changed_at == day(2) and "-VAT 18 %" in state.diff and "+VAT 20 %" in state.diff
    [change] = cache.changes(URL)
    assert change.confirmed_at == day(3) and change.diff == state.diff
    assert [row.changed for row in cache.history(URL)] == [False, False, True]


def test_a_304_that_confirms_also_diffs_outside_the_lock(tmp_path, diff_calls):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, OLD, etag='"a"'), now=day(1))
    cache.record(ok(URL, NEW, etag='"b"'), now=day(2))
    cache.append(not_modified(URL), now=day(3), basis=cache.conditional_bases([URL])[URL])  # fast path hands over
    assert diff_calls == [True]
    state = cache.state(URL)
    assert state.content_changed and state.text == NEW and "+VAT 20 %" in state.diff


def test_a_lock_timeout_after_the_diff_does_not_make_it_again(tmp_path, diff_calls, monkeypatch):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, OLD), now=day(1))
    cache.record(ok(URL, NEW), now=day(2))
    real = cache_module.write_transaction
    opened = []

    @contextmanager
    def flaky(engine):
        opened.append(1)
        if len(opened) == 2:  # the transaction that comes back with the diff: SQLite stayed locked
            raise OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked"))
        with real(engine) as conn:
            yield conn

    monkeypatch.setattr(cache_module, "write_transaction", flaky)
    state = cache.record(ok(URL, NEW), now=day(3))
    assert len(opened) == 3 and diff_calls == [True]
    assert state.content_changed and "+VAT 20 %" in state.diff and len(cache.changes(URL)) == 1


def test_without_deferrals_left_the_diff_is_made_in_the_transaction(tmp_path, diff_calls, monkeypatch):
    monkeypatch.setattr(cache_module, "_RECORD_ATTEMPTS", 0)  # as if the page's state kept moving under us
    cache = make_cache(tmp_path)
    cache.record(ok(URL, OLD), now=day(1))
    cache.record(ok(URL, NEW), now=day(2))
    state = cache.record(ok(URL, NEW), now=day(3))
    assert diff_calls == [False] and state.content_changed and "+VAT 20 %" in state.diff


def test_an_adversarial_page_change_is_recorded_with_a_bounded_approximated_diff(tmp_path, diff_calls):
    # the security probe's page: old difflib took 11 s on these 16 000 lines, inside the write transaction (its
    # first line is the same on both sides, hence the region from line 2)
    old = "\n".join(f"l{i % 150}" for i in range(16_000))
    new = "\n".join(f"l{(i * 7 + i // 150) % 150}" for i in range(16_000))
    cache = make_cache(tmp_path, max_diff_lines=50)
    cache.record(ok(URL, old), now=day(1))
    cache.record(ok(URL, new), now=day(2))
    state = cache.record(ok(URL, new), now=day(3))
    assert diff_calls == [True] and state.content_changed and state.changed_at == day(2)
    lines = state.diff.splitlines()
    assert len(lines) <= 50 and lines[2].startswith("@@ approximated diff of lines -2,15999 +2,15999:")
