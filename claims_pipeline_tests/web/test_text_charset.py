"""Charset: BOM, header, meta, then detection when the declared charset is misstated."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from claims_pipeline.web.charset import charset_from_content_type, decode_body, meta_charset, normalise_label
from claims_pipeline.web.text import html_to_text

TEXT_SITE = Path(__file__).resolve().parents[2] / "claims_pipeline_demo" / "fixture_web" / "sites" / "text.fixture"
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


# --- stray bytes in UTF-8, and Western pages detected as a Central European or DOS code page -----------------

_FR = ("Le taux de la contribution sociale généralisée est de 6,32 % et le plafond de 300 000 € depuis le "
       "1er janvier 2025 (loi n° 2024-1039).")


def _utf8_page_with_stray(meta: str, extra: int = 1) -> tuple[bytes, str]:
    """A UTF-8 page holding one raw cp1252 apostrophe (0x92), as pasted from Word; and the text it means."""
    body = f"<html><head>{meta}<title>Taux</title></head><body><p>{_FR}</p>" + "<p>Déclaré à l'Urssaf.</p>" * extra
    html = body + "<p>L\x92employeur verse la contribution.</p></body></html>"
    return html.encode("utf-8").replace(b"\xc2\x92", b"\x92"), html.replace("\x92", "\ufffd")


@pytest.mark.parametrize(("meta", "header", "extra", "source"), [
    ("<meta charset='utf-8'>", None, 1, "meta"),
    ("", "utf-8", 1, "header"),
    ("", None, 20, "fallback"),  # undeclared: read as UTF-8 once valid sequences outnumber strays 20 to 1
])
def test_utf8_page_with_a_stray_byte_stays_utf8(meta: str, header: str | None, extra: int, source: str) -> None:
    # Cause: one invalid byte made the strict UTF-8 decode fail and charset-normalizer read the whole page as
    # cp932/hp_roman8 ("gﾃｩnﾃｩralisﾃｩe", "竄ｬ"), so "300 000 €" was not found on the page.
    raw, expected = _utf8_page_with_stray(meta, extra)
    d = decode_body(raw, header)
    assert (d.encoding, d.source) == ("utf-8", source)
    assert d.text == expected  # only the stray byte is replaced


def test_utf8_page_with_a_stray_byte_keeps_its_figures_as_text() -> None:
    raw, _ = _utf8_page_with_stray("<meta charset='utf-8'>")
    text = html_to_text(raw, "utf-8")
    assert "300 000 € depuis" in text and "généralisée" in text


_PAGE = "<html><head>{meta}<title>Service public</title></head><body><main><p>{t}</p></main></body></html>"
WESTERN_CP1252 = {
    # charset-normalizer's best guess for these was mac_latin2 ("gťnťralisťe", "300 000 Ä") or cp1250 ("č")
    "fr": _FR + " Les employeurs déclarent les sommes versées à l'Urssaf chaque mois.",
    "fr-short": "Montant du plafond : 300 000 €. Taux réduit : 6,32 %. Année d'application : 2025.",
    "it": "L'aliquota è pari al 6,32 % e la soglia è di 300.000 € dal 1° gennaio 2025 (Legge n. 2024-1039). "
          "Ulteriori informazioni sul sito dell'Agenzia delle Entrate.",
}


@pytest.mark.parametrize("lang", sorted(WESTERN_CP1252))
@pytest.mark.parametrize(("meta", "header"), [("", None), ("<meta charset='utf-8'>", None), ("", "utf-8")])
def test_western_cp1252_page_is_read_as_cp1252(lang: str, meta: str, header: str | None) -> None:
    page = _PAGE.format(meta=meta, t=WESTERN_CP1252[lang])
    d = decode_body(page.encode("cp1252"), header)
    assert d.text == page, (d.encoding, d.text[60:140])


CENTRAL_EUROPEAN = {
    "cs": "Sazba daně z příjmů fyzických osob činí 15 % a pro vyšší příjmy 23 %. Žádost podejte na finančním "
          "úřadě do 1. dubna 2025.",
    "pl": "Stawka podatku wynosi 12 % i 32 % powyżej progu 120 000 zł. Zeznanie należy złożyć w urzędzie "
          "skarbowym do końca kwietnia.",
    "hr": "Stopa poreza na dohodak iznosi 20 % i 30 %. Prijava se podnosi poreznoj upravi do kraja veljače; više "
          "informacija na stranici Ministarstva financija.",
}


@pytest.mark.parametrize(("lang", "codec"), [("cs", "cp1250"), ("pl", "cp1250"), ("pl", "iso8859_2"), ("hr", "cp1250")])
def test_central_european_pages_keep_their_codec(lang: str, codec: str) -> None:
    # The guard on the cp1252 preference above (these were read right before it and must stay so): Croatian
    # scores as cp1252 about as Italian does as cp1250, so a coherence margin alone would have flipped it.
    page = _PAGE.format(meta="", t=CENTRAL_EUROPEAN[lang])
    assert decode_body(page.encode(codec), None).text == page
