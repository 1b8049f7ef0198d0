"""Small helpers that turn records into Dagster UI metadata (markdown tables, counts, diffs).

Cells hold text from fetched pages (notes, diffs) and the corpus: it is escaped like the report's markdown,
so a hostile page cannot put links, images or HTML into the UI.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import dagster as dg

# the generic helpers are pure and live in report/md_tables.py (the UI summaries use them too); re-exported here
from claims_pipeline.report.md_tables import (  # noqa: F401
    MAX_TABLE_ROWS,
    Link,
    markdown_list,
    markdown_table,
    md_cell,
    md_code_block,
    prose,
    where,
)


def md_table(headers: list[str], rows: Iterable[list[Any]], *, empty: str = "_(none)_") -> dg.MetadataValue:
    return dg.MetadataValue.md(markdown_table(headers, rows, empty=empty))


def md_list(items: Iterable[Any], *, empty: str = "_(none)_") -> dg.MetadataValue:
    """A bullet list of names (files, scopes), each as a code span unless it could break out of one."""
    return dg.MetadataValue.md(markdown_list(items, empty=empty))


def counts(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))
