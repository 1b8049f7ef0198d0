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
  (nav, role=navigation/banner/contentinfo, header/footer outside sectioning content, aside, elements whose
  id/class names a cookie notice unless they hold a main or table) are dropped,
  but anything marked as footnotes/endnotes is kept wherever it sits.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lxml import etree

from claims_pipeline.web.charset import decode_body
from claims_pipeline.web.chrome import (
    BANNER_KEEPERS,
    CHROME_TAGS,
    COOKIE_TAGS,
    PAGE_LEVEL_CHROME_TAGS,
    SECTIONING,
    chrome_kind,
)

# Subtrees never read: code, metadata, widgets.
_DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "embed", "canvas",
     "select", "button", "math", "map", "audio", "video"}
)

_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
     "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
     "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "p", "pre", "section",
     "summary", "table", "tbody", "tfoot", "thead", "tr", "ul", "option", "label"}
)
_CELL_TAGS = frozenset({"td", "th"})
_SPACED_TAGS = frozenset({"sup", "sub"})
_BLOCK_OR_TABLE = _BLOCK_TAGS | {"table"}
# Elements chrome_kind has to look at more closely (any element with a role attribute is one too).
_CHROME_CANDIDATE_TAGS = CHROME_TAGS | PAGE_LEVEL_CHROME_TAGS | COOKIE_TAGS
# libxml2's tree builder limits with XML_PARSE_HUGE (lxml's huge_tree): nodePush's maxDepth, and
# XML_MAX_HUGE_LENGTH bytes in one text node (far above any body cap). Without it they are 256 and 10 MB.
_TREE_DEPTH_LIMIT = 2048
_TREE_TEXT_LIMIT = 1_000_000_000
_LONG_TEXT_XPATH = etree.XPath(f"boolean(//text()[string-length(.) >= {_TREE_TEXT_LIMIT // 4 - 1000}])")

CELL_SEP = " | "
_CELL_MARK = "\x1f"  # private marker between cells until lines are assembled
# Removed: invisible characters that split digits (zero-width space, word joiner, BOM, soft hyphen). Control
# and bidi characters stay in the stored text (changing it would change every such page's text hash, and so
# flag a change that did not happen); whatever shows text to a person neutralises them (text_safety.py).
_INVISIBLE_RE = re.compile("[\u200b\u2060\ufeff\u00ad]")


def _single_block_cell(cell: Any, holds_table: set[Any]) -> bool:
    """A cell holding at most one block element and no nested table: its content belongs on the row's line.

    Cells with several blocks (layout tables wrapping whole pages) keep their line breaks. `holds_table`: the
    elements with a table below them (_elements_holding_tables), so no cell's subtree is searched.
    """
    if not len(cell):
        return False
    blocks = [c for c in cell if c.tag in _BLOCK_OR_TABLE]  # comments' .tag is a function: never in the set
    return len(blocks) == 1 and blocks[0].tag != "table" and blocks[0] not in holds_table


def _elements_holding_tables(top: list[Any], tags: tuple[str, ...] = ("table",)) -> set[Any]:
    """Every element with a <table> (or one of ``tags``) somewhere below it, each found once (linear in the page).

    The set keeps lxml's proxies alive, so the walk meets these same objects again."""
    holding: set[Any] = set()
    for node in top:
        if node.tag.__class__ is not str:
            continue
        for table in node.iter(*tags):
            for ancestor in table.iterancestors():
                if ancestor in holding:
                    break  # its ancestors were marked by an earlier table
                holding.add(ancestor)
    return holding


# The walk's own marks, assembled into "\n" and _CELL_MARK at the end. Text never holds a NUL (libxml2
# reads U+0000 as U+FFFD), so these cannot be confused with page text.
_BREAK = "\x00n"
_CELL = "\x00c"
# Inside <pre> the page's own line breaks (and a literal _CELL_MARK) keep their meaning.
_PRE_ESCAPE = str.maketrans({"\n": _BREAK, "\r": _BREAK, "\f": _BREAK, _CELL_MARK: _CELL})
_PRE_CLOSE = "pre"
_FLAT_CELL_CLOSE = "flat-cell"


