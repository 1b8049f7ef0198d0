"""Text from fetched pages or the corpus, never trusted as markup, made safe for report.md (escaped cells, links
only to http(s) URLs); report.html escapes through its templates (html_templates)."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from claims_pipeline.common.text_safety import replaced

# CommonMark lets a backslash escape any ASCII punctuation; these are the ones that can start markup.
_MD_SPECIAL_RE = re.compile(r"([\\`*_\[\]()<>#|!~&{}])")
_WS_RE = re.compile(r"\s+")
# what GitHub's autolink extension turns into a link, raw source and all (backslash escapes included)
_AUTOLINK_START_RE = re.compile(r"(?i)(?<=[a-z])://|(?<![a-z0-9.-])www\.")  # "_www." is autolinked too
# a markdown link or image in corpus text: [label](target "title") → label (the URL has its own column)
_INLINE_LINK_RE = re.compile(
    r'!?\[([^\[\]\n]{0,500})\]\(\s*(?:<[^<>\n]{0,2000}>|[^()\s]{0,2000}(?:\([^()\s]{0,500}\)[^()\s]{0,500}){0,5})'
    r'(?:\s+"[^"\n]{0,300}")?\s*\)'
)


_ZWJ = "\u200d"


def _extends(ch: str) -> bool:
    """Does ch belong to the character before it (a combining mark, ZWJ, variation selector, skin tone)?"""
    return (unicodedata.category(ch) in ("Mn", "Me", "Mc") or ch == _ZWJ or "\ufe00" <= ch <= "\ufe0f"
            or "\U0001f3fb" <= ch <= "\U0001f3ff" or "\U000e0020" <= ch <= "\U000e007f")


def _regional(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def cut(text: str, limit: int) -> str:
    """text cut to at most `limit` characters, '…' included: at a space when one is in the last 40 %, so a
    figure is not cut in half ("at 18" of "at 18%"), and never inside a character (an accent, an emoji
    sequence, a flag's pair of regional indicators)."""
    if len(text) <= limit:
        return text
    n = max(1, limit - 1)
    space = text.rfind(" ", 0, n + 1)
    if space >= int(limit * 0.6):
        n = space
    while n > 0 and (_extends(text[n]) or text[n - 1] == _ZWJ):
        n -= 1
    if n > 0 and _regional(text[n]):
        run = 0
        while run < n and _regional(text[n - 1 - run]):
            run += 1
        n -= run % 2  # an odd run before the cut: its last indicator pairs with the one after it
    return text[:n].rstrip() + "…"


def md_cell(text: object, limit: int | None = None, *, in_link: bool = False) -> str:
    """One markdown table cell: a single line, cut to limit (with '…'), every markup character
    backslash-escaped, and no URL that GitHub would autolink with the escapes inside it (unless the text is a
    link's own label, where nothing is autolinked)."""
    s = replaced(_WS_RE.sub(" ", "" if text is None else str(text)).strip())
    if limit is not None:
        s = cut(s, limit)
    s = _MD_SPECIAL_RE.sub(r"\\\1", s)
    if in_link:
        return s
    return _AUTOLINK_START_RE.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1] if m.group()[0] in "wW"
                                  else "\\" + m.group(), s)


_BLOCK_MARKER_RE = re.compile(r"^\s{0,3}(?:>\s?)*(?:[-*+]|\d{1,9}[.)])?\s+")


_IMAGE_RE = re.compile(r'!\[([^\[\]\n]{0,500})\]\([^()\s]{0,2000}(?:\s+"[^"\n]{0,300}")?\s*\)')


def claim_prose(text: object) -> str:
    """A claim as a report's table shows it: images as their alt text and links as their labels (a linked
    image too), and without the list or quote marker that opens its line ("- ", "1. ", "> ")."""
    prose = link_labels(_IMAGE_RE.sub(lambda m: m.group(1), "" if text is None else str(text)))
    return _BLOCK_MARKER_RE.sub("", prose, count=1)


_STRONG_RE = re.compile(r"(\*\*|__)(?=\S)([^\n]{1,500}?)(?<=\S)\1")


def claim_plain(text: object) -> str:
    """claim_prose without its bold markers: report.html shows text, and report.md's cells escape every markup
    character, so kept markers would show as asterisks."""
    return _STRONG_RE.sub(lambda m: m.group(2), claim_prose(text))


def link_labels(text: object) -> str:
    """Corpus text with each markdown link or image shown as its label: a claim reads as prose in a table
    whose URL column already links the source."""
    return _INLINE_LINK_RE.sub(lambda m: m.group(1), "" if text is None else str(text))


_DESTINATION_UNSAFE = {"<": "%3C", ">": "%3E", "|": "%7C", "\\": "%5C"}
# where a long URL (or file path) may wrap: between its segments, after "//" and before a single "/", "?", "#" or
# "&", so a host or a file name stays whole; a browser's break-all cut anywhere ("gouv.f" / "r"). Finer points
# (every dot) let a table squeeze its URL column to a host label per line.
_URL_BREAK_RE = re.compile(r"(?<=//)(?=.)|(?<=[^/])(?=[/?#&])(?!//)")
ZWSP = "\u200b"  # report.md's break mark: invisible when rendered (a pager may show it: less prints <U+200B>)


def url_break_points(text: str) -> list[str]:
    """The URL's (or path's) text split where a line may break (see _URL_BREAK_RE)."""
    return _URL_BREAK_RE.split(text)


_WORD_BREAK_RE = re.compile(r"(?<=[.\-_])(?=[^.\-_/?#&])")


def md_link(url: object, limit: int | None = 100, *, breaks: bool = False, fine: bool = False) -> str:
    """A URL in a markdown table cell. An http(s) URL becomes an explicit link: GitHub keeps the backslashes
    of an escaped bare URL inside the href it autolinks ('article%5C_lc'), so the href is the URL itself in
    an angle-bracket destination, with the few characters that could end it or split the table row
    percent-encoded. Anything else stays escaped text. `breaks`: the label (never the href) gets a zero-width
    space between the URL's segments, so a rendered table wraps a long URL there; `fine`: also after each '.',
    '-' and '_' inside a segment (a host such as www.impots.gouv.fr is otherwise a table column's widest word)."""
    href = safe_href(url)
    shown = "" if url is None else str(url)
    if breaks and href is not None:
        parts = url_break_points(cut(shown, limit) if limit is not None else shown)
        if fine:
            parts = [p for part in parts for p in _WORD_BREAK_RE.split(part)]
        shown = ZWSP.join(parts)
        limit = None
    label = md_cell(shown, limit, in_link=href is not None)
    if href is None:
        return label
    dest = "".join(_DESTINATION_UNSAFE.get(ch, ch) for ch in replaced(href))
    return f"[{label}](<{dest}>)"


def md_code(text: object) -> str:
    """A backticked cell (scope names) unless the text itself could break out of the code span."""
    s = "" if text is None else str(text)
    return f"`{s}`" if re.fullmatch(r"[\w./: -]*", s) else md_cell(s)


def safe_href(url: object) -> str | None:
    """The URL when it is a plain http(s) URL with a host, else None (shown as text, never linked)."""
    s = "" if url is None else str(url).strip()
    if any(c in s for c in "\r\n\t\x00 ") or not s:
        return None
    try:
        parts = urlsplit(s)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return s


def cell_text(value: object) -> str:
    """A nullable table cell as text: None and NaN (pandas' missing value) become ''."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value)
