"""Markdown tables, lists and code blocks of untrusted text, for the Dagster UI's metadata and the UI summaries
(report/ui_summary.py). Pure: plain strings, no Dagster import (defs/metadata.py wraps them as metadata values).

Cells hold text from fetched pages (notes, diffs) and the corpus: it is escaped like the report's markdown,
so a hostile page cannot put links, images or HTML into the UI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from claims_pipeline.common.text_safety import replaced
from claims_pipeline.report import escape

MAX_TABLE_ROWS = 50  # the UI stays readable; the full lists are in the stored files and the report
_BACKTICK_RUN_RE = re.compile(r"`+")


class Link(str):
    """A URL cell: rendered as a link when it is a plain http(s) URL (escape.md_link), else as text."""


def where(file: str | None, line: int) -> str:
    """file:line (what an editor opens); several files can share a scope and a line number."""
    return f"{file}:{int(line)}" if file else str(int(line))


def prose(claim_text: str) -> str:
    """A claim as a table shows it: its markdown links as their labels (the url column links the source), bold
    as plain text (the cell escapes the asterisks, which would show)."""
    return escape.claim_plain(claim_text)


_LINE_NO_RE = re.compile(r"(?<=\S):(\d+)$")
_FILE_EXT_RE = re.compile(r"(?<=[^\s/.])(?=\.[A-Za-z]\w{0,8}\u200b:\d+$)")


def breakable(cell: str) -> str:
    """A cell that may wrap after each '/' and before a file's extension and ':line': a path or scope
    ('shared/exit/regional/playbook.md:12') is otherwise one unbreakable word that sets the width of its column
    (the zero-width space is invisible)."""
    cell = _LINE_NO_RE.sub(escape.ZWSP + r":\1", cell.replace("/", "/" + escape.ZWSP))
    return _FILE_EXT_RE.sub(escape.ZWSP, cell)


def md_cell(value: Any, limit: int = 90) -> str:
    """One table cell: one line, cut to `limit` characters with '…', every markup character escaped."""
    return escape.md_cell(value, limit)


def markdown_table(headers: list[str], rows: Iterable[list[Any]], *, empty: str = "_(none)_",
                   max_rows: int = MAX_TABLE_ROWS, more: str = "see the stored files / report",
                   url_limit: int = 90, escaped: bool = False, limits: Sequence[int | None] = ()) -> str:
    """A table of escaped cells (a Link cell as a link whose label is cut to url_limit and may wrap between the
    URL's segments and after a '.', '-' or '_' within one), at most max_rows rows, then a line saying how many more there are and where they are.
    `limits`: characters per column (a column past the list: 90), so a table stays as wide as the UI's cell.
    `escaped`: the caller escaped the other cells itself (md_cell with its own limits, md_code), so they are
    taken as they are."""
    rows = list(rows)
    if not rows:
        return empty

    def cell(i: int, c: Any) -> str:
        if isinstance(c, Link):
            return escape.md_link(c, url_limit, breaks=True, fine=True)
        if escaped:
            return str(c)
        limit = limits[i] if i < len(limits) else None
        return breakable(md_cell(c, 90 if limit is None else limit))

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows[:max_rows]:
        lines.append("| " + " | ".join(cell(i, c) for i, c in enumerate(row)) + " |")
    if len(rows) > max_rows:
        lines.append(f"\n_…and {len(rows) - max_rows} more ({more})_")
    return "\n".join(lines)


def md_code_block(text: str, info: str = "") -> str:
    """A fenced code block that the text cannot close: the fence is longer than any backtick run in it. Page
    text inside (diffs) has its control and bidi characters shown as U+FFFD, like every report."""
    text = replaced(text)
    longest = max((len(m.group()) for m in _BACKTICK_RUN_RE.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def markdown_list(items: Iterable[Any], *, empty: str = "_(none)_") -> str:
    """A bullet list of names (files, scopes), each as a code span unless it could break out of one."""
    lines = [f"- {escape.md_code(item)}" for item in items]
    return "\n".join(lines) or empty