def _walk(top: list[Any]) -> list[str]:
    """Text pieces in document order, with _BREAK at block edges and _CELL around cells.

    ``top`` is the document's top-level nodes (comments, processing instructions, html elements). Text lives
    in lxml's .text (before an element's first child) and .tail (after an element, in its parent); comments
    and processing instructions are nodes whose own text is skipped but whose tail is content. Text outside
    <pre> is left as it is: _assemble turns its line-breaking characters into spaces in one pass (the rest
    of its whitespace is collapsed by normalise_text), which is what the per-piece "\\s+" → " " of the bs4
    walk came to. An explicit stack instead of recursion: real pages nest deeper than Python's recursion limit.
    """
    out: list[str] = []
    append = out.append
    pre_depth = 0
    flat_cells = 0  # inside a cell whose one block child (Word's <td><p>…</p></td>) must not break the row
    in_content = 0  # open sectioning elements (chrome.SECTIONING)
    holds_table = _elements_holding_tables(top)
    holds_keeper: set[Any] | None = None  # elements holding a chrome.BANNER_KEEPERS, found on first need
    stack: list[Any] = [iter(top)]
    closers: list[str | None] = [None]
    tails: list[str | None] = [None]
    contents: list[bool] = [False]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            in_content -= contents.pop()
            closer = closers.pop()
            if closer is not None:
                if closer is _PRE_CLOSE:
                    pre_depth -= 1
                    append(_BREAK)
                elif closer is _FLAT_CELL_CLOSE:
                    flat_cells -= 1
                    append(_CELL)
                else:
                    append(closer)
            tail = tails.pop()
            if tail:
                append(tail.translate(_PRE_ESCAPE) if pre_depth else tail)
            continue
        name = child.tag
        kind = None
        if name.__class__ is str and name not in _DROP_TAGS and (
                name in _CHROME_CANDIDATE_TAGS or child.get("role") is not None):
            kind = chrome_kind(child.get, name, in_content > 0)
            if kind == "notice":
                if holds_keeper is None:
                    holds_keeper = _elements_holding_tables(top, BANNER_KEEPERS)
                if child in holds_keeper:
                    kind = None
        if name.__class__ is not str or name in _DROP_TAGS or kind is not None:
            tail = child.tail  # a comment, PI or dropped subtree: only the text after it is read
            if tail:
                append(tail.translate(_PRE_ESCAPE) if pre_depth else tail)
            continue
        if name == "br":
            append(_BREAK)
            tail = child.tail
            if tail:
                append(tail.translate(_PRE_ESCAPE) if pre_depth else tail)
            continue
        if name in _CELL_TAGS:
            append(_CELL)
            closer = _CELL
            if _single_block_cell(child, holds_table):
                flat_cells += 1
                closer = _FLAT_CELL_CLOSE
        elif name in _SPACED_TAGS:
            append(" ")
            closer = " "
        elif name == "pre":
            append(_BREAK)
            pre_depth += 1
            closer = _PRE_CLOSE
        elif name in _BLOCK_TAGS:
            closer = " " if flat_cells else _BREAK
            append(closer)
        else:
            closer = None
        text = child.text
        if text:
            append(text.translate(_PRE_ESCAPE) if pre_depth else text)
        stack.append(iter(child))
        closers.append(closer)
        tails.append(child.tail)
        content = name in SECTIONING
        contents.append(content)
        in_content += content
    return out


def _assemble(pieces: list[str]) -> str:
    """The walk's pieces as one text for normalise_text: line breaks and cell marks outside <pre> are spaces."""
    text = "".join(pieces)
    text = text.replace("\n", " ").replace("\r", " ").replace("\f", " ").replace(_CELL_MARK, " ")
    return text.replace(_BREAK, "\n").replace(_CELL, _CELL_MARK)


