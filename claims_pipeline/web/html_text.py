"""HTML (and XML / JSON / plain text) → the plain text that priors search for figures.

What the text looks like (the contract priors rely on):
- one block element (p, li, h1–h6, div, tr, caption, figcaption, …) per line; no blank lines;
- table cells of one row joined by " | " (so "6.32 %" and "2025" in adjacent cells never glue); a cell
  wrapping its content in one block (<td><p>5.95 %</p></td>) stays on the row's line, empty cells are skipped;
- <sup>/<sub> content set off by single spaces ("10<sup>6</sup>" → "10 6", "25%<sup>3</sup>" → "25% 3");
- every Unicode space (NBSP U+00A0, thin U+2009, narrow NBSP U+202F, figure space U+2007, ideographic
  U+3000, tabs …) becomes one ASCII space, runs collapse to one: "1&nbsp;000&#8201;000" → "1 000 000";
- zero-width space, word joiner, BOM and soft hyphen are removed (they split digits invisibly);
- entities are decoded (by the parser); scripts, styles, comments and the page's navigation chrome
  (nav, role=navigation/banner/contentinfo, top-level header/footer, aside, obvious cookie banners) are dropped,
  but anything marked as footnotes/endnotes is kept wherever it sits.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import CData, Comment, Declaration, Doctype, ProcessingInstruction
from lxml import etree

from claims_pipeline.web.charset import decode_body

# Subtrees never read: code, metadata, widgets.
_DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "embed", "canvas",
     "select", "button", "math", "map", "audio", "video"}
)
# Navigation chrome: dropped unless it holds footnotes. header/footer only at page level (inside an
# article or main they hold the byline, dates and notes, which carry figures).
_CHROME_TAGS = frozenset({"nav", "aside"})
_PAGE_LEVEL_CHROME_TAGS = frozenset({"header", "footer"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "menubar", "menu"})
_CONTENT_ANCESTORS = frozenset({"article", "main"})
_COOKIE_RE = re.compile(r"cookie|consent|gdpr|onetrust", re.IGNORECASE)
_FOOTNOTE_RE = re.compile(r"foot-?notes?|end-?notes?|doc-(?:end|foot)notes?|references", re.IGNORECASE)

_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
     "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
     "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "p", "pre", "section",
     "summary", "table", "tbody", "tfoot", "thead", "tr", "ul", "option", "label"}
)
_CELL_TAGS = frozenset({"td", "th"})
_SPACED_TAGS = frozenset({"sup", "sub"})
_SKIP_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction, CData)

CELL_SEP = " | "
_CELL_MARK = "\x1f"  # private marker between cells until lines are assembled
_WS_RE = re.compile(r"\s+")
_INVISIBLE_RE = re.compile("[\u200b\u2060\ufeff\u00ad]")
_HSPACE_RE = re.compile(r"[^\S\n\x1f]+")


def _attr_text(tag: Tag) -> str:
    classes = tag.get("class") or []
    if isinstance(classes, str):
        classes = [classes]
    return " ".join([str(tag.get("id") or ""), *classes, str(tag.get("role") or "")])


def _is_footnotes(tag: Tag) -> bool:
    return bool(_FOOTNOTE_RE.search(_attr_text(tag)))


def _is_chrome(tag: Tag) -> bool:
    name = tag.name
    role = str(tag.get("role") or "").lower()
    chrome = name in _CHROME_TAGS or role in _CHROME_ROLES
    if not chrome and name in _PAGE_LEVEL_CHROME_TAGS:
        chrome = not any(p.name in _CONTENT_ANCESTORS for p in tag.parents)
    if not chrome and name in ("div", "section", "aside", "dialog", "form"):
        ident = str(tag.get("id") or "") + " " + " ".join(tag.get("class") or [])
        chrome = bool(_COOKIE_RE.search(ident))
    return chrome and not _is_footnotes(tag)


def _single_block_cell(cell: Tag) -> bool:
    """A cell holding at most one block element and no nested table: its content belongs on the row's line.

    Cells with several blocks (layout tables wrapping whole pages) keep their line breaks.
    """
    blocks = [c for c in cell.children if isinstance(c, Tag) and (c.name in _BLOCK_TAGS or c.name == "table")]
    return len(blocks) == 1 and blocks[0].name != "table" and blocks[0].find("table") is None


def _walk(root: Tag) -> list[str]:
    """Text pieces in document order, with "\\n" at block edges and _CELL_MARK around cells.

    An explicit stack instead of recursion: real pages nest deeper than Python's recursion limit.
    """
    out: list[str] = []
    pre_depth = 0
    flat_cells = 0  # inside a cell whose one block child (Word's <td><p>…</p></td>) must not break the row
    stack: list[Any] = [iter(root.children)]
    closers: list[str | None] = [None]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            closer = closers.pop()
            if closer == "pre":
                pre_depth -= 1
                out.append("\n")
            elif closer == "flat-cell":
                flat_cells -= 1
                out.append(_CELL_MARK)
            elif closer:
                out.append(closer)
            continue
        if isinstance(child, NavigableString):
            if isinstance(child, _SKIP_STRINGS):
                continue
            s = str(child)
            out.append(s if pre_depth else _WS_RE.sub(" ", s))
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name
        if name in _DROP_TAGS or _is_chrome(child):
            continue
        if name == "br":
            out.append("\n")
            continue
        if name in _CELL_TAGS:
            out.append(_CELL_MARK)
            closer = _CELL_MARK
            if _single_block_cell(child):
                flat_cells += 1
                closer = "flat-cell"
        elif name in _SPACED_TAGS:
            out.append(" ")
            closer = " "
        elif name == "pre":
            out.append("\n")
            pre_depth += 1
            closer = "pre"
        elif name in _BLOCK_TAGS:
            closer = " " if flat_cells else "\n"
            out.append(closer)
        else:
            closer = None
        stack.append(iter(child.children))
        closers.append(closer)
    return out


def normalise_text(text: str) -> str:
    """Apply the module's whitespace rules to assembled text (also used for plain text and PDF text)."""
    text = _INVISIBLE_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n"))
    lines: list[str] = []
    for line in text.split("\n"):
        line = _HSPACE_RE.sub(" ", line)
        if _CELL_MARK in line:
            line = CELL_SEP.join(p.strip() for p in line.split(_CELL_MARK) if p.strip())
        line = line.strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def _to_str(raw: bytes | str, declared_charset: str | None, *, sniff_meta: bool = True) -> str:
    return raw if isinstance(raw, str) else decode_body(raw, declared_charset, sniff_meta=sniff_meta).text


