"""Small helpers that turn records into Dagster UI metadata (markdown tables, counts)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

import dagster as dg

MAX_TABLE_ROWS = 50  # the UI stays readable; the full lists are in the stored files and the report


def md_cell(value: Any, limit: int = 90) -> str:
    text = " ".join(str(value if value is not None else "").split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "/")


def md_table(headers: list[str], rows: Iterable[list[Any]], *, empty: str = "_(none)_") -> dg.MetadataValue:
    rows = list(rows)
    if not rows:
        return dg.MetadataValue.md(empty)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows[:MAX_TABLE_ROWS]:
        lines.append("| " + " | ".join(md_cell(c) for c in row) + " |")
    if len(rows) > MAX_TABLE_ROWS:
        lines.append(f"\n_…and {len(rows) - MAX_TABLE_ROWS} more (see the stored files / report)_")
    return dg.MetadataValue.md("\n".join(lines))


def counts(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def json_md(data: dict[str, Any]) -> dg.MetadataValue:
    return dg.MetadataValue.json(data)
