"""refresh_pages against the real fixture web on 127.0.0.1 and a real cache."""

import pytest

from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.consistency import verify_cache
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import fixture_settings

LEVY = "/property/annual-levy.html"  # has an epoch-2 variant
DUTY = "/property/transfer-duty.html"
HOST = "www.tax.gov.xa"


@pytest.fixture
def web():
    with FixtureWeb() as w:
        yield w


def page_requests(web, since=0):
    return [r for r in web.requests()[since:] if r["path"] != "/robots.txt"]


def test_urls_are_normalised_deduped_fetched_once_and_recorded(web, tmp_path):
    settings = fixture_settings(web, tmp_path)
    levy = web.url(HOST, LEVY)
    messy = [levy, levy.replace(HOST, HOST.upper()) + "#top", web.url(HOST, DUTY), "  ", web.url("a.fixture", "/_/status/410")]
    seen = []
    states = refresh_pages(settings.page_fetching, messy, now="2026-03-01T00:00:00Z", on_state=seen.append)
    assert set(states) == {levy, web.url(HOST, DUTY), web.url("a.fixture", "/_/status/410")}
    assert sorted(s.url for s in seen) == sorted(states)
    assert [r["path"] for r in page_requests(web)].count(LEVY) == 1
    assert states[levy].fetch_status == "OK" and states[levy].content_kind == "html"
    assert "levy" in states[levy].text.lower() and states[levy].stable_since == "2026-03-01T00:00:00+00:00"
    assert states[web.url("a.fixture", "/_/status/410")].fetch_status == "DEAD"
    with PageCache.at(settings.page_cache) as cache:
        assert verify_cache(cache).ok
        assert len(cache.history(levy)) == 1


def test_rerun_is_conditional_and_downloads_no_body(web, tmp_path):
    settings = fixture_settings(web, tmp_path)
    urls = [web.url(HOST, LEVY), web.url(HOST, DUTY), web.url("b.fixture", "/_/page/rates")]
    first = refresh_pages(settings.page_fetching, urls, now="2026-03-01T00:00:00Z")
    mark = len(web.requests())
    second = refresh_pages(settings.page_fetching, urls, now="2026-03-02T00:00:00Z")
    again = page_requests(web, mark)
    assert len(again) == 3 and all(r["status"] == 304 and r["if_none_match"] for r in again)
    assert sum(r["bytes_sent"] for r in again) == 0
    for url in urls:
        assert second[url].fetch_status == "OK" and second[url].http_status == 304
        assert second[url].text == first[url].text and second[url].text_hash == first[url].text_hash
        assert second[url].fetched_at == "2026-03-02T00:00:00+00:00"


def test_a_warm_runs_304s_on_one_host_share_one_keep_alive_connection(web, tmp_path):
    """A 304 has no body: the fetcher closes it unread and the pool keeps its connection for the next URL."""
    settings = fixture_settings(web, tmp_path)
    urls = [web.url("b.fixture", f"/_/page/p{i}") for i in range(4)]
    refresh_pages(settings.page_fetching, urls, now="2026-03-01T00:00:00Z")
    mark = len(web.requests())
    refresh_pages(settings.page_fetching, urls, now="2026-03-02T00:00:00Z")
    again = page_requests(web, mark)
    assert [r["status"] for r in again] == [304] * 4
    assert len({r["client_port"] for r in again}) == 1


def test_page_change_is_confirmed_on_the_second_run_after_it_with_first_sighting_date(web, tmp_path):
    settings = fixture_settings(web, tmp_path)
    url = web.url(HOST, LEVY)
    base = refresh_pages(settings.page_fetching, [url], now="2026-03-01T00:00:00Z")[url]
    web.set_epoch(2)
    seen_once = refresh_pages(settings.page_fetching, [url], now="2026-03-05T00:00:00Z")[url]
    # one sighting is not a change, but the figures are read on what the page says now
    assert not seen_once.content_changed and seen_once.text != base.text and "1.1 %" in (seen_once.text or "")
    assert seen_once.unconfirmed_since == "2026-03-05T00:00:00+00:00" and seen_once.changed_at is None
    confirmed = refresh_pages(settings.page_fetching, [url], now="2026-03-09T00:00:00Z")[url]
    assert confirmed.content_changed and confirmed.http_status == 304  # the 304 is the second sighting
    assert confirmed.changed_at == "2026-03-05T00:00:00+00:00" == confirmed.stable_since
    assert confirmed.unconfirmed_since is None
    assert confirmed.text != base.text and confirmed.diff
    assert any(line.startswith("-") for line in confirmed.diff.splitlines()[2:])
    assert any(line.startswith("+") for line in confirmed.diff.splitlines()[2:])
    later = refresh_pages(settings.page_fetching, [url], now="2026-03-12T00:00:00Z")[url]
    assert not later.content_changed and later.changed_at == confirmed.changed_at


