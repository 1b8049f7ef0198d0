"""Every fault the fixture web can play gets the right FetchStatus and a note saying what happened, in ONE run
that completes within a bounded wall time (a hang guard sized from the configured timeouts, not a benchmark)."""

from __future__ import annotations

import time

import pytest

from claims_pipeline.web.records import FetchStatus
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.web.conftest import run_fetch

# pdf.timeout_s: the matrix's is long enough for a corrupt PDF's pypdf fallback (a fresh Python process) on a busy
# machine; the bomb PDF has a run of its own with a short one, so its timeout is the only one that can fire
MATRIX_PDF_TIMEOUT_S = 30
BOMB_PDF_TIMEOUT_S = 2

# (host, path, expected status, note fragment, expected http status or None); "" = no note is expected to matter
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
    # a recognised wall (its challenge title or cf-mitigated) is BLOCKED at once on any status, never retried: a
    # retried 503 "Just a moment..." was a second request to a site that had just refused the first
    ("cf429.fixture", "/_/cf-429", FetchStatus.BLOCKED, "http 429 bot wall: cf-mitigated=challenge", 429),
    ("cf503.fixture", "/_/cf-503", FetchStatus.BLOCKED, "http 503 bot wall: cf-mitigated=challenge", 503),
    ("cf999.fixture", "/_/cf-999", FetchStatus.BLOCKED, "http 999 bot wall: cf-mitigated=challenge", 999),
    ("wall503.fixture", "/_/cf-wall?code=503&marker=title", FetchStatus.BLOCKED,
     "http 503 bot wall: challenge title 'Just a moment...'", 503),
    ("wall403.fixture", "/_/cf-wall?code=403&marker=title", FetchStatus.BLOCKED,
     "http 403 bot wall: challenge title 'Just a moment...'", 403),
    ("wall200.fixture", "/_/cf-wall?code=200&marker=header", FetchStatus.BLOCKED, "http 200 bot wall: cf-mitigated=challenge", 200),
    ("wall500.fixture", "/_/cf-wall?code=500&marker=header", FetchStatus.BLOCKED, "http 500 bot wall: cf-mitigated=challenge", 500),
    # a bare 999 (what LinkedIn answers crawlers) is a refusal, not an outage: BLOCKED at once, never retried
    ("li.fixture", "/_/status/999", FetchStatus.BLOCKED, "http 999: access refused (no challenge marker)", 999),
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
    ("headercs.fixture", "/_/charset/header-only", FetchStatus.OK, "", 200),
    ("bin.fixture", "/_/binary", FetchStatus.BINARY, "image/png: not downloaded", 200),
    ("pdf.fixture", "/_/pdf/text", FetchStatus.OK, "", 200),
    ("pdfbad.fixture", "/_/pdf/corrupt", FetchStatus.PDF_ERROR, "corrupt PDF: pdftotext exit 1: Syntax Error", 200),
    ("pdfscan.fixture", "/_/pdf/scanned", FetchStatus.PDF_NO_TEXT, "PDF has no extractable text layer (scanned image?)", 200),
    ("pdfenc.fixture", "/_/pdf/encrypted", FetchStatus.PDF_ERROR, "encrypted PDF (needs a password)", 200),
    ("pdfnot.fixture", "/_/pdf/not-a-pdf", FetchStatus.PDF_ERROR, "no %PDF- header", 200),
    ("private.fixture", "/_/redirect-refused", FetchStatus.REFUSED, "refused address 127.0.0.2 (loopback)", None),
    ("sub.excluded.fixture", "/_/page/x", FetchStatus.EXCLUDED, "in excluded_hosts", None),
    ("polite.fixture", "/private/secret.html", FetchStatus.ROBOTS, "robots.txt Disallow", None),
]


@pytest.fixture(scope="module")
def matrix_run(web, sites_dir):
    from claims_pipeline_tests.web.conftest import fast_fetch

    settings = fast_fetch(web)
    settings = settings.model_copy(update={"pdf": settings.pdf.model_copy(update={"timeout_s": MATRIX_PDF_TIMEOUT_S})})
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
    if status == FetchStatus.OK:  # OK always carries the downloaded body, its kind and non-blank text
        assert r.raw and r.content_kind in ("html", "pdf:pdftotext", "pdf:pypdf"), (r.content_kind, r.raw)
        assert r.text and r.text.strip()
    elif status in (FetchStatus.PDF_NO_TEXT, FetchStatus.PDF_ERROR):  # downloaded and kept, but no text
        assert r.raw and r.text is None and r.content_kind, (r.content_kind, r.text)


def test_run_completes_in_bounded_time(matrix_run):
    results, wall, _ = matrix_run
    assert len(results) == len(MATRIX)
    # slowest path: 2 attempts x 1 s deadline + backoff; 20 s is a hang guard, not a benchmark
    assert wall < 20, wall


