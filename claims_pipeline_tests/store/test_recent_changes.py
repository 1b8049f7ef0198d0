"""Which confirmed changes an audit reports: each once, by the confirming fetch's id against the last report's."""

from __future__ import annotations

import pytest

from claims_pipeline.store.records import PageState
from claims_pipeline.store.recent_changes import changed_since, changes_since, reported_through

WATERMARK = 500  # the newest fetch id the last report saw


def page(change_fetch_id: int | None, changed_now: bool = False) -> PageState:
    return PageState("http://a.gov.xa/p", "OK", 200, "html", "", "2026-06-01T09:00:00+00:00", "h", "r", None,
                     changed_now, "2026-04-20T00:00:00+00:00" if change_fetch_id else None, None, None,
                     "2026-05-01T00:00:00+00:00" if change_fetch_id else None, change_fetch_id)


@pytest.mark.parametrize(
    "fetch_id, changed_now, watermark, expected",
    [
        (720, False, WATERMARK, True),  # confirmed after the last report (another fetch, or this audit's own)
        (720, True, WATERMARK, True),
        (480, True, WATERMARK, False),  # the last report saw it: not again, whatever the clocks say
        (500, False, WATERMARK, False),
        (3, False, None, True),  # no report yet: any change the cache knows
        (None, False, WATERMARK, False),  # never changed
        (None, True, WATERMARK, True),  # a state from before confirming fetches were kept: its flag stands
    ],
)
def test_changed_since(fetch_id: int | None, changed_now: bool, watermark: int | None, expected: bool) -> None:
    assert changed_since(page(fetch_id, changed_now), watermark) is expected


def test_changes_since_sets_and_clears_and_keeps_the_rest(tmp_path) -> None:
    pages = {"old": page(400, changed_now=True), "new": page(600), "same": page(None)}
    out = changes_since(pages, WATERMARK)
    assert (out["old"].content_changed, out["new"].content_changed) == (False, True)
    assert out["same"] is pages["same"] and out["new"].diff == pages["new"].diff
    assert reported_through(tmp_path, "1@2026-01-10T09:00:00+00:00") is None
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "reported-through.txt").write_text("500 1@2026-01-10T09:00:00+00:00\n")
    assert reported_through(tmp_path, "1@2026-01-10T09:00:00+00:00") == 500
    assert reported_through(tmp_path, "1@2026-07-01T09:00:00+00:00") is None  # another (rebuilt) cache
