"""Politeness proven from the server's own request log, not from the fetcher's word."""

from __future__ import annotations

import time
from collections import defaultdict

from claims_pipeline.web.records import FetchStatus
from claims_pipeline_tests.web.conftest import run_fetch

# Server-side timestamps lag the client's start by thread-scheduling noise: the fixture web shares its process (and
# GIL) with the fetcher, and `make test` runs two test workers on two cores (one such lag of 21 ms was seen).
TOLERANCE_S = 0.04


def _by_host(log: list[dict]) -> dict[str, list[dict]]:
    hosts: dict[str, list[dict]] = defaultdict(list)
    for e in log:
        hosts[e["host"]].append(e)
    for entries in hosts.values():
        entries.sort(key=lambda e: e["start"])
    return hosts


def _max_overlap(entries: list[dict]) -> int:
    events = sorted([(e["start"], 1) for e in entries] + [(e["end"], -1) for e in entries], key=lambda x: (x[0], x[1]))
    now = peak = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    return peak


def test_per_host_concurrency_and_interval_never_violated(web, settings_for):
    settings = settings_for(
        default_host={"concurrency": 2, "interval_ms": 100},
        gov_host={"concurrency": 1, "interval_ms": 150},
        per_host_overrides={"slowpoke.fixture": {"concurrency": 1, "interval_ms": 200}},
    )
    hosts = {"a.fixture": 8, "b.fixture": 8, "tax.gov.xa": 5, "docs.slowpoke.fixture": 4}
    # /_/slow?delay=0.15 keeps requests in flight long enough for concurrency limits to matter
    urls = [web.url(h, f"/_/slow?delay=0.15&n={i}") for h, n in hosts.items() for i in range(n)]
    web.clear_log()
    results = run_fetch(settings, urls)
    assert all(r.status == FetchStatus.OK for r in results), [r.note for r in results if r.status != "OK"]
    log = _by_host(web.requests())
    expected = {"a.fixture": (2, 0.1), "b.fixture": (2, 0.1), "tax.gov.xa": (1, 0.15), "docs.slowpoke.fixture": (1, 0.2)}
    for host, (concurrency, interval) in expected.items():
        entries = log[host]
        assert len(entries) == hosts[host] + 1, (host, [e["path"] for e in entries])  # + robots.txt, once
        assert sum(e["path"] == "/robots.txt" for e in entries) == 1
        assert _max_overlap(entries) <= concurrency, host
        gaps = [b["start"] - a["start"] for a, b in zip(entries, entries[1:])]
        assert min(gaps) >= interval - TOLERANCE_S, (host, min(gaps))
    # the limit is really reached for two-connection hosts (the test would be vacuous otherwise)
    assert _max_overlap(log["a.fixture"]) == 2


def test_robots_disallow_never_requested_and_crawl_delay_raises_interval(web, settings_for):
    settings = settings_for(default_host={"concurrency": 2, "interval_ms": 20})
    urls = [web.url("polite.fixture", f"/_/page/p{i}") for i in range(4)]
    urls += [web.url("polite.fixture", f"/private/secret.html?i={i}") for i in range(3)]
    web.clear_log()
    results = {r.url: r for r in run_fetch(settings, urls)}
    assert sum(r.status == FetchStatus.ROBOTS for r in results.values()) == 3
    assert {r.attempts for r in results.values() if r.status == FetchStatus.ROBOTS} == {0}  # never requested
    assert {r.attempts for r in results.values() if r.status == FetchStatus.OK} == {1}
    entries = _by_host(web.requests())["polite.fixture"]
    assert not any(e["path"].startswith("/private/") for e in entries)
    assert [e["path"] for e in entries].count("/robots.txt") == 1
    pages = [e for e in entries if e["path"] != "/robots.txt"]
    gaps = [b["start"] - a["start"] for a, b in zip(pages, pages[1:])]
    assert min(gaps) >= 0.3 - TOLERANCE_S  # Crawl-delay 0.3 beats the configured 20 ms


