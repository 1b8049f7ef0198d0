"""Turn a fetched body into text: the one entry point the fetcher calls (``extract_text``).

Dispatch is by sniffing first, Content-Type second, because servers mislabel: a body starting with ``%PDF-``
is read as a PDF whatever its type (an octet-stream PDF is a PDF, docs/decisions/0002); a "PDF" that is really an
HTML error page is read as HTML, with a note; images/zip/octet-stream are BINARY; JSON, XML and plain text are
cleaned into text nodes, never returned as raw markup. The text's exact shape is described in
``claims_pipeline.web.html_text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from claims_pipeline.config.settings import FetchSettings, PdfSettings
from claims_pipeline.web.charset import charset_from_content_type
from claims_pipeline.web.html_text import html_to_text, json_to_text, looks_like_js_shell, plain_to_text, xml_to_text
from claims_pipeline.web.pdf_text import PDF_SEARCH_WINDOW, has_pdf_magic, pdf_outcome
from claims_pipeline.web.records import FetchStatus

__all__ = [
    "TextOutcome",
    "extract_text",
    "html_to_text",
    "pdf_to_text",
    "looks_like_js_shell",
    "is_pdf_candidate",
    "is_binary_type",
]


@dataclass(slots=True)
class TextOutcome:
    status: FetchStatus  # OK | PDF_NO_TEXT | PDF_ERROR | BINARY
    text: str | None  # set when status is OK
    content_kind: str  # "html" | "text" | "pdf:pdftotext" | "pdf:pypdf" | "binary"
    note: str = ""


# One comment matches exactly one way ("-->" ends it), and the prolog repeats atomically: '<!--.*?-->' in a
# repeated group could stretch over several comments, and a few dozen leading comments would take minutes to reject.
_COMMENT = rb"<!--(?:[^-]|-(?!->))*-->"
_HTML_START_RE = re.compile(rb"^\s*(?>" + _COMMENT + rb"\s*)*<(?:!doctype\s+html|html|head|body|meta|title|div|p)\b",
                            re.IGNORECASE)
# XML whose root element is html, in any namespace or prefix (XHTML served as text/xml): read as a page.
_XHTML_ROOT_RE = re.compile(rb"^\s*(?>(?:<\?[^>]*\?>|" + _COMMENT + rb"|<!doctype[^>]*>)\s*)*<(?:[\w.-]+:)?html[\s/>]",
                            re.IGNORECASE)
_XML_TYPES = ("application/xml", "text/xml", "application/rss+xml", "application/atom+xml")


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_pdf_candidate(content_type: str | None, url: str) -> bool:
    """Declared as PDF, or a URL path ending in .pdf (the query string ignored), as in the reference rules (docs/decisions/0001)."""
    if _media_type(content_type) in ("application/pdf", "application/x-pdf"):
        return True
    try:
        return urlsplit(url).path.lower().endswith(".pdf")
    except ValueError:
        return False


def is_binary_type(content_type: str | None, fetch: FetchSettings) -> bool:
    """A type we do not read (fetch.binary_content_prefixes); PDFs are never binary here."""
    media = _media_type(content_type)
    if media in ("application/pdf", "application/x-pdf"):
        return False
    return any(media.startswith(p.lower()) for p in fetch.binary_content_prefixes)


def pdf_to_text(raw: bytes, pdf_settings: PdfSettings) -> TextOutcome:
    """PDF bytes → TextOutcome (OK, PDF_NO_TEXT, PDF_ERROR, or BINARY when PDF reading is disabled)."""
    out = pdf_outcome(raw, pdf_settings)
    return TextOutcome(out.status, out.text, out.content_kind, out.note)


def _looks_like_html(raw: bytes) -> bool:
    return bool(_HTML_START_RE.match(raw[:4096].lstrip(b"\xef\xbb\xbf")))


def _looks_binary(raw: bytes) -> bool:
    """NUL bytes in the head of a body that has no UTF-16/32 BOM: not text."""
    head = raw[:1024]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    return b"\x00" in head


def _html(raw: bytes, charset: str | None, note: str = "") -> TextOutcome:
    return TextOutcome(FetchStatus.OK, html_to_text(raw, charset), "html", note)


def extract_text(raw: bytes, content_type: str, url: str, fetch: FetchSettings, pdf: PdfSettings) -> TextOutcome:
    """Body bytes + Content-Type → TextOutcome. Never raises: a failure is a status with a note."""
    media = _media_type(content_type)
    charset = charset_from_content_type(content_type)
    try:
        if has_pdf_magic(raw):
            out = pdf_to_text(raw, pdf)
            if media and media not in ("application/pdf", "application/x-pdf") and out.status is FetchStatus.OK:
                out.note = "; ".join(filter(None, [f"served as {media} but is a PDF", out.note]))
            return out
        if is_pdf_candidate(content_type, url) and media not in ("text/html", "application/xhtml+xml"):
            if _looks_like_html(raw):
                return _html(raw, charset, "claimed PDF but the body is HTML")
            if has_pdf_magic(raw, PDF_SEARCH_WINDOW):
                # a PDF after some junk (a script's warnings): its offsets count from its header, so cut there
                skipped = raw.find(b"%PDF-")
                out = pdf_to_text(raw[skipped:], pdf)
                out.note = "; ".join(filter(None, [f"{skipped} bytes before the %PDF- header", out.note]))
                return out
            if media in ("application/pdf", "application/x-pdf") or _looks_binary(raw) or not media:
                return TextOutcome(FetchStatus.PDF_ERROR, None, "binary",
                                   f"corrupt PDF: no %PDF- header in the first {PDF_SEARCH_WINDOW} bytes")
        if is_binary_type(content_type, fetch):
            return TextOutcome(FetchStatus.BINARY, None, "binary", f"binary content ({media}), not read")
        if not raw.strip():
            return TextOutcome(FetchStatus.OK, "", "html" if "html" in media or not media else "text", "empty body")
        if _looks_binary(raw):
            return TextOutcome(FetchStatus.BINARY, None, "binary",
                               f"body looks binary (NUL bytes) though served as {media or 'no type'}")
        if "html" in media or not media:
            return _html(raw, charset)
        if media == "application/json" or media.endswith("+json"):
            return TextOutcome(FetchStatus.OK, json_to_text(raw, charset), "text")
        if media in _XML_TYPES or media.endswith("+xml"):
            if _XHTML_ROOT_RE.match(raw[:4096].lstrip(b"\xef\xbb\xbf")):
                return _html(raw, charset, f"served as {media} but is XHTML")
            return TextOutcome(FetchStatus.OK, xml_to_text(raw, charset), "text")
        if _looks_like_html(raw):  # text/plain (or other) that is really a page
            return _html(raw, charset, f"served as {media} but is HTML")
        if media.startswith("text/") or media in ("application/javascript", "application/csv"):
            return TextOutcome(FetchStatus.OK, plain_to_text(raw, charset), "text")
        return TextOutcome(FetchStatus.BINARY, None, "binary", f"unread content type {media}")
    except Exception as exc:  # a parser bug must cost one URL, not the run
        return TextOutcome(FetchStatus.BINARY, None, "binary",
                           f"text extraction failed for {url}: {type(exc).__name__}: {exc}")
