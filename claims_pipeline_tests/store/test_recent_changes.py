"""Which confirmed changes an audit reports: those confirmed since the previous audit's run, once."""

from __future__ import annotations

import pytest

from claims_pipeline.store.records import PageState
from claims_pipeline.store.recent_changes import changed_since, changes_since, previous_audit_run

PREVIOUS = "2026-05-01T09:00:00+00:00"


def page(confirmed: str | None, changed_now: bool = False) -> PageState:
    return PageState("http://a.gov.xa/p", "OK", 200, "html", "", "2026-06-01T09:00:00+00:00", "h", "r", None,
                     changed_now, "2026-04-20T00:00:00+00:00" if confirmed else None, None, None, confirmed)


@pytest.mark.parametrize(
    "confirmed, changed_now, since, expected",
    [
        ("2026-05-20T09:00:00+00:00", False, PREVIOUS, True),  # confirmed between the audits (another fetch)
        ("2026-06-01T09:00:00+00:00", True, PREVIOUS, True),  # confirmed by this audit's own fetch
        ("2026-04-30T09:00:00+00:00", True, PREVIOUS, False),  # reported by the previous audit: not again
        ("2026-05-01T09:00:00+00:00", False, PREVIOUS, False),  # at the previous run itself
        ("2026-05-01T11:00:01+02:00", False, PREVIOUS, True),  # one second later, in another offset
        ("2026-01-01T00:00:00+00:00", False, None, True),  # no audit yet: any change the cache knows
        (None, False, PREVIOUS, False),  # never changed
        (None, True, PREVIOUS, True),  # a state from before confirmation times were kept: its flag stands
    ],
)
def test_changed_since(confirmed: str | None, changed_now: bool, since: str | None, expected: bool) -> None:
    assert changed_since(page(confirmed, changed_now), since) is expected


def test_changes_since_sets_and_clears_and_keeps_the_rest(tmp_path) -> None:
    pages = {"old": page("2026-04-01T00:00:00+00:00", changed_now=True), "new": page("2026-05-30T00:00:00+00:00"),
             "same": page(None)}
    out = changes_since(pages, PREVIOUS)
    assert (out["old"].content_changed, out["new"].content_changed) == (False, True)
    assert out["same"] is pages["same"] and out["new"].diff == pages["new"].diff
    assert previous_audit_run(tmp_path) is None
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "last-run.txt").write_text(PREVIOUS + "\n")
    assert previous_audit_run(tmp_path) == PREVIOUS