def test_crawl_delay_never_lowers_the_interval(web, settings_for):
    settings = settings_for(default_host={"concurrency": 1, "interval_ms": 400})
    urls = [web.url("polite.fixture", f"/_/page/q{i}") for i in range(3)]
    web.clear_log()
    run_fetch(settings, urls)
    pages = [e for e in _by_host(web.requests())["polite.fixture"] if e["path"] != "/robots.txt"]
    gaps = [b["start"] - a["start"] for a, b in zip(pages, pages[1:])]
    assert min(gaps) >= 0.4 - TOLERANCE_S  # Crawl-delay 0.3 must not shorten 400 ms


def test_global_rate_cap(web, settings_for):
    rate = 20.0
    settings = settings_for(req_per_sec=rate, default_host={"concurrency": 2, "interval_ms": 0})
    urls = [web.url(f"r{i}.fixture", "/_/page/x") for i in range(30)]
    web.clear_log()
    run_fetch(settings, urls)
    starts = sorted(e["start"] for e in web.requests())
    assert len(starts) == 60  # 30 pages + 30 robots.txt
    # token bucket: in any window of w seconds, at most capacity (= rate) + rate * w requests start
    for i, s in enumerate(starts):
        in_window = sum(1 for t in starts[i:] if t - s <= 1.0)
        assert in_window <= rate + rate * 1.0 + 1
    assert starts[-1] - starts[0] >= (60 - rate) / rate - 0.1


def test_retry_after_http_date_defers_the_host(web, settings_for):
    settings = settings_for(retry_after_cap_s=0.5)
    # Retry-After of 30 s is capped at 0.5 s: honoured, but never beyond the cap
    url = web.url("capped.fixture", "/_/flaky?fails=1&code=503&retry_after=30")
    web.clear_log()
    started = time.monotonic()
    [r] = run_fetch(settings, [url])
    assert r.status == FetchStatus.OK and r.attempts == 2
    hits = [e for e in web.requests() if "flaky" in e["path"]]
    assert hits[1]["start"] - hits[0]["end"] >= 0.5 - TOLERANCE_S
    assert time.monotonic() - started < 5


def test_a_retry_after_longer_than_the_budget_left_leaves_the_hosts_pages_unread(web, settings_for):
    settings = settings_for(retry_after_cap_s=60, run_budget_s=5, default_host={"concurrency": 1, "interval_ms": 20})
    urls = [web.url("ra-long.fixture", "/_/flaky?fails=9&code=503&retry_after=3600")] + \
        [web.url("ra-long.fixture", f"/_/page/r{i}") for i in range(2)] + [web.url("ra-ok.fixture", "/_/page/ok")]
    web.clear_log()
    started = time.monotonic()
    results = {r.url: r for r in run_fetch(settings, urls)}
    assert time.monotonic() - started < 3  # neither the hour nor the budget was waited
    assert results[urls[3]].status == FetchStatus.OK
    for url in urls[:3]:
        assert results[url].status == FetchStatus.UNAVAILABLE
        assert "Retry-After 3600 s: waiting, more than the run can afford (" in results[url].note, results[url].note
    assert [e["path"] for e in web.requests() if e["host"] == "ra-long.fixture"] == ["/robots.txt", urls[0].split("fixture", 1)[1]]


def test_circuit_breaker_stops_a_dead_host_quickly(web, settings_for):
    settings = settings_for(breaker_failures=2, max_retries=2, request_timeout_s=0.3,
                            default_host={"concurrency": 1, "interval_ms": 10})
    dead = [web.url("dead.fixture", f"/_/slow?delay=2&i={i}") for i in range(10)]
    healthy = [web.url("fine.fixture", f"/_/page/{i}") for i in range(3)]
    started = time.monotonic()
    results = {r.url: r for r in run_fetch(settings, dead + healthy)}
    wall = time.monotonic() - started
    assert all(results[u].status == FetchStatus.OK for u in healthy)
    assert all(results[u].status == FetchStatus.UNAVAILABLE for u in dead)
    opened = [u for u in dead if results[u].note.startswith("circuit open")]
    assert len(opened) >= 7  # only the first 3 URLs spent their timeouts (fetch.breaker_urls: 3 distinct URLs)
    assert results[dead[-1]].note.startswith("circuit open since ") and " after 3 failures (last: " in results[dead[-1]].note
    assert wall < 10  # without the breaker: 10 URLs x 2 attempts x 0.3 s, one at a time