def test_force_false_skips_fresh_pages_only(web, tmp_path):
    settings = fixture_settings(web, tmp_path)
    old, new = web.url(HOST, LEVY), web.url(HOST, DUTY)
    refresh_pages(settings.page_fetching, [old], now="2026-03-01T00:00:00Z")
    refresh_pages(settings.page_fetching, [new], now="2026-03-20T00:00:00Z")
    mark = len(web.requests())
    states = refresh_pages(settings.page_fetching, [old, new], force=False, ttl_days=10, now="2026-03-25T00:00:00Z")
    assert [r["path"] for r in page_requests(web, mark)] == [LEVY]
    assert states[new].fetched_at == "2026-03-20T00:00:00+00:00" and states[old].fetched_at == "2026-03-25T00:00:00+00:00"


def test_same_run_id_resumes_fetching_only_what_is_missing(web, tmp_path):
    settings = fixture_settings(web, tmp_path)
    a, b = web.url(HOST, LEVY), web.url("c.fixture", "/_/page/other")
    refresh_pages(settings.page_fetching, [a], run_id="run-7")
    mark = len(web.requests())
    states = refresh_pages(settings.page_fetching, [a, b], run_id="run-7")
    assert [r["path"] for r in page_requests(web, mark)] == ["/_/page/other"]
    assert set(states) == {a, b}


def test_bad_url_does_not_stop_the_others(web, tmp_path):
    settings = fixture_settings(web, tmp_path)
    good = web.url(HOST, DUTY)
    states = refresh_pages(settings.page_fetching, ["ftp://files.example/x.pdf", "not a url", good])
    assert states[good].fetch_status == "OK"
    assert states["ftp://files.example/x.pdf"].fetch_status == "DEAD"
    assert "not an http(s) URL" in states["not a url"].note


def test_a_locked_sqlite_database_never_stalls_the_fetch_loop_and_loses_no_304(web, tmp_path, monkeypatch):
    """Plain 304s are recorded on the loop's thread without waiting for a lock; while another process holds
    SQLite's write lock they go to the writer thread instead, which waits, and every one is recorded."""
    import sqlite3
    import threading
    import time

    from claims_pipeline.steps.pages import refresh as pages
    from claims_pipeline.store.engine import BUSY_TIMEOUT_MS

    settings = fixture_settings(web, tmp_path)
    urls = [web.url(f"h{i}.fixture", f"/_/page/p{j}") for i in range(4) for j in range(3)]
    refresh_pages(settings.page_fetching, urls, now="2026-03-01T00:00:00Z")
    handed_over = []
    real_put = pages._Recorder.put
    monkeypatch.setattr(pages._Recorder, "put", lambda self, r: (handed_over.append(r.url), real_put(self, r)))

    # a run with the database free: every 304 recorded on the loop's thread. Within robots_cache_hours, so
    # no robots.txt answer is saved meanwhile: that save (a thread of this run) would hold the write lock too
    refresh_pages(settings.page_fetching, urls, now="2026-03-01T06:00:00Z")
    assert handed_over == []

    # once the run is fetching, another connection (as another process would) takes the write lock for a while
    from claims_pipeline.web.fetcher import Fetcher

    db_path = settings.cache_db_url.removeprefix("sqlite:///")
    other = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    released_at: list[float] = []
    release_lock = threading.Lock()

    def release() -> None:
        with release_lock:
            if not released_at:
                released_at.append(time.time())
                other.execute("COMMIT")

    real_fetch_many = Fetcher.fetch_many

    async def lock_at_first_result(self, urls, validators=None):
        # held from the first result until the last one has been handed on (on a slow machine a fixed hold let
        # the last 304s through unlocked); a loop that waited for the lock would never get there, and the timer
        # bounds the test then
        seen = 0
        async for result in real_fetch_many(self, urls, validators):
            if seen == 0:
                other.execute("BEGIN IMMEDIATE")
                threading.Timer(10.0, release).start()
            seen += 1
            yield result
            if seen == len(urls):
                release()

    monkeypatch.setattr(Fetcher, "fetch_many", lock_at_first_result)
    mark = len(web.requests())
    states = refresh_pages(settings.page_fetching, urls, now="2026-03-03T00:00:00Z")
    fetched = page_requests(web, mark)
    assert len(fetched) == len(urls) and all(r["status"] == 304 for r in fetched)
    assert sorted(handed_over) == sorted(urls)  # each went to the writer thread, none was dropped
    assert max(r["start"] for r in fetched) < released_at[0]  # the loop kept fetching while the lock was held
    assert all(states[u].fetched_at == "2026-03-03T00:00:00+00:00" for u in urls)
    with PageCache.at(settings.page_cache) as cache:
        assert verify_cache(cache).ok
        assert all(len(cache.history(u)) == 3 for u in urls)
    other.close()


