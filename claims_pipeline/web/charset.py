"""Bytes → str for web bodies whose declared encoding may be missing or wrong.

Order: byte-order mark, then the HTTP header charset, then a ``<meta charset>`` / XML declaration in the first
bytes, then charset-normalizer detection when none of the declared ones decodes cleanly; last resort UTF-8 with
replacement characters. A body that is valid UTF-8 but for a few stray bytes (a pasted Word apostrophe) is
read as UTF-8 with those bytes replaced: wholesale detection would garble every other accent instead. A declared single-byte charset (latin-1 / cp1252 …) never fails to decode, so it is
only trusted when the bytes are *not* valid UTF-8: pages that say iso-8859-1 but carry UTF-8 are common, the
opposite coincidence (non-ASCII cp1252 text that happens to be valid UTF-8) is vanishingly rare.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

# WHATWG-style label aliases: browsers decode these labels with the superset codec, and so do we.
_SUPERSETS = {
    "iso-8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
    "x-sjis": "cp932",
    "sjis": "cp932",
    "euc-kr": "cp949",
    "tis-620": "cp874",
    "utf8": "utf-8",
    "unicode-1-1-utf-8": "utf-8",
}

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

_META_CHARSET_RE = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]+)""", re.IGNORECASE
)
_XML_DECL_RE = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9_.\-]+)["']""", re.IGNORECASE)
_HEADER_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?\s*([^\s;"']+)""", re.IGNORECASE)

# Encodings a browser can decode a page with (the WHATWG Encoding Standard), by charset-normalizer's names.
# Detection also proposes DOS/Mac code pages (mac_latin2, hp_roman8, cp857 …) no web page is served in.
_WEB_CODECS = frozenset({
    "utf_8", "utf_16", "utf_16_le", "utf_16_be", "cp866", "koi8_r", "koi8_u", "mac_roman", "mac_cyrillic", "cp874",
    *(f"cp{n}" for n in range(1250, 1259)), *(f"iso8859_{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
    "gb18030", "gb2312", "gbk", "big5", "big5hkscs", "euc_jp", "iso2022_jp", "shift_jis", "cp932", "euc_kr", "cp949",
})
# cp1252 is taken over a rival whose chaos is this close, when it is at least as coherent or when the rival's
# reading has a one-letter word no language written in that codec has ("č" for Italian "è", "ŕ" for French "à").
# Coherence alone cannot tell them apart: Italian read as cp1250 and Croatian read as cp1252 lose about the same.
_CP1252_CHAOS_SLACK = 0.005
_LONE_LETTER_RE = re.compile(r"(?<!\w)[^\W\d_\x00-\x7f](?!\w)")
# Valid multi-byte characters per stray byte for a body to be read as UTF-8 despite the strays.
_UTF8_RATIO_DECLARED = 3  # the page says utf-8: most of its non-ASCII must agree
_UTF8_RATIO_UNDECLARED = 20

# How much of the body to scan for a <meta charset> (the HTML spec says 1024 bytes; real pages put it later).
_META_SCAN_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str  # the Python codec finally used
    source: str  # "bom" | "header" | "meta" | "detected" | "fallback"


def charset_from_content_type(content_type: str | None) -> str | None:
    """The ``charset=`` parameter of a Content-Type header value, or None."""
    if not content_type:
        return None
    m = _HEADER_CHARSET_RE.search(content_type)
    return m.group(1).strip().lower() if m else None


def normalise_label(label: str | None) -> str | None:
    """A Python codec name for a charset label, or None when the label is unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _SUPERSETS.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def meta_charset(raw: bytes) -> str | None:
    """The charset named by ``<meta charset>``/``http-equiv`` or an XML declaration near the start."""
    head = raw[:_META_SCAN_BYTES]
    m = _XML_DECL_RE.match(head) or _META_CHARSET_RE.search(head)
    return m.group(1).decode("ascii", "replace").lower() if m else None


def _strict(raw: bytes, codec: str) -> str | None:
    try:
        return raw.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def _is_single_byte(codec: str) -> bool:
    return codec.startswith(("cp12", "iso8859", "latin", "cp874", "koi8", "mac-", "cp437", "cp85"))


def _trust(raw: bytes, codec: str) -> str | None:
    """Decode with a declared codec, or None when the declaration looks misstated."""
    text = _strict(raw, codec)
    if text is None:
        return None
    if _is_single_byte(codec) and not raw.isascii() and _strict(raw, "utf-8") is not None:
        return None  # declared latin-1/cp1252 but the bytes are valid UTF-8: the label is wrong
    return text


def _mostly_utf8(raw: bytes, ratio: int) -> bool:
    """Valid UTF-8 but for stray bytes, with at least ``ratio`` valid multi-byte characters per stray."""
    text = raw.decode("utf-8", "replace")
    stray = text.count("\ufffd") - raw.count("\ufffd".encode())
    valid = sum(1 for ch in text if ch > "\x7f") - text.count("\ufffd")
    return stray > 0 and valid >= ratio * stray


def _foreign_lone_letter(text: str, cp1252_text: str) -> bool:
    """A non-ASCII one-letter word that cp1252 reads as another letter (the two decodings align char by char)."""
    if len(text) != len(cp1252_text):
        return False
    return any(cp1252_text[m.start()] != m.group() for m in _LONE_LETTER_RE.finditer(text))


def _detect(raw: bytes) -> Decoded | None:
    results = from_bytes(raw)
    best = next((m for m in results if m.encoding in _WEB_CODECS), results.best())
    if best is None or not best.encoding:
        return None
    if best.encoding != "cp1252":
        # Western pages often score nearly the same as cp1250/cp1257; take cp1252, the web's legacy default
        # (what browsers fall back to), which reads "coûte"/"è" rather than "coűte"/"č".
        cp = next((m for m in results if m.encoding == "cp1252"), None) or from_bytes(raw, cp_isolation=["cp1252"]).best()
        if cp is not None and cp.chaos <= best.chaos + _CP1252_CHAOS_SLACK and (
                cp.coherence >= best.coherence or _foreign_lone_letter(str(best), str(cp))):
            best = cp
    return Decoded(str(best), best.encoding, "detected")


def decode_body(raw: bytes, declared_charset: str | None = None, *, sniff_meta: bool = True) -> Decoded:
    """Decode a body following the module's order; never raises."""
    for bom, bom_codec in _BOMS:
        if raw.startswith(bom):
            return Decoded(raw[len(bom):].decode(bom_codec, "replace"), bom_codec, "bom")
    if raw.isascii():  # the common case, and every ASCII-compatible declaration agrees
        return Decoded(raw.decode("ascii"), "ascii", "header" if declared_charset else "fallback")
    candidates: list[tuple[str, str | None]] = [("header", normalise_label(declared_charset))]
    if sniff_meta:
        candidates.append(("meta", normalise_label(meta_charset(raw))))
    for source, codec in candidates:
        if codec and codec not in ("utf-16-le", "utf-16-be", "utf-16", "utf-32"):  # no BOM: a false claim
            text = _trust(raw, codec)
            if text is not None:
                return Decoded(text, codec, source)
    # Nothing usable declared, or a single-byte label over UTF-8 bytes: valid UTF-8 is strong evidence.
    text = _strict(raw, "utf-8")
    if text is not None:
        return Decoded(text, "utf-8", "fallback")
    # Declared or not, UTF-8 with a few stray bytes is UTF-8: replace the strays, keep every other character.
    declared_utf8 = any(codec == "utf-8" for _, codec in candidates)
    if _mostly_utf8(raw, _UTF8_RATIO_DECLARED if declared_utf8 else _UTF8_RATIO_UNDECLARED):
        source = next((s for s, codec in candidates if codec == "utf-8"), "fallback")
        return Decoded(raw.decode("utf-8", "replace"), "utf-8", source)
    detected = _detect(raw)
    if detected is not None:
        return detected
    return Decoded(raw.decode("utf-8", "replace"), "utf-8", "fallback")