def normalise_text(text: str) -> str:
    """Apply the module's whitespace rules to assembled text (also used for plain text and PDF text)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    if not text.isascii():  # O(1) in CPython; every invisible character is non-ASCII
        text = _INVISIBLE_RE.sub("", text)
    # Within a line (or a cell) every whitespace character is horizontal, so str.split() + join is the
    # "runs become one space, ends stripped" rule done in C (str.split and re's \s agree on whitespace).
    lines: list[str] = []
    for line in text.split("\n"):
        if _CELL_MARK in line:
            line = CELL_SEP.join([p for p in [" ".join(c.split()) for c in line.split(_CELL_MARK)] if p])
        else:
            line = " ".join(line.split())
        if line:
            lines.append(line)
    return "\n".join(lines)


def _to_str(raw: bytes | str, declared_charset: str | None, *, sniff_meta: bool = True) -> str:
    return raw if isinstance(raw, str) else decode_body(raw, declared_charset, sniff_meta=sniff_meta).text


def _top_level_nodes(markup: str) -> list[Any] | None:
    """lxml's HTML tree of markup, as the document's top-level nodes in order (empty for an empty document);
    None when the tree may hold less than the parser read (see below).

    Parsed as bs4's lxml builder feeds it (recover, one feed() of the whole str, a leading BOM dropped
    first), but with huge_tree. Only the tree builder differs (libxml2's own, not bs4 as the parser's target):
    the parser raises the same events, and the one thing the tree leaves out (whitespace-only text at
    document level, between top-level comments and <html> elements) only ever sits between the html blocks'
    line breaks, where normalise_text strips it.

    libxml2's tree builder (not the parser) has limits, and past them it silently stops building, so the
    rest of the page would be missing: 2048 nested elements with huge_tree (256 without), and 1 GB in one
    text node (10 MB without). A tree whose last, still-open chain of elements is that deep, or a document
    long enough to hold such a text node, is handed back as None and read by _streamed_pieces instead.
    """
    if markup[:1] == "\N{BYTE ORDER MARK}":
        markup = markup[1:]
    parser = etree.HTMLParser(recover=True, huge_tree=True)
    parser.feed(markup)
    root = parser.close()
    if root is None:
        return []
    top = list(root.itersiblings(preceding=True))
    top.reverse()
    top.append(root)
    top.extend(root.itersiblings())
    # When the builder stops at the depth limit, the elements open at that moment are the last chain.
    depth, el = 1, top[-1]
    while len(el):
        el = el[-1]
        depth += 1
    if depth >= _TREE_DEPTH_LIMIT - 16:
        return None
    # A text node holds at most 4 UTF-8 bytes per character of markup (entities only shrink).
    if len(markup) * 4 >= _TREE_TEXT_LIMIT and _LONG_TEXT_XPATH(root):
        return None
    return top


class _StreamedText:
    """lxml parser target for pages nested deeper than any tree is built for (only hostile or broken pages
    are): the parser's events turned straight into the walk's pieces, in time and memory linear in the page.

    The same rules as _walk except one: a cell is never read as a single-block cell (that needs to look
    ahead), so a <td><p>…</p></td> row breaks around its block. A reader that builds a tree (bs4) would take
    many times the page in memory, and its ancestor and subtree scans would make it quadratic."""

    def __init__(self) -> None:
        self.out: list[str] = []
        # per open element: its closer and whether it is a main/article (two flat lists of shared objects, not a
        # tuple per element: a hostile page opens a million elements)
        self._closers: list[str | None] = []
        self._contents: list[bool] = []
        self._skip = 0  # depth inside a dropped subtree (0: reading)
        self._pre = 0
        self._in_content = 0
        self._keepers = 0  # main/table elements met so far
        self._notices: list[tuple[int, int, int]] = []  # open cookie notices: (depth, output start, keepers then)

    def start(self, tag: str, attrib: Any) -> None:
        if self._skip:
            self._skip += 1
            return
        get = attrib.get
        if tag in BANNER_KEEPERS:
            self._keepers += 1
        kind = None
        if tag in _DROP_TAGS or ((tag in _CHROME_CANDIDATE_TAGS or get("role") is not None)
                                 and (kind := chrome_kind(get, tag, self._in_content > 0)) == "chrome"):
            self._skip = 1
            return
        if kind == "notice":  # read it, and take it back at its end unless a main/table was inside
            self._notices.append((len(self._closers), len(self.out), self._keepers))
        append = self.out.append
        closer: str | None
        if tag == "br":
            append(_BREAK)
            closer = None
        elif tag in _CELL_TAGS:
            append(_CELL)
            closer = _CELL
        elif tag in _SPACED_TAGS:
            append(" ")
            closer = " "
        elif tag == "pre":
            append(_BREAK)
            self._pre += 1
            closer = _PRE_CLOSE
        elif tag in _BLOCK_TAGS:
            append(_BREAK)
            closer = _BREAK
        else:
            closer = None
        content = tag in SECTIONING
        self._in_content += content
        self._closers.append(closer)
        self._contents.append(content)

    def end(self, tag: str) -> None:
        if self._skip:
            self._skip -= 1
            return
        if not self._closers:
            return
        closer = self._closers.pop()
        self._in_content -= self._contents.pop()
        if closer is _PRE_CLOSE:
            self._pre -= 1
            self.out.append(_BREAK)
        elif closer is not None:
            self.out.append(closer)
        if self._notices and self._notices[-1][0] == len(self._closers):
            _, start, keepers = self._notices.pop()
            if keepers == self._keepers:
                del self.out[start:]

    def data(self, text: str) -> None:
        if not self._skip:
            self.out.append(text.translate(_PRE_ESCAPE) if self._pre else text)

    def close(self) -> list[str]:
        return self.out


def _streamed_pieces(markup: str) -> list[str]:
    if markup[:1] == "\N{BYTE ORDER MARK}":
        markup = markup[1:]
    # the target has only the events it reads (lxml looks each one up); types-lxml's ParserTarget lists all of them
    parser = etree.HTMLParser(target=_StreamedText(), recover=True, huge_tree=True)  # type: ignore[call-overload]
    parser.feed(markup)
    return parser.close()


def html_to_text(raw: bytes | str, declared_charset: str | None = None) -> str:
    """Readable text of an HTML page (see the module doc for its exact shape)."""
    markup = _to_str(raw, declared_charset)
    top = _top_level_nodes(markup)
    pieces = _streamed_pieces(markup) if top is None else _walk(top)  # None: deeper than a tree is built
    return normalise_text(_assemble(pieces))


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
