"""The robots table of the page cache: round trip, one row per origin, and the fetcher using it without pages.py."""

from __future__ import annotations

from datetime import datetime

from claims_pipeline.store.robots_table import RobotsTable
from claims_pipeline.web.fetcher import fetch_urls
from claims_pipeline.web.records import FetchStatus
from claims_pipeline.web.robots import RobotsRecord
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.store.helpers import make_cache
from claims_pipeline_tests.support.fixture_settings import fixture_settings


def no_dns(host: str) -> list[str]:
    raise OSError(f"test resolver: {host} is not mapped to the fixture web")


def test_save_load_replace_forget(tmp_path):
    with make_cache(tmp_path) as cache:
        table = RobotsTable(cache.engine)
        assert table.load("http://a.fixture") is None
        first = RobotsRecord("http://a.fixture", 200, "User-agent: *\nDisallow: /x/\n", datetime(2026, 3, 1, 12), '"e1"',
                             "Sun, 01 Mar 2026 12:00:00 GMT")
        table.save(first)
        table.save(RobotsRecord("http://b.fixture:8080", 404, "", datetime(2026, 3, 1, 13)))
        assert table.load("http://a.fixture") == first
        many = table.load_many(["http://a.fixture", "http://b.fixture:8080", "http://never.fixture"])
        assert many == {"http://a.fixture": first, "http://b.fixture:8080": table.load("http://b.fixture:8080")}
        renewed = RobotsRecord("http://a.fixture", 200, first.body, datetime(2026, 3, 2, 12), '"e2"', None)
        table.save(renewed)
        assert table.load("http://a.fixture") == renewed  # replaced, not appended
        assert table.load("http://b.fixture:8080").status == 404
        table.forget("http://a.fixture")
        assert table.load("http://a.fixture") is None and table.load("http://b.fixture:8080") is not None
    with make_cache(tmp_path) as reopened:  # kept in the SQLite file across processes/runs
        assert RobotsTable(reopened.engine).load("http://b.fixture:8080").fetched_at == datetime(2026, 3, 1, 13)


def test_fetch_urls_with_a_robots_store_asks_once_across_calls(tmp_path):
    sites = tmp_path / "sites"
    (sites / "s.fixture").mkdir(parents=True)
    (sites / "s.fixture" / "robots.txt").write_text("User-agent: *\nDisallow: /no/\n")
    with FixtureWeb(sites) as web, make_cache(tmp_path) as cache:
        settings = fixture_settings(web, tmp_path / "home")
        store = RobotsTable(cache.engine)
        one_by_one: list[str] = []
        real_load = store.load
        store.load = lambda origin: (one_by_one.append(origin), real_load(origin))[1]  # type: ignore[method-assign]
        urls = [web.url("s.fixture", "/_/page/a"), web.url("s.fixture", "/no/b.html")]
        first = {r.url: r.status for r in fetch_urls(settings.fetch, settings.pdf, urls, resolver=no_dns, robots_store=store)}
        second = {r.url: r.status for r in fetch_urls(settings.fetch, settings.pdf, urls, resolver=no_dns, robots_store=store)}
        without = {r.url: r.status for r in fetch_urls(settings.fetch, settings.pdf, urls, resolver=no_dns)}  # no store: asks again
        robots = [r for r in web.requests() if r["path"] == "/robots.txt"]
        assert first == second == without == {urls[0]: FetchStatus.OK, urls[1]: FetchStatus.ROBOTS}
        assert len(robots) == 2  # first call and the store-less call; the second call used the stored copy
        assert not any(r["path"].startswith("/no/") for r in web.requests())
        assert one_by_one == []  # each run read its origins' stored copies in one query (load_many)
