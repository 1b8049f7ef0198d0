"""JSON shapes of the per-scope values, and back (records from the core, plain dicts in the store)."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from claims_pipeline.corpus.records import ClaimRecord
from claims_pipeline.store.records import PageState

_PAGE_FIELDS = {f.name for f in fields(PageState)}


def page_to_json(page: PageState) -> dict[str, Any]:
    """The page state without its text: the text stays in the cache's blobs, addressed by text_hash."""
    d = asdict(page)
    d.pop("text", None)
    return d


def page_from_json(d: dict[str, Any], cache: Any | None = None) -> PageState:
    data = {k: v for k, v in d.items() if k in _PAGE_FIELDS}
    data["text"] = cache.text(d.get("text_hash")) if cache is not None and d.get("text_hash") else None
    return PageState(**data)


def claims_from_json(rows: list[dict[str, Any]]) -> list[ClaimRecord]:
    return [ClaimRecord.from_dict(r) for r in rows]
