"""PDF → text under caps: pdftotext first, pypdf fallback, clear statuses for scanned/encrypted/corrupt/bombs."""

from __future__ import annotations

from pathlib import Path

import pytest

from claims_pipeline.config.settings import PdfSettings, Settings, settings_from_dict
from claims_pipeline.web.records import FetchStatus
from claims_pipeline.web.text import extract_text, pdf_to_text
from claims_pipeline_demo.fixture_web import make_pdfs

PDF_SITE = make_pdfs.PDF_DIR
FAST = PdfSettings(timeout_s=5, max_pages=20, max_text_chars=20_000)


def pdf(name: str) -> bytes:
    return (PDF_SITE / name).read_bytes()


@pytest.fixture
def no_poppler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine without poppler-utils (nor prlimit): PATH holds nothing; pypdf must take over."""
    monkeypatch.setenv("PATH", str(tmp_path))


def test_text_pdf_keeps_table_figures_as_separate_tokens() -> None:
    out = pdf_to_text(pdf("tax-table.pdf"), FAST)
    assert (out.status, out.content_kind, out.note) == (FetchStatus.OK, "pdf:pdftotext", "")
    assert out.text is not None
    row = next(line for line in out.text.splitlines() if line.startswith("Social levy"))
    assert row.split() == ["Social", "levy", "all", "income", "6.32", "%", "2025"]
    assert "Registered taxpayers: 1 000 000 (2024)" in out.text
    assert "3 450 million €" in out.text
    assert "The social levy of 6.32 % applies from 1 January 2025." in out.text  # page 2


def test_scanned_pdf_has_no_text_layer() -> None:
    out = pdf_to_text(pdf("scanned.pdf"), FAST)
    assert (out.status, out.text, out.note) == (
        FetchStatus.PDF_NO_TEXT, None, "PDF has no extractable text layer (scanned image?)")


def test_encrypted_pdf_needs_a_password() -> None:
    out = pdf_to_text(pdf("encrypted.pdf"), FAST)
    assert (out.status, out.text, out.note) == (FetchStatus.PDF_ERROR, None, "encrypted PDF (needs a password)")


def test_pdf_encrypted_with_empty_user_password_is_readable() -> None:
    out = pdf_to_text(pdf("owner-only.pdf"), FAST)
    assert out.status is FetchStatus.OK and out.text is not None and "6.32 %" in out.text


def test_corrupt_pdf_is_an_error_with_a_reason() -> None:
    out = pdf_to_text(pdf("corrupt.pdf"), FAST)
    assert out.status is FetchStatus.PDF_ERROR
    assert out.note.startswith("corrupt PDF: pdftotext exit 1: Syntax Error") and "pypdf:" in out.note


def test_missing_magic_is_an_error_not_a_crash() -> None:
    out = pdf_to_text(b"\x00" * 5000, FAST)
    assert out.status is FetchStatus.PDF_ERROR and "no %PDF- header" in out.note


def test_page_bomb_stopped_by_the_page_cap() -> None:
    out = pdf_to_text(pdf("many-pages.pdf"), PdfSettings(timeout_s=5, max_pages=3))
    assert out.status is FetchStatus.OK and out.text is not None
    assert out.text.count("Page of a very long document") == 3
    assert out.note == "read the first 3 of 2000 pages (page cap)"


def test_text_cap_truncates_output() -> None:
    out = pdf_to_text(pdf("many-pages.pdf"), PdfSettings(timeout_s=5, max_pages=0, max_text_chars=1000))
    assert out.status is FetchStatus.OK and out.text is not None
    assert len(out.text) == 1000 and out.note == "text capped at 1000 chars"


@pytest.mark.timeout(60)
def test_inflate_bomb_stopped_by_the_time_cap() -> None:
    out = pdf_to_text(pdf("bomb.pdf"), PdfSettings(timeout_s=1, max_pages=1))
    assert out.status is FetchStatus.PDF_ERROR and out.text is None
    assert "timed out after 1s" in out.note or "resource limits" in out.note


def test_disabled_pdf_reading_is_binary() -> None:
    out = pdf_to_text(pdf("tax-table.pdf"), PdfSettings(enabled=False))
    assert (out.status, out.note) == (FetchStatus.BINARY, "pdf extraction disabled")


def test_pypdf_fallback_reads_text(no_poppler: None) -> None:
    out = pdf_to_text(pdf("tax-table.pdf"), FAST)
    assert (out.status, out.content_kind) == (FetchStatus.OK, "pdf:pypdf")
    assert out.text is not None and "6.32 %" in out.text and "1 000 000" in out.text


@pytest.mark.parametrize(
    ("name", "status", "note_start"),
    [
        ("scanned.pdf", FetchStatus.PDF_NO_TEXT, "PDF has no extractable text layer"),
        ("encrypted.pdf", FetchStatus.PDF_ERROR, "encrypted PDF (needs a password)"),
        ("corrupt.pdf", FetchStatus.PDF_ERROR, "corrupt PDF: pdftotext not installed; pypdf:"),
    ],
)
def test_pypdf_fallback_statuses(no_poppler: None, name: str, status: FetchStatus, note_start: str) -> None:
    out = pdf_to_text(pdf(name), FAST)
    assert out.status is status and out.note.startswith(note_start)


def test_pypdf_fallback_honours_the_page_cap(no_poppler: None) -> None:
    out = pdf_to_text(pdf("many-pages.pdf"), PdfSettings(timeout_s=20, max_pages=4))
    assert out.status is FetchStatus.OK and out.text is not None
    assert out.text.count("Page of a very long document") == 4


def _settings(**pdf: object) -> Settings:
    return settings_from_dict({"pdf": {"timeout_s": 5, **pdf}})


def test_pdf_served_as_octet_stream_is_still_read() -> None:
    out = extract_text(pdf("tax-table.pdf"), "application/octet-stream", "http://pdfs.fixture/download?id=7",
                       _settings().fetch, _settings().pdf)
    assert out.status is FetchStatus.OK and out.text is not None and "6.32 %" in out.text
    assert out.note == "served as application/octet-stream but is a PDF"


def test_pdf_url_that_serves_html_is_read_as_html() -> None:
    out = extract_text(pdf("not-a-pdf.pdf"), "application/pdf", "http://pdfs.fixture/not-a-pdf.pdf", _settings().fetch, _settings().pdf)
    assert (out.status, out.content_kind, out.note) == (FetchStatus.OK, "html", "claimed PDF but the body is HTML")
    assert out.text == "Not Found\nThe requested document was moved. Please use the search page."


def test_pdf_claim_with_garbage_body_is_a_pdf_error() -> None:
    out = extract_text(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "application/pdf", "http://x.fixture/a.pdf", _settings().fetch, _settings().pdf)
    assert out.status is FetchStatus.PDF_ERROR and "no %PDF- header" in out.note


def test_committed_fixtures_match_the_generator(tmp_path: Path) -> None:
    sizes = make_pdfs.build_all(tmp_path / "pdfs", tmp_path / "text")
    for name in sizes:
        committed = (PDF_SITE / name) if name.endswith(".pdf") else (make_pdfs.TEXT_DIR / name)
        generated = (tmp_path / "pdfs" / name) if name.endswith(".pdf") else (tmp_path / "text" / name)
        assert committed.read_bytes() == generated.read_bytes(), name


@pytest.mark.parametrize("ctype", ["application/pdf", "application/octet-stream"])
def test_pdf_after_more_than_1024_bytes_of_script_warnings_is_read(ctype: str) -> None:
    # Cause: the %PDF- header was looked for in the first 1024 bytes only, so a PDF that a PHP script preceded
    # with warnings was PDF_ERROR although pdftotext reads it.
    junk = b"<br />\n<b>Warning</b>: Cannot modify header information - headers already sent\n" * 20
    assert len(junk) > 1024
    out = extract_text(junk + pdf("tax-table.pdf"), ctype, "https://x.test/doc.pdf", settings_from_dict({}).fetch, settings_from_dict({}).pdf)
    assert out.status is FetchStatus.OK and out.text is not None and "6.32 %" in out.text
    assert out.note.startswith(f"{len(junk)} bytes before the %PDF- header")


def test_html_mentioning_the_pdf_magic_stays_html() -> None:
    # a page may mention the header past 1024 bytes: only a body already taken for a PDF is searched further
    page = b"<html><body><p>" + b"Notes on file formats. " * 60 + b"A PDF starts with %PDF-1.7.</p></body></html>"
    out = extract_text(page, "text/html", "https://x.test/about-pdf", settings_from_dict({}).fetch, settings_from_dict({}).pdf)
    assert out.status is FetchStatus.OK and out.content_kind == "html"


def test_a_two_column_page_is_read_column_by_column() -> None:
    """pdftotext -layout prints a gazette's two columns side by side; read as text, each sentence was cut by
    the other column's. Title first, each column whole, the table that straddles the gutter keeps its rows."""
    out = pdf_to_text(pdf("gazette.pdf"), FAST)
    assert (out.status, out.content_kind) == (FetchStatus.OK, "pdf:pdftotext")
    assert out.text is not None
    g = make_pdfs
    expected = (["Official Gazette of Xanadia, No. 42 of 3 March 2025"] + g.GAZETTE_LEFT + g.GAZETTE_RIGHT
                + [f"{label} {rate}" for label, rate in g.GAZETTE_TABLE] + g.GAZETTE_LEFT_2 + g.GAZETTE_RIGHT_2)
    assert out.text.splitlines() == expected
