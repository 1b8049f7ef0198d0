"""The previous HTML → text reader (BeautifulSoup over lxml), kept as the reference for html_text.

``html_text.html_to_text`` walks lxml's tree directly and must give the same text, character for character,
as this module's ``html_to_text_bs4`` (page text hashes are stored in users' caches). The differential test
(claims_pipeline_tests/web/test_html_text_equivalence.py) and benchmarks/bench_text.py compare the two. This
code is the old implementation unchanged, normalise_text included; only the names moved (it shares the tag
sets with html_text).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag, XMLParsedAsHTMLWarning
from bs4.element import CData, Comment, Declaration, Doctype, ProcessingInstruction

from claims_pipeline.web.chrome import BANNER_KEEPERS, SECTIONING, chrome_kind
from claims_pipeline.web.html_text import (
    _BLOCK_TAGS,
    _CELL_MARK,
    _CELL_TAGS,
    _DROP_TAGS,
    _INVISIBLE_RE,
    _SPACED_TAGS,
    CELL_SEP,
    _to_str,
)

_WS_RE = re.compile(r"\s+")
_HSPACE_RE = re.compile(r"[^\S\n\x1f]+")
_SKIP_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction, CData)


def _get(tag: Tag) -> Any:
    """An attribute reader like lxml's: bs4 splits class into a list, the readers match the raw value."""
    def get(name: str) -> str | None:
        value = tag.get(name)
        return " ".join(value) if isinstance(value, list) else value
    return get


def _is_chrome(tag: Tag) -> bool:
    kind = chrome_kind(_get(tag), tag.name, any(p.name in SECTIONING for p in tag.parents))
    return kind == "chrome" or (kind == "notice" and tag.find(BANNER_KEEPERS) is None)


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


def normalise_text_old(text: str) -> str:
    """The old normalise_text (line by line), the reference for html_text.normalise_text."""
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


def html_to_text_bs4(raw: bytes | str, declared_charset: str | None = None) -> str:
    """The old html_to_text: BeautifulSoup with the lxml builder, then the walk above."""
    markup = _to_str(raw, declared_charset)
    with warnings.catch_warnings():  # XML-looking pages are read as HTML on purpose, as the lxml-tree path does
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup, "lxml")
    return normalise_text_old("".join(_walk(soup)))
