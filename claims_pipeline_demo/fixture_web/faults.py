"""Scripted responses the fixture web plays under ``/_/fault/<name>``: bodies and headers exactly as listed
(no Content-Type or Content-Length added unless a row names them), for the fetcher's edge cases."""

from __future__ import annotations

import gzip

from claims_pipeline_demo.fixture_web.generated import FIGURES_PAGE, page_html, text_pdf

Headers = list[tuple[str, str]]
HTML = ("Content-Type", "text/html; charset=utf-8")
PDF = ("Content-Type", "application/octet-stream")


_NOTES = b"Explanatory notes on procedures and forms for applicants. " * 4


def _xhtml() -> bytes:
    return (b"<?xml version='1.0' encoding='utf-8'?>\n<html xmlns='http://www.w3.org/1999/xhtml'><head>"
            b"<meta charset='utf-8'/><title>Rates</title><script>var x = 1;</script><style>p {}</style></head>"
            b"<body><main><p>The reduced rate is 6.<strong>32</strong> % from 2025.</p><p>" + _NOTES + b"</p></main>"
            b"</body></html>")


def _stub(head: str, body: str = "<p>Redirecting…</p>") -> bytes:
    return f"<!doctype html><html><head><title>Redirect</title>{head}</head><body>{body}</body></html>".encode()


def fault(name: str, query: dict[str, str]) -> tuple[int, Headers, bytes] | None:
    """(status, headers, body) for a fault name, or None when there is no such fault."""
    page = page_html("fault.fixture", name, 1, 0)
    target = query.get("to", "/_/page/target")
    table: dict[str, tuple[int, Headers, bytes]] = {
        # PDFs a server labels as a generic download
        "octet-pdf": (200, [PDF], text_pdf()),
        "octet-pdf-disposition": (200, [PDF, ("Content-Disposition", 'attachment; filename="loi-2024.pdf"')], b""),
        "octet-pdf-disposition-junk": (200, [PDF, ("Content-Disposition", 'attachment; filename="loi-2024.pdf"')], b""),
        # a plain-text body a server names *.pdf: it is text, read as text
        "text-pdf-disposition": (200, [("Content-Type", "text/plain; charset=utf-8"),
                                       ("Content-Disposition", 'inline; filename="rates.pdf"')],
                                 b"Stamp duty rates 2026: 5.8 % on the price above EUR 300,000.\n"),
        "octet-zip": (200, [PDF], b"PK\x03\x04" + bytes(range(256)) * 16),
        # empty and partial 2xx bodies
        "empty-200": (200, [HTML, ("Content-Length", "0")], b""),
        "s204": (204, [], b""),
        "s205": (205, [("Content-Length", "0")], b""),
        "s206": (206, [HTML, ("Content-Range", f"bytes 0-199/{len(page)}")], page[:200]),
        # XHTML served as XML
        "xhtml-as-xml": (200, [("Content-Type", "text/xml")], _xhtml()),
        "xhtml-as-app-xml": (200, [("Content-Type", "application/xml; charset=utf-8")], _xhtml()),
        # gzip bodies browsers read: trailing padding after the member; and a body labelled gzip but not compressed
        "gzip-trailing-zeros": (200, [HTML, ("Content-Encoding", "gzip")], gzip.compress(FIGURES_PAGE) + b"\0" * 8),
        "gzip-not-compressed": (200, [HTML, ("Content-Encoding", "gzip")], FIGURES_PAGE),
        # redirect stubs
        "meta-refresh": (200, [HTML], _stub(f"<meta http-equiv='refresh' content='0; url={target}'>")),
        "meta-refresh-slow": (200, [HTML], _stub(f"<meta http-equiv='refresh' content='60; url={target}'>")),
        "js-redirect": (200, [HTML], _stub(f"<script>window.location.replace('{target}');</script>")),
        # a real page whose title starts like a challenge title
        "levy-one-more-step": (200, [HTML], page.replace(
            b"<title>fault.fixture \xe2\x80\x94 levy-one-more-step</title>",
            b"<title>One more step: confirm your 2025 levy before 31 March</title>")),
    }
    if name == "octet-pdf-disposition":  # the same PDF, named only by Content-Disposition
        status, headers, _ = table[name]
        return status, headers, text_pdf()
    if name == "octet-pdf-disposition-junk":  # and a download script's warnings before it (over 1 KiB)
        status, headers, _ = table[name]
        return status, headers, b"<b>Warning</b>: session_start(): headers already sent\n" * 40 + text_pdf()
    return table.get(name)
