"""Small helpers that turn records into Dagster UI metadata (markdown tables, counts, diffs).

Bounded: a table or list shows its first MAX_TABLE_ROWS rows, then how many more and where the full table is,
so a materialization of a 100k-claim, 1,000-scope audit stays a few tens of kB (tests/scale).

Cells hold text from fetched pages (notes, diffs) and the corpus: it is escaped like the report's markdown,
so a hostile page cannot put links, images or HTML into the UI.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import dagster as dg

# the generic helpers are pure and live in report/md_tables.py (the UI summaries use them too)
from claims_pipeline.report.md_tables import MAX_TABLE_ROWS, markdown_list, markdown_table

# Characters a cell keeps in the UI's tables, so a table of four or five columns fits the metadata cell (about
# 900 px; the browser test measures it): long text is cut with '…', and the report has it whole.
WHERE_LIMIT, CLAIM_LIMIT, URL_LIMIT, NOTE_LIMIT = 48, 70, 48, 60
CUT_NOTE = "_long cells cut to fit (…): the report has them whole_"


# Rows a table or list shows: MAX_TABLE_ROWS, or fewer on each scope of a run of many (scoped.py): a monthly run of
# 1,000 scopes writes 6,000 materializations, and at 50 rows each their tables were 99 MB of Dagster history.
_ROWS: ContextVar[int] = ContextVar("ui_table_rows", default=MAX_TABLE_ROWS)


@contextmanager
def table_rows(rows: int) -> Iterator[None]:
    """Within the block, md_table and md_list show at most `rows` rows (then how many more and where they are)."""
    token = _ROWS.set(rows)
    try:
        yield
    finally:
        _ROWS.reset(token)


def shown_rows() -> int:
    """The rows a table shows here (MAX_TABLE_ROWS unless table_rows says fewer)."""
    return _ROWS.get()


def md_table(headers: list[str], rows: Iterable[list[Any]], *, empty: str = "_(none)_",
             full: str | None = None, limits: Sequence[int | None] = (), cut_note: bool = False,
             note: str = "") -> dg.MetadataValue:
    """At most MAX_TABLE_ROWS rows, then how many more and, when given, where the full table is (`full`).
    `limits`: characters per column (URLs: URL_LIMIT, wrapping between segments); `cut_note` says under a table
    of claims that long cells are cut; `note` (markdown) follows a table that has rows."""
    more = f"the full table: {full}" if full else "see the stored files / report"
    rows = list(rows)
    text = markdown_table(headers, rows, empty=empty, max_rows=shown_rows(), more=more, url_limit=URL_LIMIT,
                          limits=limits)
    notes = [n for n in (note, CUT_NOTE if cut_note else "") if n and rows]
    return dg.MetadataValue.md("\n\n".join([text, *notes]))


HOME_MARK = "<home>"


def home_path(path: Path | str, home: Path | str | None) -> dg.MetadataValue:
    """A file or folder under the home as '<home>/reports/…' (plain text; the `home` entry is the whole home, to
    copy), so a metadata cell stays narrow: a report file's whole path is over 100 characters in a temporary
    home and, one unbreakable word, set the metadata panel's width. Elsewhere the whole path."""
    if home is not None:
        try:
            return dg.MetadataValue.text(f"{HOME_MARK}/{Path(path).relative_to(home).as_posix()}")
        except ValueError:
            pass
    return dg.MetadataValue.path(str(path))


def full_path(value: object, home: object) -> str:
    """A path home_path wrote, whole again: '<home>/…' under the `home` entry's folder (other values as they are)."""
    text = str(value)
    if text.startswith(HOME_MARK + "/") and home:
        return str(Path(str(home)) / text[len(HOME_MARK) + 1:])
    return text


def home_entry(home: Path | str) -> dict[str, dg.MetadataValue]:
    """The `home` entry that the '<home>/…' values are relative to."""
    return {"home": dg.MetadataValue.path(str(home))}


def md_list(items: Iterable[Any], *, empty: str = "_(none)_") -> dg.MetadataValue:
    """A bullet list of names (files, scopes), each as a code span unless it could break out of one; at most
    MAX_TABLE_ROWS of them (shown_rows()), then how many more."""
    items, limit = list(items), shown_rows()
    text = markdown_list(items[:limit], empty=empty)
    if len(items) > limit:
        text += f"\n\n_…and {len(items) - limit} more_"
    return dg.MetadataValue.md(text)


MAX_DIFFS = 10  # changed pages whose diff a scope's page_changes shows; the report shows every one
MAX_DIFF_LINES = 60


# characters of a diff line in the UI (a code block never wraps by itself; 52 fit beside the keys in a 1500 px
# window); the report's diffs are whole
DIFF_WIDTH = 52


def wrapped_diff_lines(text: str, width: int = DIFF_WIDTH) -> list[str]:
    """A diff's lines folded at `width` characters (at a space when there is one); each continuation keeps its
    line's +/- mark and is indented, so the folded diff still reads as a diff."""
    out: list[str] = []
    for line in text.splitlines():
        mark = line[:1] if line[:1] in "+- " and not line.startswith(("+++", "---")) else ""
        while len(line) > width:
            cut = line.rfind(" ", len(mark) + 1, width)
            cut = cut if cut > len(mark) else width
            out.append(line[:cut])
            line = f"{mark}  {line[cut:].lstrip()}"
        out.append(line)
    return out


def shown_diffs() -> tuple[int, int]:
    """(diffs, lines each) a scope's page_changes shows: MAX_DIFFS of MAX_DIFF_LINES, or 2 of 20 on each scope of a
    run of many (table_rows fewer than MAX_TABLE_ROWS); the report has every diff whole."""
    return (MAX_DIFFS, MAX_DIFF_LINES) if shown_rows() >= MAX_TABLE_ROWS else (2, 20)


def first_lines(text: str, limit: int = MAX_DIFF_LINES) -> str:
    """A diff folded to fit the UI's cell (wrapped_diff_lines), cut to its first `limit` lines, saying how many
    more the report shows."""
    lines = wrapped_diff_lines(text)
    return "\n".join(lines if len(lines) <= limit else [*lines[:limit], f"… {len(lines) - limit} more lines"])


def first(items: list[Any], limit: int = MAX_TABLE_ROWS) -> list[Any]:
    """A list for JSON metadata: its first `limit` items, then one string saying how many more there are (a
    corpus of 1,000 scopes must not put 1,000 names into every materialization)."""
    return items if len(items) <= limit else [*items[:limit], f"…and {len(items) - limit} more"]


def top_scopes(by_scope: dict[str, int], limit: int = MAX_TABLE_ROWS) -> dict[str, int]:
    """The `limit` scopes with the most (ties by name), in name order."""
    return dict(sorted(sorted(by_scope.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]))


def some_scopes(by_scope: dict[str, int], what: str, limit: int = 20) -> str:
    """'xa: 2 stale_changed; xb: 1 stale_changed' for the scopes with the most, at most `limit` of them, then how
    many more scopes: a check's one-line description, read in the lineage."""
    text = "; ".join(f"{scope}: {n} {what}" for scope, n in top_scopes(by_scope, limit).items())
    return text + (f"; and {len(by_scope) - limit} more scopes" if len(by_scope) > limit else "")


def counts(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))
