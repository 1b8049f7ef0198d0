"""The page cache on PostgreSQL: the cache, 304 fast-path and consistency tests, and the fetch-and-record tests
against the fixture web, re-run unchanged with the cache index on a real PostgreSQL server on 127.0.0.1.

The index is SQLAlchemy Core so a shared Postgres can serve several machines; this proves the same code
gives the same results there. (SQLite-only pieces — the 304 fast path, BEGIN IMMEDIATE — fall back to the
generic path, which these tests then exercise.)
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from sqlalchemy import func, select

import claims_pipeline.config.settings as settings_module
import claims_pipeline_tests.steps.pages.test_pages as pages_tests
import claims_pipeline_tests.store.test_cache as cache_tests
import claims_pipeline_tests.store.test_consistency as consistency_tests
import claims_pipeline_tests.store.test_fast304 as fast304_tests
from claims_pipeline.store import schema
from claims_pipeline.store.cache import PageCache
from claims_pipeline_tests.steps.pages.test_pages import web  # noqa: F401  (the fixture web, as a fixture)
from claims_pipeline_tests.store.postgres_server import postgres_server
from claims_pipeline_tests.store.test_concurrency import two_writers_corrupt_nothing

pytestmark = pytest.mark.postgres  # every test here runs on a throwaway PostgreSQL server


@pytest.fixture(scope="module")
def new_database():
    with postgres_server() as new_database:
        yield new_database


def _tests(module) -> list:
    return [f for name, f in vars(module).items() if name.startswith("test_") and inspect.isfunction(f)]


STORE_MODULES = (cache_tests, fast304_tests, consistency_tests)
STORE_TESTS = [(m, f) for m in STORE_MODULES for f in _tests(m)]


@pytest.mark.parametrize(("module", "test"), STORE_TESTS, ids=[f"{m.__name__.rsplit('.', 1)[1]}.{f.__name__}" for m, f in STORE_TESTS])
def test_store_behaviour_on_postgres(module, test, new_database, tmp_path, monkeypatch, capsys):
    databases: dict[str, str] = {}  # where the test would have had a SQLite file: one database each

    def database_for(place: object) -> str:
        return databases.setdefault(str(place), new_database())

    def make_cache(path: Path, **kwargs: int) -> PageCache:
        return PageCache(database_for(path), Path(path) / "cache" / "blobs", **kwargs)

    monkeypatch.setattr(module, "make_cache", make_cache)
    monkeypatch.setattr(settings_module.Settings, "cache_db_url", property(lambda self: database_for(self.home_dir)))
    kwargs = {"capsys": capsys} if "capsys" in inspect.signature(test).parameters else {}
    test(tmp_path, **kwargs)
    assert databases, f"{test.__name__} never opened a cache"
    assert not list(tmp_path.rglob("*.sqlite"))


# minus the SQLite-only ones (SQLite's lock and its inline 304 path; Postgres has neither)
PAGES_TESTS = [f for f in _tests(pages_tests) if "_sqlite_" not in f.__name__]


@pytest.mark.parametrize("test", PAGES_TESTS, ids=[f.__name__ for f in PAGES_TESTS])
def test_fetch_and_record_on_postgres(test, new_database, web, tmp_path, monkeypatch):  # noqa: F811  (the fixture)
    url = new_database()
    monkeypatch.setattr(settings_module.Settings, "cache_db_url", property(lambda self: url))
    test(web, tmp_path)
    with PageCache(url, tmp_path / "unused-blobs") as cache, cache.engine.connect() as conn:
        fetch_rows = conn.execute(select(func.count()).select_from(schema.fetches)).scalar_one()
    assert fetch_rows > 0  # the test's fetches were recorded in Postgres ...
    assert not list(tmp_path.rglob("*.sqlite"))  # ... and not in a SQLite file


def test_two_processes_on_one_postgres_cache_corrupt_nothing(new_database, tmp_path):
    """Two machines' worth of writers on one shared database: SELECT … FOR UPDATE on the URL row serialises
    each URL's read-settle-write (SQLite gets the same from BEGIN IMMEDIATE); no write is lost."""
    two_writers_corrupt_nothing(tmp_path, new_database())