def test_a_page_that_cannot_be_stored_is_left_out_not_shown_as_its_previous_state(web, tmp_path):
    """The pages are fetched again, but nothing can be written (the blob folder is gone, a file in its place):
    reporting each page's old text as this run's would show a stale page as fresh. They are left out, so the
    audit reads them as not fetched."""
    import shutil

    settings = fixture_settings(web, tmp_path)
    levy, duty = web.url(HOST, LEVY), web.url(HOST, DUTY)
    refresh_pages(settings.page_fetching, [levy, duty], now="2026-03-01T00:00:00Z")
    with PageCache.at(settings.page_cache) as cache:
        blob_root = cache.blobs.root
    shutil.rmtree(blob_root)
    blob_root.write_text("not a folder")
    web.set_epoch(2)
    states = refresh_pages(settings.page_fetching, [levy, duty], now="2026-03-02T00:00:00Z")
    assert states == {}
    assert [r["path"] for r in page_requests(web)].count(LEVY) == 2  # fetched, just not storable


def test_the_page_reader_gives_exactly_the_text_recorded_at_fetch_time(web, tmp_path):
    """pages.page_reader is what the cache uses to tell a new reading from a page change: on stored bytes it
    must give the very text the fetch recorded, for HTML and PDF alike."""
    from claims_pipeline.steps.pages.refresh import page_reader
    from claims_pipeline.store.blobs import text_hash

    settings = fixture_settings(web, tmp_path)
    urls = [web.url(HOST, LEVY), web.url(HOST, DUTY), web.url("b.fixture", "/_/page/rates"),
            web.url("docs.fixture", "/_/pdf/text")]
    states = refresh_pages(settings.page_fetching, urls, now="2026-03-01T00:00:00Z")
    reread = page_reader(settings.fetch, settings.pdf)
    with PageCache.at(settings.page_cache) as cache:
        for url in urls:
            (row,) = cache.history(url)
            assert row.fetch_status == "OK", (url, row.note)
            raw = cache.blobs.get(row.raw_hash, "raw")
            assert text_hash(reread(raw, row.content_type, row.final_url or url)) == states[url].text_hash, url


def test_sqlite_groups_of_304s_are_committed_within_the_hold_while_the_run_goes_on(web, tmp_path, monkeypatch):
    """Plain 304s share a commit (fast304.NotModifiedGroup); when no further result comes to commit the group,
    the loop's timer does, so another process (and a kill) sees them long before the run ends."""
    import asyncio
    import sqlite3

    from claims_pipeline.store.fast304 import GROUP_MAX_HOLD_S
    from claims_pipeline.web.fetcher import Fetcher

    settings = fixture_settings(web, tmp_path)
    quick = [web.url("q1.fixture", "/_/page/a"), web.url("q2.fixture", "/_/page/b")]
    slow = web.url("s.fixture", "/_/slow?delay=1.5")
    refresh_pages(settings.page_fetching, quick + [slow], now="2026-03-01T00:00:00Z")
    db_path = settings.cache_db_url.removeprefix("sqlite:///")
    seen_mid_run: list[int] = []

    def count_304s() -> None:
        with sqlite3.connect(db_path) as other:
            seen_mid_run.append(other.execute("SELECT count(*) FROM fetches WHERE http_status = 304").fetchone()[0])

    real_fetch_many = Fetcher.fetch_many

    async def look_while_the_slow_page_is_awaited(self, urls, validators=None):
        n = 0
        async for result in real_fetch_many(self, urls, validators):
            yield result
            n += 1
            if n == len(quick):  # both 304s recorded; the slow page still has a second to go
                asyncio.get_running_loop().call_later(GROUP_MAX_HOLD_S + 0.4, count_304s)

    monkeypatch.setattr(Fetcher, "fetch_many", look_while_the_slow_page_is_awaited)
    states = refresh_pages(settings.page_fetching, quick + [slow], now="2026-03-02T00:00:00Z")
    assert [states[u].http_status for u in quick] == [304, 304] and states[slow].http_status == 200
    assert seen_mid_run == [2]  # committed by the timer, a second before the run ended
    with PageCache.at(settings.page_cache) as cache:
        assert verify_cache(cache).ok