def html_to_text(raw: bytes | str, declared_charset: str | None = None) -> str:
    """Readable text of an HTML page (see the module doc for its exact shape)."""
    markup = _to_str(raw, declared_charset)
    soup = BeautifulSoup(markup, "lxml")
    return normalise_text("".join(_walk(soup)))


def xml_to_text(raw: bytes | str, declared_charset: str | None = None) -> str:
    """Text nodes of an XML document, one element per line; falls back to the HTML reader on bad XML."""
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    # No entity expansion, no network, no DTD: billion-laughs and XXE stay inert.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return html_to_text(raw, declared_charset)
    if root is None:
        return ""
    pieces = []
    for node in root.iter():
        if isinstance(node.tag, str):  # skip comments / processing instructions
            for part in (node.text, node.tail if node is not root else None):
                if part and part.strip():
                    pieces.append(part)
    return normalise_text("\n".join(pieces))


def _json_lines(value: Any, key: str, out: list[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _json_lines(v, str(k), out)
    elif isinstance(value, list):
        for v in value:
            _json_lines(v, key, out)
    elif value is not None:
        text = value if isinstance(value, str) else json.dumps(value)
        out.append(f"{key}: {text}" if key else text)


def json_to_text(raw: bytes | str, declared_charset: str | None = None) -> str:
    """Scalar values of a JSON document as "key: value" lines; plain text when it does not parse."""
    text = _to_str(raw, declared_charset, sniff_meta=False)
    try:
        doc = json.loads(text)
    except ValueError:
        return plain_to_text(text)
    out: list[str] = []
    # An explicit stack would be safer for absurd nesting; json.loads already refuses those (RecursionError).
    try:
        _json_lines(doc, "", out)
    except RecursionError:
        return plain_to_text(text)
    return normalise_text("\n".join(out))


def plain_to_text(raw: bytes | str, declared_charset: str | None = None) -> str:
    return normalise_text(_to_str(raw, declared_charset, sniff_meta=False))


_SCRIPT_RE = re.compile(rb"<script\b", re.IGNORECASE)
_SPA_MARKERS = (
    "enable javascript", "requires javascript", "javascript is required", "javascript to run this app",
    "__next_data__", "ng-app", "id=\"root\"></div>", "id=\"app\"></div>", "id=\"__nuxt\"", "data-reactroot",
)


def looks_like_js_shell(raw_html: bytes | str, text: str, min_text_chars: int) -> str | None:
    """A note when an HTML page is a JavaScript shell (its figures are not in the served HTML), else None.

    Only thin pages qualify (under min_text_chars of text) and only when they show signs of being built by
    scripts (script tags or a known framework marker). A short static page is a real page: a figure missing
    from it is genuinely missing, so it is not called unreadable.
    """
    n = len(text.strip())
    if n >= min_text_chars:
        return None
    head = raw_html if isinstance(raw_html, bytes) else raw_html.encode("utf-8", "replace")
    scripts = len(_SCRIPT_RE.findall(head))
    lowered = head[:200_000].decode("utf-8", "replace").lower()
    marker = next((m for m in _SPA_MARKERS if m in lowered), None)
    if marker:
        return f"JS-only shell: {n} chars of text, page built by scripts (marker {marker!r})"
    if scripts:
        return f"JS-only shell: {n} chars of text and {scripts} script tag(s)"
    return None
