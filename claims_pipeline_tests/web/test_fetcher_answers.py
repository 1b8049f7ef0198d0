"""What a response means, decided from its status, headers and the head of its body, apart from any network: the
fetcher's pure decisions (the fault matrix and edge-case tests play the same answers through real servers)."""

from __future__ import annotations

from claims_pipeline.config.settings import FetchSettings
from claims_pipeline.web.fetcher import _answer_of_body, _answer_without_body, _ReadBody, _Retry, _Settled
from claims_pipeline.web.records import FetchStatus

F = FetchSettings()
PAGE = "https://example.org/report"
WALL = b"<html><head><title>Just a moment...</title></head><body>checking</body></html>"


def answer(status: int, headers: dict[str, str] | None = None, peek: bytes = b"", retry_after: float | None = None):
    return _answer_without_body(status, headers or {}, PAGE, peek, retry_after, F)


def test_server_errors_and_429_are_retried_with_their_wait() -> None:
    assert answer(503, {"retry-after": "7"}, retry_after=7.0) == _Retry("http 503 Retry-After 7", http_status=503,
                                                                        retry_after=7.0)
    assert answer(429) == _Retry("http 429", http_status=429, retry_after=None)


def test_bot_walls_end_the_url_on_any_status_with_their_page() -> None:
    walled = answer(503, peek=WALL)
    assert isinstance(walled, _Settled) and walled.status is FetchStatus.BLOCKED and walled.raw == WALL
    assert "challenge title" in walled.note
    marked = answer(200, {"cf-mitigated": "challenge"}, peek=b"<html></html>")
    assert isinstance(marked, _Settled) and marked.note == "http 200 bot wall: cf-mitigated=challenge"


def test_final_4xx_answers() -> None:
    code = 403
    assert code in F.blocked_status_codes
    blocked = answer(code, peek=b"<html>no</html>")
    assert blocked == _Settled(FetchStatus.BLOCKED, f"http {code}: access refused (no challenge marker)",
                               raw=b"<html>no</html>")
    assert answer(404) == _Settled(FetchStatus.DEAD, "http 404")
    login = answer(401)
    assert isinstance(login, _Settled) and login.status is FetchStatus.BLOCKED and "login required" in login.note


def test_empty_partial_and_odd_2xx_are_no_page_text() -> None:
    assert answer(206) == _Settled(FetchStatus.UNAVAILABLE, "http 206 partial content not requested")
    assert answer(204) == _Settled(FetchStatus.UNAVAILABLE, "http 204: empty body")
    assert answer(200, {"content-length": "0"}) == _Settled(FetchStatus.UNAVAILABLE, "http 200: empty body")
    assert answer(199) == _Settled(FetchStatus.UNAVAILABLE, "unexpected http 199")


def test_what_of_a_2xx_body_is_read() -> None:
    assert answer(200, {"content-type": "text/html"}) == _ReadBody(F.max_html_bytes, is_pdf=False, sniff=False)
    assert answer(200, {"content-type": "application/pdf"}) == _ReadBody(F.max_pdf_bytes, is_pdf=True, sniff=False)
    octets = answer(200, {"content-type": "application/octet-stream"})
    assert octets == _ReadBody(F.max_pdf_bytes, is_pdf=False, sniff=True)
    image = answer(200, {"content-type": "image/png"})
    assert image == _Settled(FetchStatus.BINARY, "binary content type image/png: not downloaded", content_kind="binary")
    big = answer(200, {"content-type": "text/html", "content-length": str(F.max_html_bytes + 1)})
    assert isinstance(big, _Settled) and big.status is FetchStatus.TOO_LARGE
    # compressed: the declared length is not the body's, the cap is checked while reading
    zipped = answer(200, {"content-type": "text/html", "content-length": str(F.max_html_bytes + 1),
                          "content-encoding": "gzip"})
    assert isinstance(zipped, _ReadBody)


def test_a_body_read_whole() -> None:
    html = _ReadBody(F.max_html_bytes, is_pdf=False, sniff=False)
    assert _answer_of_body(b"  \n", 200, html, "text/html", PAGE, F) == _Settled(FetchStatus.UNAVAILABLE,
                                                                                "http 200: empty body")
    walled = _answer_of_body(WALL, 200, html, "text/html", PAGE, F)
    assert isinstance(walled, _Settled) and walled.status is FetchStatus.BLOCKED and walled.raw == WALL
    assert _answer_of_body(b"<p>5 %</p>", 200, html, "text/html", PAGE, F) is False
    # named *.pdf by Content-Disposition alone, on a generic type: read as a PDF
    named = _ReadBody(F.max_pdf_bytes, is_pdf=True, sniff=False)
    assert _answer_of_body(b"%PDF-1.7", 200, named, "application/x-download", "https://example.org/get?id=1", F) is True
    # a declared PDF, or one found by sniffing, is read as what it is
    assert _answer_of_body(b"%PDF-1.7", 200, named, "application/pdf", PAGE, F) is False
    sniffed = _ReadBody(F.max_pdf_bytes, is_pdf=False, sniff=True)
    assert _answer_of_body(b"%PDF-1.7", 200, sniffed, "application/octet-stream", PAGE, F) is False
