"""robots.txt answers the fetcher must read as RFC 9309 says, proven from the fixture web's request log."""

from __future__ import annotations

import socket
import time

import pytest

from claims_pipeline.web.politeness import HostThrottle
from claims_pipeline.web.records import FetchStatus
from claims_pipeline_tests.web.conftest import run_fetch
from claims_pipeline_tests.web.test_politeness import TOLERANCE_S


def _hits(web, host: str) -> list[str]:
    return [e["path"] for e in web.requests(settle_s=3) if e["host"] == host]  # a slow handler logs late


@pytest.mark.parametrize("host, behaviour, why", [
    ("r503.fixture", "/_/status/503", "(http 503)"),
    ("r500.fixture", "/_/status/500", "(http 500)"),
    ("r429.fixture", "/_/status/429", "(http 429)"),
    ("rslow.fixture", "/_/slow?delay=1", "(no answer within 0.3 s)"),
    ("rreset.fixture", "/_/reset", "Connection reset by peer"),
])
def test_unreachable_robots_txt_disallows_the_whole_origin(web, settings_for, host, behaviour, why):
    web.robots_as(host, behaviour)
    urls = [web.url(host, f"/_/page/u{i}") for i in range(3)]
    web.clear_log()
    results = run_fetch(settings_for(robots_timeout_s=0.3), urls)
    assert {r.status for r in results} == {FetchStatus.ROBOTS} and {r.attempts for r in results} == {0}
    note = results[0].note
    assert note.startswith("robots.txt unreachable (") and why in note, note
    assert note.endswith("): not fetched, as RFC 9309 asks (fetch.robots_unreachable); asked again next run")
    assert _hits(web, host) == ["/robots.txt"]  # asked once; no page of the origin requested


def test_unreachable_robots_txt_with_allow_setting_fetches_the_pages(web, settings_for):
    web.robots_as("unreach-allow.fixture", "/_/status/503")
    urls = [web.url("unreach-allow.fixture", f"/_/page/a{i}") for i in range(2)]
    web.clear_log()
    results = run_fetch(settings_for(robots_unreachable="allow"), urls)
    assert {r.status for r in results} == {FetchStatus.OK}
    assert sorted(_hits(web, "unreach-allow.fixture")) == ["/_/page/a0", "/_/page/a1", "/robots.txt"]


def test_robots_txt_on_a_host_that_refuses_connections_lets_the_page_report_it(web, settings_for):
    # guard of a choice, not of a fix: no connection at all is no "unreachable" answer; the page meets the same
    # refusal and is reported UNAVAILABLE naming it, not ROBOTS
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"  # bound, never listening: connections are refused
        settings = settings_for(address_map={"refusing.fixture": closed}, max_retries=1)
        [r] = run_fetch(settings, ["http://refusing.fixture/page"])
    assert r.status == FetchStatus.UNAVAILABLE and "ConnectError" in r.note, r.note


def _site(sites_dir, host: str, robots: bytes) -> None:
    (sites_dir / host / "private").mkdir(parents=True, exist_ok=True)
    (sites_dir / host / "robots.txt").write_bytes(robots)
    (sites_dir / host / "private" / "secret.html").write_text("<html><body>must never be fetched</body></html>")


