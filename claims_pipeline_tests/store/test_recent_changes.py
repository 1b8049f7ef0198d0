"""Which confirmed changes an audit reports: each once, by the ledger of what written reports showed."""

from __future__ import annotations

from claims_pipeline.store.recent_changes import (
    ReportedChanges,
    load_reported,
    save_reported,
    shown_in_last_report,
    unreported,
    with_report,
)
from claims_pipeline.store.records import PageState

CACHE = "1@2026-01-10T09:00:00+00:00"


def page(change_fetch_id: int | None, confirmed: str = "2026-05-01T00:00:00+00:00") -> PageState:
    return PageState("http://a.gov.xa/p", "OK", 200, "html", "", "2026-06-01T09:00:00+00:00", "h", "r", None,
                     False, "2026-04-20T00:00:00+00:00" if change_fetch_id else None, None, None,
                     confirmed if change_fetch_id else None, change_fetch_id)


def test_a_change_is_unreported_until_a_written_report_covered_its_page(tmp_path) -> None:
    ledger = load_reported(tmp_path, CACHE)  # no ledger, no earlier report: every confirmed change is new
    assert unreported(page(7), "p", ledger) and not unreported(page(None), "p", ledger)
    ledger = with_report(ledger, {"p": 7, "q": 3}, {"p"}, "2026-06-01T09:00:00+00:00")
    save_reported(tmp_path, ledger)
    again = load_reported(tmp_path, CACHE)
    assert not unreported(page(7), "p", again) and not unreported(page(3), "q", again)  # once
    assert unreported(page(9), "p", again)  # a later change of the same page
    assert unreported(page(5), "r", again)  # a page no report covered: its change is not lost
    assert shown_in_last_report(page(7), "p", again, "2026-06-01T09:00:00+00:00")
    assert not shown_in_last_report(page(3), "q", again, "2026-06-01T09:00:00+00:00")  # covered, not shown
    # the next report covers p again with the same change: the record keeps the report that showed it
    later = with_report(again, {"p": 7}, set(), "2026-07-01T09:00:00+00:00")
    assert later.changes["p"] == (7, "2026-06-01T09:00:00+00:00")
    assert unreported(page(7), "p", load_reported(tmp_path, "1@2026-09-01T00:00:00+00:00"))  # a rebuilt cache


def test_an_upgrade_from_before_the_ledger_repeats_nothing(tmp_path) -> None:
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "last-run.txt").write_text("2026-06-01T09:00:00+00:00\n")
    ledger = load_reported(tmp_path, CACHE)
    assert ledger.before_ledger == "2026-06-01T09:00:00+00:00"
    assert not unreported(page(7, confirmed="2026-05-20T00:00:00+00:00"), "p", ledger)  # the old report showed it
    assert unreported(page(8, confirmed="2026-06-02T00:00:00+00:00"), "p", ledger)
    assert ReportedChanges(CACHE).before_ledger is None


def test_a_page_changed_twice_before_a_report_shows_both_changes_in_its_diff(tmp_path) -> None:
    """Each change keeps only its own diff (B → C): the report would show the second change alone, and a figure
    the first one changed (A → B) would go unseen. The page carries the diff from the text the last report saw."""
    from dataclasses import replace

    from claims_pipeline.store.recent_changes import changes_since_report, with_diffs_since_report
    from claims_pipeline_tests.store.helpers import day, make_cache, ok

    url = "http://a.gov.xa/levy"
    cache = make_cache(tmp_path)
    texts = ["intro\nlevy 0.8 %\nfee €100\nend", "intro\nlevy 1.1 %\nfee €100\nend", "intro\nlevy 1.1 %\nfee €250\nend"]
    n = 0
    for text in texts:
        for _ in range(2):  # seen twice: the second sighting confirms the change
            n += 1
            cache.record(ok(url, text), now=day(n))
    state = cache.states([url])[url]
    rows = cache.changes(url)
    assert len(rows) == 2 and rows[-1].fetch_id == state.change_fetch_id and "0.8" not in state.diff  # B → C only
    page_now = replace(state, content_changed=True)

    never = ReportedChanges(CACHE)  # no report covered the page: both changes are new
    shown = with_diffs_since_report({url: page_now}, {url: url}, never, cache)[url]
    assert shown.diff.startswith("2 changes since a report last covered this page")
    assert "-levy 0.8 %" in shown.diff and "+levy 1.1 %" in shown.diff and "+fee €250" in shown.diff
    assert "-levy 1.1 %" not in shown.diff  # A → C, not the two diffs one after the other

    first_reported = with_report(never, {url: rows[0].fetch_id}, {url}, "2026-03-03T00:00:00+00:00")
    assert changes_since_report(cache, url, first_reported) == rows[1:]
    assert with_diffs_since_report({url: page_now}, {url: url}, first_reported, cache)[url] is page_now  # one: as stored
    unchanged = replace(state, content_changed=False)
    assert with_diffs_since_report({url: unchanged}, {url: url}, never, cache)[url] is unchanged
    cache.close()
