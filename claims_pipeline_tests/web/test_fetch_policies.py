"""Retry backoff (sequence and jitter) and the separate HTML / PDF body caps, proven against the fixture web:
the timings from the server's own request log, the sizes from bodies it really served."""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import pairwise

from claims_pipeline.web.records import FetchStatus
from claims_pipeline_tests.web.conftest import run_fetch

TOLERANCE_S = 0.02  # server-side timestamps lag the client's start by a little thread-scheduling noise


def _attempt_starts(log: list[dict], path_part: str) -> dict[str, list[float]]:
    """host -> start times of its requests whose path contains path_part, in order."""
    starts: dict[str, list[float]] = defaultdict(list)
    for e in log:
        if path_part in e["path"]:
            starts[e["host"]].append(e["start"])
    return {h: sorted(s) for h, s in starts.items()}


def test_backoff_follows_the_sequence_and_repeats_its_last_value(web, settings_for):
    # jitter 0: before attempt 2 wait 0.2 s, before attempts 3 and 4 the last value, 0.6 s
    settings = settings_for(max_retries=4, retry_backoff_s=[0.2, 0.6], retry_jitter_pct=0)
    url = web.url("backoff.fixture", "/_/status/503")
    web.clear_log()
    [r] = run_fetch(settings, [url])
    assert r.status == FetchStatus.UNAVAILABLE and r.http_status == 503
    assert r.attempts == 4 and r.note == "http 503 after 4 attempts"
    starts = _attempt_starts(web.requests(), "/_/status/503")["backoff.fixture"]
    assert len(starts) == 4
    # an attempt's logged start is no later than the client saw its response; the next one starts a backoff later
    gaps = [b - a for a, b in pairwise(starts)]
    for gap, backoff in zip(gaps, [0.2, 0.6, 0.6]):
        assert gap >= backoff - TOLERANCE_S, (gaps, backoff)


def test_jittered_backoff_stays_within_its_lower_bound(web, settings_for):
    # ±50 % jitter: each wait is at least half its base value; a route that fails twice, then serves the page
    jitter_pct = 50
    backoff = [0.2, 0.4]
    settings = settings_for(max_retries=3, retry_backoff_s=backoff, retry_jitter_pct=jitter_pct)
    hosts = [f"jitter{i}.fixture" for i in range(4)]  # four URLs retried side by side: more samples, same time
    urls = [web.url(h, "/_/flaky?fails=2&code=503") for h in hosts]
    web.clear_log()
    results = run_fetch(settings, urls)
    assert all(r.status == FetchStatus.OK and r.attempts == 3 for r in results), [(r.status, r.note) for r in results]
    starts = _attempt_starts(web.requests(), "/_/flaky")
    assert sorted(starts) == hosts
    for host, times in starts.items():
        assert len(times) == 3, host  # two 503s, then the page
        gaps = [b - a for a, b in pairwise(times)]
        for gap, base in zip(gaps, backoff):
            assert gap >= base * (1 - jitter_pct / 100) - TOLERANCE_S, (host, gaps, base)


def test_html_and_pdf_have_separate_body_caps(web, settings_for):
    html_cap, pdf_cap = 200_000, 400_000
    settings = settings_for(max_html_bytes=html_cap, max_pdf_bytes=pdf_cap)
    cases = {  # url -> (status, note fragment, "" = no note); padded PDFs are exactly kb*1000 bytes
        web.url("pdfmid.fixture", "/_/pdf/padded?kb=300"): (FetchStatus.OK, ""),
        web.url("pdfmidstream.fixture", "/_/pdf/padded?kb=300&chunked=1"): (FetchStatus.OK, ""),
        web.url("pdfbig.fixture", "/_/pdf/padded?kb=500"): (
            FetchStatus.TOO_LARGE, f"Content-Length 500000 over the {pdf_cap}-byte cap; not downloaded"),
        web.url("pdfbigstream.fixture", "/_/pdf/padded?kb=500&chunked=1"): (
            FetchStatus.TOO_LARGE, f"body over {pdf_cap} bytes on the wire"),
        web.url("htmlmid.fixture", "/_/page/mid?size=300000"): (FetchStatus.TOO_LARGE, f"over the {html_cap}-byte cap"),
        web.url("htmlsmall.fixture", "/_/page/small?size=150000"): (FetchStatus.OK, ""),
    }
    results = {r.url: r for r in run_fetch(settings, list(cases))}
    for url, (status, note) in cases.items():
        r = results[url]
        assert r.status == status, (url, r.status, r.note)
        assert (note in r.note) if note else r.note == "", (url, r.note)
        if status == FetchStatus.TOO_LARGE:
            assert r.raw is None and r.text is None, url
            assert r.http_status == 200, url  # streamed past the cap or refused by Content-Length: status kept
    for host in ("pdfmid.fixture", "pdfmidstream.fixture"):  # a PDF bigger than the HTML cap, read whole
        r = results[web.url(host, "/_/pdf/padded?kb=300" + ("&chunked=1" if "stream" in host else ""))]
        assert r.raw is not None and len(r.raw) == 300_000 > html_cap
        assert r.content_kind.startswith("pdf:") and "Registration fee: 2.5 % above EUR 300,000" in r.text
    small = results[web.url("htmlsmall.fixture", "/_/page/small?size=150000")]
    assert small.raw is not None and len(small.raw) > 150_000 and small.content_kind == "html"
    # the HTML page refused really lies between the caps (a PDF of its size would have been read)
    declared = re.search(r"Content-Length (\d+) over", results[web.url("htmlmid.fixture", "/_/page/mid?size=300000")].note)
    assert declared and html_cap < int(declared.group(1)) < pdf_cap
