"""The text fixtures served over real HTTP on 127.0.0.1, read with the server's own Content-Type headers."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from claims_pipeline.config.settings import Settings, settings_from_dict
from claims_pipeline.web.records import FetchStatus
from claims_pipeline.web.text import TextOutcome, extract_text, html_to_text, looks_like_js_shell
from claims_pipeline_demo.fixture_web.server import FixtureWeb


@pytest.fixture(scope="module")
def package_web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as server:  # the package's own sites/, including pdfs.fixture and text.fixture
        yield server


@pytest.fixture(scope="module")
def settings() -> Settings:
    return settings_from_dict({"pdf": {"timeout_s": 5, "max_pages": 20}})


def fetch(web: FixtureWeb, host: str, path: str) -> httpx.Response:
    # Loopback only: the virtual host travels in the Host header.
    resp = httpx.get(f"http://127.0.0.1:{web.port}{path}", headers={"Host": host}, timeout=5.0)
    assert resp.status_code == 200, (host, path, resp.status_code)
    return resp


def read(web: FixtureWeb, settings: Settings, host: str, path: str) -> tuple[httpx.Response, TextOutcome]:
    resp = fetch(web, host, path)
    return resp, extract_text(resp.content, resp.headers.get("content-type", ""), f"http://{host}{path}", settings.fetch, settings.pdf)


def test_header_says_utf8_but_page_is_cp1252(package_web: FixtureWeb, settings: Settings) -> None:
    resp, out = read(package_web, settings, "text.fixture", "/charset-cp1252-says-utf8.html")
    assert "utf-8" in resp.headers["content-type"]  # the header really misstates it
    assert out.status is FetchStatus.OK and out.text is not None
    assert "taxe de 1 200 € pour la résidence" in out.text and "Hauptstraße" in out.text


def test_big5_page_declared_utf8(package_web: FixtureWeb, settings: Settings) -> None:
    _, out = read(package_web, settings, "text.fixture", "/charset-big5-says-utf8.html")
    assert out.text is not None and "中華民國一百一十三年底人口總數" in out.text


def test_servers_own_misstated_page(package_web: FixtureWeb, settings: Settings) -> None:
    _, out = read(package_web, settings, "any.fixture", "/_/charset/misstated")
    assert out.text is not None and "minimum 1 200 €" in out.text and "5,09 %" in out.text


def test_table_page_over_http(package_web: FixtureWeb, settings: Settings) -> None:
    _, out = read(package_web, settings, "text.fixture", "/table-figures.html")
    assert out.content_kind == "html" and out.text is not None and "6.32 % | 2025 | 12 570" in out.text


def test_js_shell_over_http(package_web: FixtureWeb, settings: Settings) -> None:
    resp, out = read(package_web, settings, "text.fixture", "/js-shell.html")
    assert out.status is FetchStatus.OK and out.text == ""
    assert looks_like_js_shell(resp.content, out.text, 200) is not None


@pytest.mark.parametrize(
    ("path", "status", "kind", "note"),
    [
        ("/tax-table.pdf", FetchStatus.OK, "pdf:pdftotext", ""),
        ("/owner-only.pdf", FetchStatus.OK, "pdf:pdftotext", ""),
        ("/scanned.pdf", FetchStatus.PDF_NO_TEXT, "pdf:pdftotext", "PDF has no extractable text layer (scanned image?)"),
        ("/encrypted.pdf", FetchStatus.PDF_ERROR, "pdf:pdftotext", "encrypted PDF (needs a password)"),
        ("/not-a-pdf.pdf", FetchStatus.OK, "html", "claimed PDF but the body is HTML"),
    ],
)
def test_pdfs_over_http(package_web: FixtureWeb, settings: Settings, path: str, status: FetchStatus, kind: str,
                        note: str) -> None:
    resp, out = read(package_web, settings, "pdfs.fixture", path)
    assert resp.headers["content-type"].startswith("application/pdf")
    assert (out.status, out.content_kind, out.note) == (status, kind, note)


def test_corrupt_pdf_over_http(package_web: FixtureWeb, settings: Settings) -> None:
    _, out = read(package_web, settings, "pdfs.fixture", "/corrupt.pdf")
    assert out.status is FetchStatus.PDF_ERROR and out.note.startswith("corrupt PDF:")


def test_server_pdf_route(package_web: FixtureWeb, settings: Settings) -> None:
    _, out = read(package_web, settings, "any.fixture", "/_/pdf/text")
    assert out.status is FetchStatus.OK and out.text


def test_html_to_text_accepts_str_too(package_web: FixtureWeb) -> None:
    resp = fetch(package_web, "text.fixture", "/footnotes.html")
    assert html_to_text(resp.text) == html_to_text(resp.content)
