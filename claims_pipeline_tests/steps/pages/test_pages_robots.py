"""robots.txt kept across refresh_pages runs (fetch.robots_cache_hours), proven with the fixture web's request log."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.clock import to_utc
from claims_pipeline.store.robots_table import RobotsTable
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import fixture_settings

HOST = "rules.fixture"
ORIGIN = f"http://{HOST}"
DISALLOW = "User-agent: *\nDisallow: /private/\n"
T0 = "2026-03-01T00:00:00+00:00"


def at(hours: float) -> str:
    from datetime import timedelta

    return (to_utc(T0) + timedelta(hours=hours)).isoformat() + "+00:00"


@pytest.fixture
def sites(tmp_path: Path) -> Path:
    root = tmp_path / "sites"
    (root / HOST / "private").mkdir(parents=True)
    (root / HOST / "robots.txt").write_text(DISALLOW)
    (root / HOST / "private" / "secret.html").write_text("<html><body><p>" + "private text " * 40 + "</p></body></html>")
    return root


@pytest.fixture
def web(sites: Path):
    with FixtureWeb(sites) as w:
        yield w


def robots_hits(web: FixtureWeb, since: int, host: str = HOST) -> list[dict]:
    return [r for r in web.requests()[since:] if r["path"] == "/robots.txt" and r["host"] == host]


def private_hits(web: FixtureWeb, since: int) -> list[dict]:
    return [r for r in web.requests()[since:] if r["path"].startswith("/private/")]


def urls_for(web: FixtureWeb, host: str = HOST) -> tuple[str, str]:
    return web.url(host, "/_/page/open"), web.url(host, "/private/secret.html")


def stored(settings, origin: str = ORIGIN):
    with PageCache.at(settings.page_cache) as cache:
        return RobotsTable(cache.engine).load(origin)


def break_robots(sites: Path, host: str = HOST) -> None:
    """A robots.txt symlink that points at itself: the fixture web answers 500 (its error path), a real 5xx."""
    path = sites / host / "robots.txt"
    path.unlink(missing_ok=True)
    os.symlink("robots.txt", path)


def test_second_run_within_ttl_requests_no_robots_and_still_honours_disallow(web, tmp_path):
    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web)
    first = refresh_pages(settings.page_fetching, [page, private], now=T0)
    assert first[private].fetch_status == "ROBOTS" and first[page].fetch_status == "OK"
    assert [r["status"] for r in robots_hits(web, 0)] == [200]
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, [page, private], now=at(23.5))
    assert robots_hits(web, mark) == []  # within the 24 h TTL: not asked again
    assert second[private].fetch_status == "ROBOTS" and private_hits(web, 0) == []
    assert [r["path"] for r in web.requests()[mark:]] == ["/_/page/open"]  # the page itself is still re-checked
    assert second[page].http_status == 304


def test_disallow_learned_in_run_one_holds_in_run_two_even_if_the_file_changed(web, sites, tmp_path):
    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web)
    refresh_pages(settings.page_fetching, [page, private], now=T0)
    (sites / HOST / "robots.txt").write_text("User-agent: *\nDisallow:\n")  # the site now allows everything
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, [private], now=at(1))
    assert second[private].fetch_status == "ROBOTS" and "Disallow" in second[private].note
    assert robots_hits(web, mark) == [] and private_hits(web, 0) == []
    # past the TTL: a conditional request; the new file (new ETag) comes back as a 200 and replaces the copy
    mark = len(web.requests())
    third = refresh_pages(settings.page_fetching, [private], now=at(25))
    [hit] = robots_hits(web, mark)
    assert hit["if_none_match"] and hit["status"] == 200
    assert third[private].fetch_status == "OK" and len(private_hits(web, mark)) == 1
    assert stored(settings).body == "User-agent: *\nDisallow:\n"


def test_after_ttl_a_conditional_request_is_made_and_304_keeps_the_stored_rules(web, tmp_path):
    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web)
    refresh_pages(settings.page_fetching, [page, private], now=T0)
    before = stored(settings)
    assert before.status == 200 and before.body == DISALLOW and before.etag
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, [page, private], now=at(24.5))
    [hit] = robots_hits(web, mark)
    assert hit["status"] == 304 and hit["if_none_match"] == before.etag and hit["bytes_sent"] == 0
    assert hit["if_modified_since"] == before.last_modified
    assert second[private].fetch_status == "ROBOTS" and private_hits(web, 0) == []
    after = stored(settings)
    assert after.body == DISALLOW and after.fetched_at == to_utc(at(24.5))  # the 304 renewed the copy
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, [page, private], now=at(30))
    assert robots_hits(web, mark) == []  # 5.5 h after the re-validation: reused again


def test_5xx_robots_disallows_this_run_and_is_not_cached(web, sites, tmp_path):
    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web)
    break_robots(sites)
    first = refresh_pages(settings.page_fetching, [page, private], now=T0)
    assert [r["status"] for r in robots_hits(web, 0)] == [500]
    # unreachable and nothing stored: RFC 9309 §2.3.1.4, complete disallow for this run (fetch.robots_unreachable)
    assert {first[u].fetch_status for u in (page, private)} == {"ROBOTS"}
    assert first[page].note == ("robots.txt unreachable (http 500): not fetched, as RFC 9309 asks "
                                "(fetch.robots_unreachable); asked again next run")
    assert [r["path"] for r in web.requests()] == ["/robots.txt"]  # no page of the origin requested
    assert stored(settings) is None
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, [page], now=at(1))
    assert [r["status"] for r in robots_hits(web, mark)] == [500]  # asked again: nothing was cached
    (sites / HOST / "robots.txt").unlink()
    (sites / HOST / "robots.txt").write_text(DISALLOW)
    mark = len(web.requests())
    third = refresh_pages(settings.page_fetching, [page, private], now=at(2))
    assert [r["status"] for r in robots_hits(web, mark)] == [200]
    assert third[private].fetch_status == "ROBOTS" and len(private_hits(web, mark)) == 0
    assert third[page].fetch_status == "OK"


def test_5xx_robots_with_robots_unreachable_allow_fetches_this_run_and_is_not_cached(web, sites, tmp_path):
    settings = fixture_settings(web, tmp_path / "home", robots_unreachable="allow")
    page, private = urls_for(web)
    break_robots(sites)
    first = refresh_pages(settings.page_fetching, [page, private], now=T0)
    assert [r["status"] for r in robots_hits(web, 0)] == [500]
    assert first[private].fetch_status == "OK" and first[page].fetch_status == "OK"  # the setting: allow all
    assert stored(settings) is None
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, [page], now=at(1))
    assert [r["status"] for r in robots_hits(web, mark)] == [500]  # asked again: nothing was cached


def test_5xx_on_revalidation_keeps_the_last_good_copy_without_renewing_it(web, sites, tmp_path):
    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web)
    refresh_pages(settings.page_fetching, [page, private], now=T0)
    break_robots(sites)
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, [private], now=at(25))
    assert [r["status"] for r in robots_hits(web, mark)] == [500]
    assert second[private].fetch_status == "ROBOTS" and private_hits(web, 0) == []  # the site's last word holds
    assert stored(settings).fetched_at == to_utc(T0)  # not renewed by a failure
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, [private], now=at(26))
    assert len(robots_hits(web, mark)) == 1  # still stale: asked again


def test_4xx_robots_is_cached_as_allow_all(web, tmp_path):
    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web, "bare.fixture")  # no site folder: /robots.txt is a 404
    first = refresh_pages(settings.page_fetching, [page, private], now=T0)
    assert [r["status"] for r in robots_hits(web, 0, "bare.fixture")] == [404]
    assert first[private].fetch_status == "DEAD"  # requested (allowed), and the fixture has no such file
    entry = stored(settings, "http://bare.fixture")
    assert entry.status == 404 and entry.body == ""
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, [page, private], now=at(12))
    assert robots_hits(web, mark, "bare.fixture") == []
    assert len(private_hits(web, mark)) == 1


def test_ttl_zero_always_asks_but_conditionally(web, tmp_path):
    settings = fixture_settings(web, tmp_path / "home", robots_cache_hours=0)
    page, private = urls_for(web)
    refresh_pages(settings.page_fetching, [page, private], now=T0)
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, [page, private], now=at(0.01))
    [hit] = robots_hits(web, mark)
    assert hit["if_none_match"] and hit["status"] == 304
    assert second[private].fetch_status == "ROBOTS"


def test_cached_crawl_delay_still_raises_the_interval(web, sites, tmp_path):
    (sites / HOST / "robots.txt").write_text(DISALLOW + "Crawl-delay: 0.3\n")
    settings = fixture_settings(web, tmp_path / "home", interval_ms=20)
    refresh_pages(settings.page_fetching, [web.url(HOST, "/_/page/warm")], now=T0)
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, [web.url(HOST, f"/_/page/c{i}") for i in range(3)], now=at(1))
    entries = web.requests()[mark:]
    assert [e["path"] for e in entries if e["path"] == "/robots.txt"] == []
    starts = sorted(e["start"] for e in entries)
    assert len(starts) == 3
    assert min(b - a for a, b in zip(starts, starts[1:])) >= 0.3 - 0.05  # Crawl-delay 0.3 beats 20 ms


def test_a_stored_copy_with_a_utf8_bom_keeps_its_first_group(web, tmp_path):
    # copies stored before the fetcher stripped the BOM are reused (and kept by every 304) as they are
    from claims_pipeline.web.robots import RobotsRecord

    settings = fixture_settings(web, tmp_path / "home")
    page, private = urls_for(web)
    refresh_pages(settings.page_fetching, [page], now=T0)  # creates the cache
    with PageCache.at(settings.page_cache) as cache:
        RobotsTable(cache.engine).save(RobotsRecord(ORIGIN, 200, "\ufeff" + DISALLOW, to_utc(T0)))
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, [private], now=at(1))
    assert robots_hits(web, mark) == []  # the stored copy is used
    assert second[private].fetch_status == "ROBOTS" and private_hits(web, 0) == []
