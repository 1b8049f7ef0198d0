"""The page-changes step, per scope: the cited pages whose confirmed change the audit reports (with the text
diff), and the claims whose page changed after they were last verified (stale_changed: re-verify those first)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa

from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.stored import StoredStep


@dataclass(frozen=True)
class ChangedPage:
    url: str
    changed_at: str | None
    diff: str | None


@dataclass(frozen=True)
class StaleClaim:
    id: str
    file: str
    line_no: int
    claim: str
    url: str
    last_verified: str | None
    changed_at: str | None


@dataclass(frozen=True)
class ScopeChanges:
    changed_pages: list[ChangedPage]
    stale_changed: list[StaleClaim]

    def stale_ids(self) -> set[str]:
        return {c.id for c in self.stale_changed}

    def to_json(self) -> dict[str, Any]:
        return {"changed_pages": [asdict(c) for c in self.changed_pages],
                "stale_changed": [asdict(c) for c in self.stale_changed]}

    @classmethod
    def from_json(cls, data: Any) -> ScopeChanges:
        return cls([ChangedPage(**c) for c in data.get("changed_pages", [])],
                   [StaleClaim(**c) for c in data.get("stale_changed", [])])


_str = pa.string()
PAGE_CHANGES = StoredStep("page_changes", ScopeChanges, pa.struct([
    ("changed_pages", pa.list_(pa.struct([("url", _str), ("changed_at", _str), ("diff", _str)]))),
    ("stale_changed", pa.list_(pa.struct([
        ("id", _str), ("file", _str), ("line_no", pa.int64()), ("claim", _str), ("url", _str),
        ("last_verified", _str), ("changed_at", _str)])))]))


def page_changes_by_scope(claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages]) -> dict[str, ScopeChanges]:
    """Per scope: cited pages whose change the audit reports, and the claims whose page changed after they were
    last verified (stale_changed, the audit's rule)."""
    from claims_pipeline.report.audit import is_stale_changed

    out: dict[str, ScopeChanges] = {}
    for scope, pages in fetched_pages.items():
        changed = {u: p for u, p in pages.pages.items() if p.content_changed}
        stale = []
        scope_claims = claims.get(scope)
        for c in scope_claims.records() if scope_claims is not None else []:
            page = pages.pages.get(c.source_url)
            if page and is_stale_changed(c.last_verified, page.changed_at, bool(page.content_changed)):
                stale.append(StaleClaim(c.id, c.file, c.line_no, c.claim_text, c.source_url, c.last_verified,
                                        page.changed_at))
        out[scope] = ScopeChanges([ChangedPage(u, p.changed_at, p.diff) for u, p in sorted(changed.items())], stale)
    return out