def test_run_budget_bounds_the_whole_run(web, settings_for):
    settings = settings_for(run_budget_s=1.0, request_timeout_s=5, breaker_failures=50,
                            default_host={"concurrency": 1, "interval_ms": 10})
    urls = [web.url("budget.fixture", f"/_/slow?delay=0.6&i={i}") for i in range(6)]
    started = time.monotonic()
    results = run_fetch(settings, urls)
    assert time.monotonic() - started < 3
    assert sum(r.status == FetchStatus.OK for r in results) >= 1
    spent = [r for r in results if "run budget" in r.note]
    assert spent and all(r.status == FetchStatus.UNAVAILABLE for r in spent)


def test_user_agent_has_contact_url(web, settings_for):
    web.clear_log()
    run_fetch(settings_for(), [web.url("ua.fixture", "/_/page/ua")])
    agents = {e["user_agent"] for e in web.requests()}
    assert len(agents) == 1 and "(+https://" in agents.pop()


def test_global_concurrency_cap_holds_across_hosts(web, settings_for):
    cap = 3
    settings = settings_for(concurrency=cap, default_host={"concurrency": 2, "interval_ms": 0}, req_per_sec=500)
    hosts = [f"g{i}.fixture" for i in range(8)]  # 8 hosts x 2 slots each: 16 could run at once without the cap
    urls = [web.url(h, f"/_/slow?delay=0.15&i={i}") for h in hosts for i in range(2)]
    web.clear_log()
    results = run_fetch(settings, urls)
    assert all(r.status == FetchStatus.OK for r in results), [r.note for r in results if r.status != "OK"]
    log = [e for e in web.requests() if e["host"] in hosts]  # an earlier test's slow handler may log late
    assert len(log) == len(urls) + len(hosts)  # + one robots.txt per host, under the same cap
    # the server logs a request's end just after writing it, a moment after the client may already have started
    # the next one: trim each interval by the tolerance (a broken cap would overlap for most of 0.15 s)
    trimmed = [{"start": e["start"], "end": max(e["start"], e["end"] - TOLERANCE_S)} for e in log]
    assert _max_overlap(trimmed) == cap  # never more, and really reached (the test would be vacuous otherwise)


def test_circuit_breaker_opens_on_connection_resets(web, settings_for):
    settings = settings_for(breaker_failures=3, max_retries=2, default_host={"concurrency": 1, "interval_ms": 10})
    resets = [web.url("rst.fixture", f"/_/reset?i={i}") for i in range(6)]
    healthy = [web.url("calm.fixture", f"/_/page/{i}") for i in range(2)]
    web.clear_log()
    results = {r.url: r for r in run_fetch(settings, resets + healthy)}
    assert all(results[u].status == FetchStatus.OK for u in healthy)
    assert all(results[u].status == FetchStatus.UNAVAILABLE for u in resets)
    # one host worker, URLs in order: the 1st and 2nd spend both attempts (4 failures on 2 URLs), a failure on
    # the 3rd URL (fetch.breaker_urls: 3) opens the breaker at its first attempt, and the other 3 are settled
    # without a request
    first, second, third, *rest = (results[u] for u in resets)
    for r in (first, second):
        assert "Connection reset by peer" in r.note and r.note.endswith("after 2 attempts") and r.attempts == 2
        assert "circuit open" not in r.note
    assert "; circuit open since " in third.note and " after 5 failures (last: " in third.note and third.attempts == 1
    assert all(r.note.startswith("circuit open since ") for r in rest), [r.note for r in rest]
    assert [r.attempts for r in rest] == [0] * len(rest)  # none of them was requested
    hits = [e for e in _by_host(web.requests())["rst.fixture"] if e["path"] != "/robots.txt"]
    assert [e["path"] for e in hits] == ["/_/reset?i=0", "/_/reset?i=0", "/_/reset?i=1", "/_/reset?i=1",
                                         "/_/reset?i=2"]
    assert all(e["status"] == "reset" for e in hits)


