"""Redirect stubs: thin pages that send the browser elsewhere by <meta http-equiv="refresh"> or by script.

Their text ("This page has moved…") is not the page a claim cites: read as the page, every figure would be
"absent" and the move a content change. A meta refresh is followed like a 3xx (by the fetcher, hop by hop);
a script redirect is not run, so the page is unreadable, and the note names where it points.
"""

from __future__ import annotations

import re

STUB_MAX_CHARS = 1000  # readable text of a stub: a sentence or two, some chrome left over
REFRESH_MAX_DELAY_S = 10  # longer delays are auto-reloads of real pages, not moves
_HEAD_BYTES = 65536

_META_RE = re.compile(rb"<meta\b[^>]{0,4096}>", re.IGNORECASE)  # bounded: a hostile page of unclosed <meta would be quadratic
_ATTR_RE = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_REFRESH_RE = re.compile(r"""^\s*(\d+(?:\.\d*)?)\s*(?:[;,]\s*(?:url\s*=\s*)?["']?([^"']*)["']?)?\s*$""",
                         re.IGNORECASE)
_SCRIPT_OPEN_RE = re.compile(rb"<script\b[^>]{0,4096}>", re.IGNORECASE)
_SCRIPT_CLOSE_RE = re.compile(rb"</script", re.IGNORECASE)


def _scripts(head: bytes) -> list[bytes]:
    """The bodies of the script elements, found in one pass (an unclosed one ends the search: a lazy
    '<script…>(.*?)</script>' retried from every later '<script' would be quadratic on a hostile page)."""
    out: list[bytes] = []
    pos = 0
    while (m := _SCRIPT_OPEN_RE.search(head, pos)) is not None:
        close = _SCRIPT_CLOSE_RE.search(head, m.end())
        if close is None:
            break
        out.append(head[m.end():close.start()])
        pos = close.end()
    return out
_LOCATION_RE = re.compile(
    r"""\blocation(?:\.href)?\s*=\s*["']([^"']+)["']|\blocation\.(?:replace|assign)\(\s*["']([^"']+)["']""")


def _attrs(tag: bytes) -> dict[str, str]:
    return {m.group(1).decode("ascii", "replace").lower():
            next(g for g in m.groups()[1:] if g is not None).decode("utf-8", "replace") for m in _ATTR_RE.finditer(tag)}


def refresh_target(raw: bytes, text: str) -> str | None:
    """The URL a thin page refreshes to within REFRESH_MAX_DELAY_S, as written (relative or absolute)."""
    if len(text) >= STUB_MAX_CHARS:
        return None
    for tag in _META_RE.findall(raw[:_HEAD_BYTES]):
        attrs = _attrs(tag)
        if attrs.get("http-equiv", "").strip().lower() != "refresh":
            continue
        m = _REFRESH_RE.match(attrs.get("content", ""))
        if m and float(m.group(1)) <= REFRESH_MAX_DELAY_S and (m.group(2) or "").strip():
            return m.group(2).strip()
    return None


def script_redirect_target(raw: bytes, text: str) -> str | None:
    """The literal URL a thin page's script sends the browser to (location = / .href = / .replace / .assign)."""
    if len(text) >= STUB_MAX_CHARS:
        return None
    for script in _scripts(raw[:_HEAD_BYTES]):
        m = _LOCATION_RE.search(script.decode("utf-8", "replace"))
        if m:
            return (m.group(1) or m.group(2)).strip()
    return None
