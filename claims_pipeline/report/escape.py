"""Escaping for text that comes from fetched pages or the corpus: never trusted as markup."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from claims_pipeline.text_safety import replaced

# CommonMark lets a backslash escape any ASCII punctuation; these are the ones that can start markup.
_MD_SPECIAL_RE = re.compile(r"([\\`*_\[\]()<>#|!~&{}])")
_WS_RE = re.compile(r"\s+")


def md_cell(text: object, limit: int | None = None) -> str:
    """One markdown table cell: a single line, cut to limit, every markup character backslash-escaped."""
    s = replaced(_WS_RE.sub(" ", "" if text is None else str(text)).strip())
    if limit is not None and len(s) > limit:
        s = s[:limit]
    return _MD_SPECIAL_RE.sub(r"\\\1", s)


def md_code(text: object) -> str:
    """A backticked cell (scope names) unless the text itself could break out of the code span."""
    s = "" if text is None else str(text)
    return f"`{s}`" if re.fullmatch(r"[\w./ -]*", s) else md_cell(s)


def h(text: object) -> str:
    """HTML-escape any value (quotes too, so it is safe inside attributes)."""
    return html.escape(replaced("" if text is None else str(text)), quote=True)


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


def link_html(url: object, label: object | None = None) -> str:
    href = safe_href(url)
    text = h(label if label is not None else url)
    if href is None:
        return f'<span class="url">{text}</span>'
    return f'<a href="{h(href)}" rel="noopener noreferrer nofollow">{text}</a>'


def s(value: object) -> str:
    """A nullable table cell as text: None and NaN (pandas' missing value) become ''."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value)
