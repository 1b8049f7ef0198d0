"""Bodies the fixture web generates in code: figure pages, shells, walls, charset traps, a PNG, a text PDF, a
gzip bomb."""

from __future__ import annotations

import functools
import gzip
import hashlib
import struct
import zlib


def page_html(host: str, name: str, epoch: int, size: int) -> bytes:
    """A deterministic page with real-looking figures; ``epoch`` changes the rate, ``size`` pads it."""
    seed = int(hashlib.sha1(f"{host}/{name}".encode()).hexdigest()[:6], 16)
    rate = 4 + (seed % 50) / 10 + (epoch - 1) * 0.5
    fee = 1000 + seed % 9000
    para = (f"<p>The transfer duty on {name} is {rate:.1f} % of the price, with a fixed fee of "
            f"€{fee:,} per deed (Law 7464, Art. 12), effective 1 January 2026.</p>\n")
    pad = "<p>" + "Explanatory notes on procedures and forms for applicants. " * 8 + "</p>\n"
    body = para + pad * max(1, size // len(pad) if size else 2)
    return (f"<!doctype html><html><head><title>{host} — {name}</title></head><body>"
            f"<nav><a href='/'>Home</a></nav><main><h1>{name}</h1>\n{body}"
            f"<table><tr><th>Band</th><th>Rate</th></tr><tr><td>up to €250,000</td><td>{rate:.1f} %</td></tr>"
            f"</table></main></body></html>").encode()


FIGURES_PAGE = page_html("cloudflare-fronted.fixture", "duties", 1, 0)

JS_SHELL = (b"<!doctype html><html><head><title>e-Legislation</title>"
            b"<script src='/static/js/main.4f2a.js'></script></head>"
            b"<body><noscript>You need to enable JavaScript to run this app.</noscript>"
            b"<div id='root'></div><script>window.__INITIAL_STATE__={}</script></body></html>")


def challenge_page(title: str) -> bytes:
    return (f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
            f"<h1>Checking your browser before accessing the site.</h1>"
            f"<script>/* challenge */</script></body></html>").encode()


def misstated_charset_page() -> bytes:
    """Declared utf-8 by the server, but the bytes are windows-1252 (€ is 0x80, é is 0xE9)."""
    text = ("<html><head><title>Barème</title></head><body><p>Frais de notaire : 7,5 % du prix, "
            "minimum 1 200 € ; droits d'enregistrement réduits à 5,09 % pour les résidences.</p>"
            + "<p>Texte explicatif détaillé sur la procédure d'acquisition immobilière. </p>" * 4
            + "</body></html>")
    return text.encode("cp1252")


def undeclared_charset_page() -> bytes:
    """No charset anywhere; the bytes are ISO-8859-15 text."""
    text = ("<html><head><title>Gebühren</title></head><body><p>Grunderwerbsteuer: 6,5 % in Schleswig-Holstein; "
            "Notargebühren etwa 1,5 % - Größenordnung für Käufer außerhalb der Städte.</p>"
            + "<p>Erläuterungen zur Übertragung von Grundstücken und zu den Gebühren. </p>" * 4
            + "</body></html>")
    return text.encode("iso-8859-15")


def header_charset_page() -> bytes:
    """ISO-8859-2 (Polish) bytes whose charset only the HTTP header names: detection alone reads cp1252."""
    text = ("<html><head><title>Podatek</title></head><body><p>Podatek od nieruchomości wynosi 0,5 % rocznie. "
            "Źródło: ustawa o podatkach i opłatach lokalnych.</p></body></html>")
    return text.encode("iso-8859-2")


def png_bytes() -> bytes:
    """A valid 1x1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0")) + chunk(b"IEND", b"")


def text_pdf(lines: tuple[str, ...] = ("Stamp duty schedule 2026", "Residential rate: 7.5 % above EUR 500,000",
                                       "Law 2024-1039, Article 3")) -> bytes:
    """A minimal one-page PDF with a real text layer (Helvetica), built by hand with a correct xref."""
    content = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(f"({s}) '" for s in lines) + " ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content.encode("latin-1") + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


_ZEROS_MB = 1_000_000


@functools.cache
def gzip_bomb(mb: int) -> bytes:
    """``<html><body>`` then ``mb`` MB of zeros, gzip-encoded: ~1 KB on the wire per MB decoded.

    One gzip member per MB (RFC 1952 allows a series of members; readers inflate them in turn), the same member
    repeated: one MB is compressed, once a process, so the first request is answered at once, as a real server
    answers with a prepared file. Compressing the whole body in the request would spend CPU in proportion to
    ``mb`` before the first byte, and on a busy machine the client's response deadline would fire first: a
    slow server to the client, not a bomb."""
    zeros = gzip.compress(b"\0" * _ZEROS_MB, compresslevel=9, mtime=0)
    return gzip.compress(b"<html><body>", mtime=0) + zeros * mb
