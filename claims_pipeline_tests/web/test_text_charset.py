"""Charset: BOM, header, meta, then detection when the declared charset is misstated."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from claims_pipeline.web.charset import charset_from_content_type, decode_body, meta_charset, normalise_label
from claims_pipeline.web.text import html_to_text

TEXT_SITE = Path(__file__).resolve().parents[2] / "claims_pipeline" / "fixture_web" / "sites" / "text.fixture"
WESTERN = ["è", "€", "ß", "‰", "coûte", "Hauptstraße", "1 200 €"]


@pytest.mark.parametrize(
    ("name", "header_charset", "expected"),
    [
        ("charset-cp1252-says-utf8.html", "utf-8", WESTERN),  # header AND meta say utf-8: both wrong
        ("charset-cp1252-says-utf8.html", None, WESTERN),
        ("charset-utf8-says-latin1.html", "iso-8859-1", WESTERN),  # declared latin-1 over UTF-8 bytes
        ("charset-big5-says-utf8.html", "utf-8", ["中華民國", "民國一一四年三月"]),
        ("charset-utf16-bom.html", "utf-8", WESTERN),  # the BOM beats the header
    ],
)
def test_misstated_charsets_still_read_right(name: str, header_charset: str | None, expected: list[str]) -> None:
    text = html_to_text((TEXT_SITE / name).read_bytes(), header_charset)
    for s in expected:
        assert s in text, (s, text[:200])
    assert "\ufffd" not in text and "Ã" not in text and "â‚¬" not in text


def test_decode_order_and_sources() -> None:
    body = "<p>Straße 5 €</p>"
    assert decode_body(codecs.BOM_UTF8 + body.encode(), "cp1252").source == "bom"
    assert decode_body(body.encode("cp1252"), "windows-1252").source == "header"
    meta = ('<meta charset="windows-1252">' + body).encode("cp1252")
    d = decode_body(meta, None)
    assert (d.source, d.encoding, "Straße 5 €" in d.text) == ("meta", "cp1252", True)
    d = decode_body(body.encode("cp1252"), "utf-8")
    assert d.source == "detected" and "Straße 5 €" in d.text
    d = decode_body(body.encode("utf-8"), "latin-1")  # a single-byte label over valid UTF-8 is not trusted
    assert d.encoding == "utf-8" and "Straße 5 €" in d.text


def test_unknown_label_is_ignored() -> None:
    assert normalise_label("x-no-such-charset") is None
    d = decode_body("Größe 5 €".encode(), "x-no-such-charset")
    assert d.text == "Größe 5 €"


def test_label_helpers() -> None:
    assert charset_from_content_type('text/html; charset="ISO-8859-1"') == "iso-8859-1"
    assert charset_from_content_type("text/html") is None
    assert normalise_label("latin1") == "cp1252"  # browsers read latin-1 labels as windows-1252
    assert normalise_label("GB2312") == "gb18030"
    assert meta_charset(b'<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">') == "shift_jis"
    assert meta_charset(b'<?xml version="1.0" encoding="ISO-8859-15"?><r/>') == "iso-8859-15"


def test_ascii_body_decodes_without_detection() -> None:
    d = decode_body(b"<p>plain 6.32 %</p>", "utf-8")
    assert d.text == "<p>plain 6.32 %</p>" and d.encoding == "ascii"