def test_retry_after_holds_back_the_hosts_other_urls(web, settings_for):
    # two workers on one host: when the first URL's 429 (Retry-After 1) arrives, the second worker is already
    # waiting out the 300 ms interval for the next page; it must not start before the Retry-After has passed
    settings = settings_for(default_host={"concurrency": 2, "interval_ms": 300}, retry_after_cap_s=2)
    flaky = web.url("ra.fixture", "/_/flaky?fails=1&code=429&retry_after=1")
    pages = [web.url("ra.fixture", f"/_/page/ra{i}") for i in range(4)]
    web.clear_log()
    results = {r.url: r for r in run_fetch(settings, [flaky, *pages])}
    assert all(r.status == FetchStatus.OK for r in results.values()), [r.note for r in results.values()]
    assert results[flaky].attempts == 2
    entries = [e for e in _by_host(web.requests())["ra.fixture"] if e["path"] != "/robots.txt"]
    [told] = [e for e in entries if e["status"] == 429]
    later = [e for e in entries if e["start"] > told["start"]]
    assert len(later) == 5  # the flaky URL's retry and the four pages
    assert min(e["start"] for e in later) >= told["start"] + 1.0 - TOLERANCE_S, \
        [round(e["start"] - told["start"], 3) for e in later]


def test_host_interval_holds_when_the_global_rate_is_the_bottleneck(web, settings_for):
    # 30 one-page hosts and a government host (one connection, 500 ms floor) with 3 pages share 20 starts a
    # second: requests queue for tokens for up to a second or more. Each host's starts must still be its interval
    # apart, counted from the real start: a start booked on entering the host slot, before the token wait, let
    # the gov host's second page start right after its first, which had queued behind everyone else's
    settings = settings_for(req_per_sec=20, default_host={"concurrency": 2, "interval_ms": 300},
                            gov_host={"concurrency": 1, "interval_ms": 500})
    hosts = [f"bn{i}.fixture" for i in range(30)]
    urls = [web.url(h, "/_/page/bn") for h in hosts] + [web.url("tax.gov.xa", f"/_/page/bn{j}") for j in range(3)]
    web.clear_log()
    results = run_fetch(settings, urls)
    assert all(r.status == FetchStatus.OK for r in results), [r.note for r in results if r.status != "OK"]
    log = _by_host(web.requests())
    assert all(len(log[h]) == 2 for h in hosts) and len(log["tax.gov.xa"]) == 4  # + robots.txt each
    interval = {h: 0.3 for h in hosts} | {"tax.gov.xa": 0.5}
    gaps = {h: min(b["start"] - a["start"] for a, b in zip(log[h], log[h][1:])) for h in interval}
    short = {h: round(g, 3) for h, g in gaps.items() if g < interval[h] - TOLERANCE_S}
    assert short == {}


def test_one_slow_page_does_not_shut_a_healthy_host_but_resets_still_open_the_breaker(web, settings_for):
    # one connection per host and as many attempts as breaker failures: the slow page's own three timeouts
    # used to open the breaker, and the host's five fast pages were settled "circuit open" without a request
    settings = settings_for(max_retries=3, breaker_failures=3, request_timeout_s=0.3,
                            default_host={"concurrency": 1, "interval_ms": 10})
    slow = web.url("oneslow.fixture", "/_/slow?delay=1.5")
    fast = [web.url("oneslow.fixture", f"/_/page/f{i}") for i in range(5)]
    resets = [web.url("allrst.fixture", f"/_/reset?i={i}") for i in range(5)]
    web.clear_log()
    results = {r.url: r for r in run_fetch(settings, [slow, *fast, *resets])}
    assert results[slow].status == FetchStatus.UNAVAILABLE and results[slow].attempts == 3
    assert "circuit open" not in results[slow].note
    assert all(results[u].status == FetchStatus.OK for u in fast), [results[u].note for u in fast]
    # a dead host still opens it, once its failed connections span 3 URLs (fetch.breaker_urls): the first two
    # URLs' 3 attempts each, then the third URL's first
    assert all(results[u].status == FetchStatus.UNAVAILABLE for u in resets)
    assert " after 7 failures (last: " in results[resets[2]].note
    assert all(results[u].attempts == 0 and results[u].note.startswith("circuit open") for u in resets[3:])
    hits = [e["path"] for e in web.requests() if e["host"] == "allrst.fixture" and e["path"] != "/robots.txt"]
    assert hits == ["/_/reset?i=0"] * 3 + ["/_/reset?i=1"] * 3 + ["/_/reset?i=2"]
