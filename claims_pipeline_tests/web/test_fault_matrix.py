"""Every fault the fixture web can play gets the right FetchStatus and a note saying what happened, in ONE run
that completes within a bounded wall time (a hang guard sized from the configured timeouts, not a benchmark)."""

from __future__ import annotations

import time

import pytest

from claims_pipeline_tests.web.conftest import run_fetch
from claims_pipeline.web.records import FetchStatus

# (host, path, expected status, note fragment, expected http status or None)
MATRIX = [
    ("ok.fixture", "/_/page/duty", FetchStatus.OK, "", 200),
    ("chain.fixture", "/_/chain/3", FetchStatus.OK, "", 200),
    ("toomany.fixture", "/_/chain/9", FetchStatus.UNAVAILABLE, "more than 5 redirects", None),
    ("loop.fixture", "/_/loop-a", FetchStatus.UNAVAILABLE, "redirect loop: http://loop.fixture/_/loop-a", 302),
    ("gone404.fixture", "/_/status/404", FetchStatus.DEAD, "http 404", 404),
    ("gone410.fixture", "/_/status/410", FetchStatus.DEAD, "http 410", 410),
    ("err503.fixture", "/_/status/503", FetchStatus.UNAVAILABLE, "http 503 after 2 attempts", 503),
    ("err500.fixture", "/_/status/500", FetchStatus.UNAVAILABLE, "http 500 after 2 attempts", 500),
    ("flaky.fixture", "/_/flaky?fails=1&code=429&retry_after=1", FetchStatus.OK, "", 200),
    ("cf.fixture", "/_/cf-challenge", FetchStatus.BLOCKED, "cf-mitigated=challenge", 403),
    ("cf429.fixture", "/_/cf-429", FetchStatus.BLOCKED, "http 429 (bot wall: cf-mitigated=challenge)", 429),
    ("cfray.fixture", "/_/cf-ok", FetchStatus.OK, "", 200),
    ("title.fixture", "/_/challenge-200", FetchStatus.BLOCKED, "challenge title 'Attention Required! | Cloudflare'", 200),
    ("forbidden.fixture", "/_/status/403", FetchStatus.BLOCKED, "http 403: access refused", 403),
    ("shell.fixture", "/_/js-shell", FetchStatus.UNREADABLE, "JS-only shell", 200),
    ("spa.fixture", "/_/page/any", FetchStatus.UNREADABLE, "in js_spa_hosts", 200),
    ("slow.fixture", "/_/slow?delay=3", FetchStatus.UNAVAILABLE, "after 2 attempts", None),  # ReadTimeout or the deadline
    ("trickle.fixture", "/_/trickle?chunks=30&every=0.1", FetchStatus.UNAVAILABLE, "response deadline 1 s exceeded", None),
    ("reset.fixture", "/_/reset", FetchStatus.UNAVAILABLE, "Connection reset by peer", None),
    ("bomb.fixture", "/_/gzip-bomb?mb=30", FetchStatus.TOO_LARGE, "decoded, content-encoding gzip", None),
    ("big.fixture", "/_/oversized?mb=1", FetchStatus.TOO_LARGE, "Content-Length 1000013 over the 200000-byte cap", 200),
    ("bigstream.fixture", "/_/oversized?mb=1&chunked=1", FetchStatus.TOO_LARGE, "body over 200000 bytes", None),
    ("misstated.fixture", "/_/charset/misstated", FetchStatus.OK, "", 200),
    ("undeclared.fixture", "/_/charset/undeclared", FetchStatus.OK, "", 200),
    ("bin.fixture", "/_/binary", FetchStatus.BINARY, "image/png: not downloaded", 200),
    ("pdf.fixture", "/_/pdf/text", FetchStatus.OK, "", 200),
    ("pdfbad.fixture", "/_/pdf/corrupt", FetchStatus.PDF_ERROR, "", 200),
    ("pdfnot.fixture", "/_/pdf/not-a-pdf", FetchStatus.PDF_ERROR, "no %PDF- header", 200),
    ("private.fixture", "/_/redirect-refused", FetchStatus.REFUSED, "refused address 127.0.0.2 (loopback)", None),
    ("sub.excluded.fixture", "/_/page/x", FetchStatus.EXCLUDED, "in excluded_hosts", None),
    ("polite.fixture", "/private/secret.html", FetchStatus.ROBOTS, "robots.txt Disallow", None),
]


@pytest.fixture(scope="module")
def matrix_run(web, sites_dir):
    from claims_pipeline_tests.web.conftest import fast_fetch

    settings = fast_fetch(web)
    web.clear_log()
    urls = [web.url(h, p) for h, p, *_ in MATRIX]
    started = time.monotonic()
    results = run_fetch(settings, urls)
    return {r.url: r for r in results}, time.monotonic() - started, web.requests()


@pytest.mark.parametrize("host,path,status,note,http", MATRIX, ids=[m[0] for m in MATRIX])
def test_fault_gets_status_and_note(matrix_run, web, host, path, status, note, http):
    results, _, _ = matrix_run
    r = results[web.url(host, path)]
    assert r.status == status, (r.status, r.note)
    assert note in r.note
    if http is not None:
        assert r.http_status == http
    if status == FetchStatus.OK:
        assert r.text and r.raw and r.etag is None or r.text  # OK always carries text


def test_run_completes_in_bounded_time(matrix_run):
    results, wall, _ = matrix_run
    assert len(results) == len(MATRIX)
    # slowest path: 2 attempts x 1 s deadline + backoff; 20 s is a hang guard, not a benchmark
    assert wall < 20, wall


def test_texts_survive_charset_traps(matrix_run, web):
    results, _, _ = matrix_run
    assert "minimum 1 200 €" in results[web.url("misstated.fixture", "/_/charset/misstated")].text
    assert "Größenordnung" in results[web.url("undeclared.fixture", "/_/charset/undeclared")].text
    assert "7.5 % above EUR 500,000" in results[web.url("pdf.fixture", "/_/pdf/text")].text
    cf = results[web.url("cfray.fixture", "/_/cf-ok")]
    assert "transfer duty" in cf.text  # a Cloudflare-served page is a normal page


def test_js_shell_keeps_its_text_and_binary_is_not_downloaded(matrix_run, web):
    results, _, log = matrix_run
    assert results[web.url("shell.fixture", "/_/js-shell")].text is not None
    assert results[web.url("bin.fixture", "/_/binary")].raw is None
    bomb = [e for e in log if e["host"] == "bomb.fixture" and e["path"].startswith("/_/gzip")]
    assert len(bomb) == 1  # a too-large body is final, never retried


def test_refused_and_excluded_never_reach_the_server(matrix_run):
    _, _, log = matrix_run
    assert not any(e["host"] in ("127.0.0.2", "sub.excluded.fixture") for e in log)
    assert not any(e["path"].startswith("/private/") for e in log)


def test_retry_after_was_waited(matrix_run):
    _, _, log = matrix_run
    hits = sorted((e for e in log if e["host"] == "flaky.fixture" and "flaky" in e["path"]), key=lambda e: e["start"])
    assert [h["status"] for h in hits] == [429, 200]
    assert hits[1]["start"] - hits[0]["end"] >= 1.0 - 0.02  # Retry-After: 1


def test_slow_host_was_retried_then_given_up(matrix_run, web):
    def slow_hits() -> list[dict]:
        return [e for e in web.requests() if e["host"] == "slow.fixture" and "slow" in e["path"]]

    deadline = time.monotonic() + 8  # the server logs a request when its (3 s) handler finishes
    while len(slow_hits()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(slow_hits()) == 2  # max_retries attempts, then given up
