"""Which confirmed changes an audit reports: its own fetch's, or one confirmed within report.changed_within_days."""

from __future__ import annotations

import pytest

from claims_pipeline.store.records import PageState
from claims_pipeline.store.recent_changes import is_recent_change, mark_recent_changes

NOW = "2026-06-01T09:00:00+00:00"


def page(confirmed: str | None, changed_now: bool = False) -> PageState:
    return PageState("http://a.gov.xa/p", "OK", 200, "html", "", NOW, "h", "r", None, changed_now,
                     "2026-05-01T00:00:00+00:00" if confirmed else None, None, None, confirmed)


@pytest.mark.parametrize(
    "confirmed, within, expected",
    [
        ("2026-05-02T09:00:00+00:00", 35, True),  # 30 days before
        ("2026-04-27T09:00:00+00:00", 35, True),  # exactly 35 days before
        ("2026-04-27T08:59:59+00:00", 35, False),  # a second older
        ("2026-04-27T10:59:59+02:00", 35, False),  # the same instant in another offset
        ("2026-06-03T00:00:00+00:00", 35, True),  # after the audit's clock (a clock running ahead): recent
        ("2026-05-31T09:00:00+00:00", 0, False),  # 0: only the audit's own fetch
        (None, 35, False),  # never changed
    ],
)
def test_window(confirmed: str | None, within: float, expected: bool) -> None:
    assert is_recent_change(page(confirmed), NOW, within) is expected


def test_own_confirmation_always_counts_and_marking_keeps_the_rest() -> None:
    assert is_recent_change(page(None, changed_now=True), NOW, 0) is True
    pages = {"old": page("2026-01-01T00:00:00+00:00"), "recent": page("2026-05-30T00:00:00+00:00")}
    marked = mark_recent_changes(pages, NOW, 35)
    assert marked["old"] is pages["old"] and marked["recent"].content_changed is True
    assert marked["recent"].diff == pages["recent"].diff and marked["recent"].changed_at == pages["recent"].changed_at