def test_robots_txt_over_500_kib_is_read_up_to_its_last_whole_line_within_the_cap(web, sites_dir, settings_for):
    # RFC 9309 §2.5: parse at least 500 KiB. The 512,000th byte falls inside "Disallow: /_/page/only-this-one":
    # read whole, that line disallows one page; cut there, it would read "Disallow: /_/page/" (every page)
    head = b"User-agent: *\nDisallow: /private/\n"
    cut_line = b"Disallow: /_/page/only-this-one\n"
    filler = b"# " + b"x" * 97 + b"\n"  # 100-byte comment lines
    pad = 512_000 - len(b"Disallow: /_/page/") - len(head)
    body = head + filler * (pad // 100) + b"#" * (pad % 100 - 1) + b"\n" + cut_line + b"Disallow: /late/\n" * 5000
    assert body.index(cut_line) + len(b"Disallow: /_/page/") == 512_000 and len(body) > 512_000
    _site(sites_dir, "bigrobots.fixture", body)
    urls = [web.url("bigrobots.fixture", p) for p in ("/private/secret.html", "/_/page/other", "/late/x")]
    web.clear_log()
    results = {r.url: r for r in run_fetch(settings_for(), urls)}
    assert results[urls[0]].status == FetchStatus.ROBOTS  # the rules in the first 500 KiB hold
    assert results[urls[1]].status == FetchStatus.OK  # the line cut by the cap is dropped, not shortened
    assert results[urls[2]].status == FetchStatus.DEAD  # rules past the cap are ignored: requested (a 404)
    assert sorted(_hits(web, "bigrobots.fixture")) == ["/_/page/other", "/late/x", "/robots.txt"]


def test_robots_txt_starting_with_a_utf8_bom_keeps_its_first_group(web, sites_dir, settings_for):
    _site(sites_dir, "bomrobots.fixture", "\ufeffUser-agent: *\nDisallow: /private/\n".encode())
    urls = [web.url("bomrobots.fixture", "/private/secret.html"), web.url("bomrobots.fixture", "/_/page/b")]
    web.clear_log()
    results = {r.url: r.status for r in run_fetch(settings_for(), urls)}
    assert results == {urls[0]: FetchStatus.ROBOTS, urls[1]: FetchStatus.OK}
    assert sorted(_hits(web, "bomrobots.fixture")) == ["/_/page/b", "/robots.txt"]


def test_the_first_page_after_robots_txt_already_waits_the_crawl_delay(web, sites_dir, settings_for):
    _site(sites_dir, "delay.fixture", b"User-agent: *\nCrawl-delay: 0.4\n")
    urls = [web.url("delay.fixture", f"/_/page/d{i}") for i in range(2)]
    web.clear_log()
    run_fetch(settings_for(default_host={"concurrency": 1, "interval_ms": 20}), urls)
    entries = sorted((e for e in web.requests() if e["host"] == "delay.fixture"), key=lambda e: e["start"])
    assert [e["path"] for e in entries] == ["/robots.txt", "/_/page/d0", "/_/page/d1"]
    gaps = [round(b["start"] - a["start"], 3) for a, b in zip(entries, entries[1:])]
    assert min(gaps) >= 0.4 - TOLERANCE_S, gaps  # robots.txt → first page too, not only between pages


def test_a_day_long_crawl_delay_leaves_the_hosts_pages_unread_at_once_and_says_why(web, sites_dir, settings_for):
    # a Crawl-delay past the longest interval kept (600 s) is not waited for at all: the host's pages are
    # unreadable with the reason, as an open circuit leaves them, in no time (they used to wait out the budget)
    throttle = HostThrottle(1, 0.02)
    throttle.raise_interval(86400)
    assert throttle.interval_s == 600 and throttle.crawl_delay == 86400
    _site(sites_dir, "daylong.fixture", b"User-agent: *\nCrawl-delay: 999999999\n")
    urls = [web.url("daylong.fixture", f"/_/page/h{i}") for i in range(3)] + [web.url("other.fixture", "/_/page/o")]
    web.clear_log()
    started = time.monotonic()
    results = {r.url: r for r in run_fetch(settings_for(run_budget_s=3600), urls)}
    assert time.monotonic() - started < 10
    assert results[urls[3]].status == FetchStatus.OK  # the run goes on with the other hosts
    assert {results[u].status for u in urls[:3]} == {FetchStatus.UNAVAILABLE}
    assert {results[u].note for u in urls[:3]} == {
        "robots.txt Crawl-delay 1e+09 s is longer than the longest interval kept between requests (600 s): this "
        "host's pages are not fetched this run"}
    assert _hits(web, "daylong.fixture") == ["/robots.txt"]


def test_a_crawl_delay_the_budget_cannot_pay_for_every_page_leaves_them_unread(web, sites_dir, settings_for):
    # 3 pages × 5 s = 15 s, more than a 4 s budget: refused at once, not waited for until the budget is spent
    _site(sites_dir, "costly.fixture", b"User-agent: *\nCrawl-delay: 5\n")
    urls = [web.url("costly.fixture", f"/_/page/c{i}") for i in range(3)]
    web.clear_log()
    started = time.monotonic()
    results = run_fetch(settings_for(run_budget_s=4), urls)
    assert time.monotonic() - started < 3
    assert {r.status for r in results} == {FetchStatus.UNAVAILABLE}
    assert all(r.note.startswith("robots.txt Crawl-delay 5 s: 3 page(s) of this host would take 15 s, more than the "
                                 "run can afford (") and r.note.endswith("not fetched this run") for r in results), results
    assert _hits(web, "costly.fixture") == ["/robots.txt"]


def test_a_crawl_delay_the_budget_can_pay_for_is_waited(web, sites_dir, settings_for):
    _site(sites_dir, "affordable.fixture", b"User-agent: *\nCrawl-delay: 0.3\n")
    urls = [web.url("affordable.fixture", f"/_/page/a{i}") for i in range(2)]
    results = run_fetch(settings_for(run_budget_s=30), urls)
    assert {r.status for r in results} == {FetchStatus.OK}


def test_a_robots_txt_redirect_to_an_excluded_host_is_not_followed(web, settings_for):
    web.robots_as("toexcl.fixture", "/_/redirect?to=http://sub.excluded.fixture/robots.txt")
    urls = [web.url("toexcl.fixture", "/_/page/x")]
    web.clear_log()
    [r] = run_fetch(settings_for(), urls)  # excluded_hosts: [excluded.fixture]
    assert [e["host"] for e in web.requests() if "excluded" in e["host"]] == []  # no request reached it
    assert r.status == FetchStatus.OK  # taken as no robots.txt: the origin's own page is fetched
    assert _hits(web, "toexcl.fixture") == ["/robots.txt", "/_/page/x"]


def test_a_connect_timeout_on_robots_txt_lets_the_page_report_it(settings_for):
    """A host whose SYNs are dropped (a firewall, a host that is down) gives a connect timeout: like a refused
    connection it is no answer of the site, so the page meets it too and is UNAVAILABLE, not ROBOTS."""
    import asyncio

    import httpcore

    from claims_pipeline.web.fetcher import Fetcher

    class DroppedSyns(httpcore.AsyncNetworkBackend):  # the dialling backend below the SSRF guard (test seam)
        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            raise httpcore.ConnectTimeout(f"connect to {host}:{port} timed out")

        async def sleep(self, seconds):
            await asyncio.sleep(seconds)

    settings = settings_for(address_map={"down.fixture": "127.0.0.1:9"}, max_retries=1)

    async def run():
        async with Fetcher(settings.fetch, settings.pdf, inner_backend=DroppedSyns()) as f:
            return [r async for r in f.fetch_many(["http://down.fixture/a", "http://down.fixture/b"], {})]

    results = asyncio.run(run())
    assert [r.status for r in results] == [FetchStatus.UNAVAILABLE] * 2, [r.note for r in results]
    assert all("ConnectTimeout" in r.note and "robots" not in r.note for r in results)


def test_a_connect_that_waits_out_its_timeout_is_a_connect_failure_even_with_equal_deadlines(settings_for):
    """The shipped defaults give robots.txt's deadline and the connect timeout the same 10 s: the deadline fired
    first, and an unreachable host read as a robots.txt that did not answer (every URL ROBOTS)."""
    import asyncio

    import httpcore

    from claims_pipeline.web.fetcher import Fetcher

    class SlowlyDroppedSyns(httpcore.AsyncNetworkBackend):
        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            await asyncio.sleep(timeout or 0)  # what a dropped SYN costs: the whole connect timeout
            raise httpcore.ConnectTimeout(f"connect to {host}:{port} timed out")

        async def sleep(self, seconds):
            await asyncio.sleep(seconds)

    settings = settings_for(address_map={"down.fixture": "127.0.0.1:9"}, max_retries=1)
    settings = settings.model_copy(update={"fetch": settings.fetch.model_copy(
        update={"connect_timeout_s": 0.5, "robots_timeout_s": 0.5})})

    async def run():
        async with Fetcher(settings.fetch, settings.pdf, inner_backend=SlowlyDroppedSyns()) as f:
            return [r async for r in f.fetch_many(["http://down.fixture/a"], {})]

    (r,) = asyncio.run(run())
    assert r.status == FetchStatus.UNAVAILABLE and "ConnectTimeout" in r.note, (r.status, r.note)
