"""Which confirmed page changes an audit reports as CONTENT_CHANGED.

A page's change is confirmed by whichever fetch sees the new text the second time. That may be the audit's own
fetch, or one in between: a one-scope rematerialization of another country citing the same page, or
`claims-pipeline fetch URL`. Counting only the audit's own confirmations lost those: the next monthly audit
fetched the page unchanged and never flagged it. So an audit reports a change confirmed by its own fetch or
within report.changed_within_days before it. Rematerializing the same audit gives the same answer, which a
rule of "new since the previous audit" would not.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from claims_pipeline.store.clock import to_utc
from claims_pipeline.store.records import PageState


def is_recent_change(page: PageState, now: datetime | str, within_days: float) -> bool:
    """Confirmed by this run's fetch, or confirmed at most within_days before now (a later date, from a clock
    that runs ahead, counts as recent)."""
    if page.content_changed:
        return True
    confirmed = to_utc(page.change_confirmed_at)
    if confirmed is None or within_days <= 0:
        return False
    return confirmed >= to_utc(now) - timedelta(days=within_days)


def mark_recent_changes(pages: dict[str, PageState], now: datetime | str, within_days: float) -> dict[str, PageState]:
    """The same states, content_changed set on every page whose change is recent (see is_recent_change)."""
    return {
        url: replace(p, content_changed=True) if not p.content_changed and is_recent_change(p, now, within_days) else p
        for url, p in pages.items()
    }