def test_texts_survive_charset_traps(matrix_run, web):
    results, _, _ = matrix_run
    assert "minimum 1 200 €" in results[web.url("misstated.fixture", "/_/charset/misstated")].text
    assert "Größenordnung" in results[web.url("undeclared.fixture", "/_/charset/undeclared")].text
    # the charset only the header names is the one read (with the media type alone: "nieruchomo¶ci"), and is
    # kept with the type, so the stored bytes are read the same way again
    header_only = results[web.url("headercs.fixture", "/_/charset/header-only")]
    assert "Podatek od nieruchomości wynosi 0,5 %" in header_only.text and "Źródło" in header_only.text
    assert header_only.content_type == "text/html; charset=iso-8859-2"
    assert "7.5 % above EUR 500,000" in results[web.url("pdf.fixture", "/_/pdf/text")].text
    cf = results[web.url("cfray.fixture", "/_/cf-ok")]
    assert "transfer duty" in cf.text and cf.note == ""  # a Cloudflare-served page (cf-ray only) is a normal page


def test_js_shell_keeps_its_text_and_binary_is_not_downloaded(matrix_run, web):
    results, _, _ = matrix_run
    assert results[web.url("shell.fixture", "/_/js-shell")].text is not None
    assert results[web.url("bin.fixture", "/_/binary")].raw is None


def test_a_body_over_the_decoded_cap_is_final_and_requested_once():
    """A gzip bomb is TOO_LARGE at its first answer and never asked again. On its own fixture web, with a response
    deadline too long to fire (the matrix's 1 s one is for the trickle row): a second request could only be a
    retry of the too-large answer, not of a deadline a busy machine let pass."""
    from claims_pipeline_tests.web.conftest import fast_fetch

    with FixtureWeb() as web:
        url = web.url("bomb.fixture", "/_/gzip-bomb?mb=30")
        [result] = run_fetch(fast_fetch(web, request_timeout_s=60), [url])
        log = web.requests()
    assert result.status == FetchStatus.TOO_LARGE and result.attempts == 1, (result.status, result.note)
    assert "decoded, content-encoding gzip" in result.note and result.raw is None
    assert [e["path"] for e in log if e["path"] != "/robots.txt"] == ["/_/gzip-bomb?mb=30"]


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


def test_ok_results_keep_the_servers_validators(matrix_run, web):
    results, _, _ = matrix_run
    # routes served with ETag + Last-Modified (the chain ends on a generated page), and routes served without
    for host, path in [("ok.fixture", "/_/page/duty"), ("chain.fixture", "/_/chain/3"), ("pdf.fixture", "/_/pdf/text"),
                       ("flaky.fixture", "/_/flaky?fails=1&code=429&retry_after=1")]:
        r = results[web.url(host, path)]
        assert r.etag and r.etag.startswith('"') and r.last_modified and r.last_modified.endswith("GMT"), host
    for host, path in [("cfray.fixture", "/_/cf-ok"), ("misstated.fixture", "/_/charset/misstated")]:
        r = results[web.url(host, path)]
        assert r.etag is None and r.last_modified is None, host


def test_a_bot_wall_is_requested_once_on_any_status(matrix_run):
    """The fixture web's request log: one request per walled URL, whatever its status and marker, while a 503 or
    429 without a wall marker is still retried (max_retries = 2)."""
    _, _, log = matrix_run

    def hits(host: str) -> int:
        return sum(1 for e in log if e["host"] == host and e["path"] != "/robots.txt")

    walls = ["wall503.fixture", "wall403.fixture", "wall200.fixture", "wall500.fixture", "cf503.fixture",
             "cf429.fixture", "cf.fixture", "cf999.fixture", "title.fixture"]
    assert {host: hits(host) for host in walls} == {host: 1 for host in walls}
    assert hits("err503.fixture") == hits("err500.fixture") == 2  # no marker: an outage, asked again
    assert [e["status"] for e in log if e["host"] == "flaky.fixture" and "flaky" in e["path"]] == [429, 200]
    assert hits("forbidden.fixture") == hits("li.fixture") == hits("cfray.fixture") == 1


def test_pdf_faults_were_downloaded_whole_under_the_pdf_cap(matrix_run, web):
    from claims_pipeline_demo.fixture_web import make_pdfs

    results, _, _ = matrix_run
    for host, name in [("pdfscan.fixture", "scanned"), ("pdfenc.fixture", "encrypted")]:
        r = results[web.url(host, f"/_/pdf/{name}")]
        assert r.raw == (make_pdfs.PDF_DIR / f"{name}.pdf").read_bytes(), name


def test_a_pdf_bomb_is_stopped_by_the_pdf_timeout_and_kept_whole():
    """~350 KB (over max_html_bytes, under max_pdf_bytes) that inflates to ~120 MB: downloaded whole under the PDF
    cap, then stopped by pdf.timeout_s, with no text."""
    from claims_pipeline_demo.fixture_web import make_pdfs
    from claims_pipeline_tests.web.conftest import fast_fetch

    with FixtureWeb() as web:
        settings = fast_fetch(web)
        settings = settings.model_copy(update={"pdf": settings.pdf.model_copy(update={"timeout_s": BOMB_PDF_TIMEOUT_S})})
        [r] = run_fetch(settings, [web.url("pdfbomb.fixture", "/_/pdf/bomb")])
    assert r.status == FetchStatus.PDF_ERROR and f"PDF extraction timed out after {BOMB_PDF_TIMEOUT_S}s" in r.note, r.note
    assert r.raw == (make_pdfs.PDF_DIR / "bomb.pdf").read_bytes() and r.text is None
    assert len(r.raw) > 200_000  # bigger than max_html_bytes yet read: PDFs have their own cap (400 000)
