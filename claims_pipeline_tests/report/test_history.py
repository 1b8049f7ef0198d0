"""The last audits side by side in report.html (report/history.py): the ledger, the older report folders it does
not name, the chart and its table."""

from __future__ import annotations

import json
import re
from pathlib import Path

from claims_pipeline.report.history import (
    HISTORY_FILE,
    MAX_REPORT_JSON_BYTES,
    AuditPoint,
    audit_history,
    history_html,
    history_svg,
    point_of,
    record,
)
from claims_pipeline.report.html_report import render_html
from claims_pipeline_tests.report.test_sections import scenario


def _report(reports: Path, folder: str, run_at: str, flagged: int, *, pad: int = 0) -> None:
    (reports / folder).mkdir(parents=True)
    doc = {"run_at": run_at, "headline": {"total": 10, "flagged": flagged, "stale_changed": 1,
                                          "by_prior": {"SOURCE_UNAVAILABLE": 2, "PDF_NO_TEXT": 1, "TOKENS_PRESENT": 7}},
           "padding": "x" * pad}
    (reports / folder / "report.json").write_text(json.dumps(doc), encoding="utf-8")


def test_a_point_counts_every_unreadable_kind_of_source():
    p = point_of("2026-07-01T00:00:00+00:00", {"total": 9, "flagged": 2, "stale_changed": 1,
                                               "by_prior": {"SOURCE_UNAVAILABLE": 3, "PDF_NO_TEXT": 1, "SOURCE_BINARY": 2,
                                                            "TOKENS_ABSENT": 2}})
    assert p == AuditPoint("2026-07-01T00:00:00+00:00", total=9, flagged=2, stale_changed=1, unreadable=6)


def test_history_reads_the_ledger_then_older_reports_and_ends_with_this_audit(tmp_path: Path):
    reports = tmp_path / "reports"
    _report(reports, "20260501T000000", "2026-05-01T00:00:00+00:00", 5)  # before the ledger: read from its report.json
    _report(reports, "20260515T000000", "2026-05-15T00:00:00+00:00", 9, pad=MAX_REPORT_JSON_BYTES)  # too large: left out
    record(reports, AuditPoint("2026-06-01T00:00:00+00:00", 10, 4, 2, 3))
    with (reports / HISTORY_FILE).open("a", encoding="utf-8") as f:
        f.write("{not json\n")  # a damaged line: the others still count
    record(reports, AuditPoint("2026-08-01T00:00:00+00:00", 10, 1, 0, 3))  # a later audit (a clock moved back)
    current = AuditPoint("2026-07-01T00:00:00+00:00", 10, 2, 1, 3)
    history = audit_history(reports, current)
    assert [(p.run_at[:10], p.flagged) for p in history] == [("2026-05-01", 5), ("2026-06-01", 4), ("2026-07-01", 2)]
    assert history[0].unreadable == 3
    assert [p.run_at[:10] for p in audit_history(reports, current, limit=2)] == ["2026-06-01", "2026-07-01"]
    # recorded once, however often the same audit is rendered
    record(reports, current)
    record(reports, current)
    lines = (reports / HISTORY_FILE).read_text(encoding="utf-8").splitlines()
    assert sum(1 for line in lines if "2026-07-01" in line) == 1


def test_the_chart_draws_each_audits_three_bars_to_scale_and_escapes_what_it_reads():
    points = [AuditPoint("2026-05-01T06:00:00+00:00", 10, 8, 4, 2), AuditPoint("2026-06-01T06:00:00+00:00", 10, 2, 0, 2),
              AuditPoint("<script>alert(1)</script>", 10, 0, 0, 0)]
    svg = history_svg(points)
    bars = re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="14" height="([\d.]+)" fill="(#[0-9a-f]+)"><title>([^<]*)</title>', svg)
    assert len(bars) == 9  # three per audit
    heights = {title: float(height) for _, height, _, title in bars}
    assert heights["2026-05-01 06:00:00 UTC: flagged 8"] == 120.0  # the tallest bar: the chart's height
    assert heights["2026-05-01 06:00:00 UTC: stale_changed 4"] == 60.0
    assert heights["2026-06-01 06:00:00 UTC: flagged 2"] == 30.0
    assert "<script" not in svg and "&lt;script&gt;" in svg
    html = history_html(points[:2])
    assert "<th>unreadable sources</th>" in html and "2026-06-01 06:00:00 UTC (this report)" in html
    assert "first audit of this home" in history_html(points[:1])


def test_report_html_shows_the_last_audits_after_the_headline():
    audit, _ = scenario()
    history = [AuditPoint("2026-06-01T09:00:00+00:00", 7, 9, 5, 0), point_of(audit.run_at, audit.headline)]
    html = render_html(audit, None, history)
    assert html.index("<h2>Over time: the last 2 audits</h2>") < html.index("<h2>Priors by scope</h2>")
    assert f"<td>{audit.headline['flagged']}</td>" in html.split("Over time")[1].split("Priors by scope")[0]
    assert "Over time" not in render_html(audit, None)


def test_a_damaged_ledger_line_of_any_shape_is_left_out_and_named(tmp_path: Path, caplog):
    """Valid JSON of the wrong shape stopped every later report (a run time that is a number: TypeError when sorted
    beside the others; a count that is a string: in the chart's maximum)."""
    reports = tmp_path / "reports"
    record(reports, AuditPoint("2026-06-01T00:00:00+00:00", 10, 4, 2, 3))
    good = {"run_at": "2026-06-02T00:00:00+00:00", "total": 10, "flagged": 1, "stale_changed": 0, "unreadable": 0}
    damaged = [{**good, "run_at": 20260603}, {**good, "flagged": "4"}, {**good, "total": None}, [1, 2], None, 7,
               {**good, "extra": 1}, {"run_at": "2026-06-04T00:00:00+00:00"}, {**good, "flagged": True}]
    with (reports / HISTORY_FILE).open("a", encoding="utf-8") as f:
        for doc in damaged:
            f.write(json.dumps(doc) + "\n")
        f.write(json.dumps(good) + "\n")
    _report(reports, "20260505T000000", "2026-05-05T00:00:00+00:00", 5)
    (reports / "20260505T000000" / "report.json").write_text(json.dumps({"run_at": "x", "headline": [1]}), encoding="utf-8")
    current = AuditPoint("2026-07-01T00:00:00+00:00", 10, 2, 1, 3)
    with caplog.at_level("WARNING", logger="claims_pipeline.report.history"):
        history = audit_history(reports, current)
        svg = history_svg(history)
    assert [(p.run_at[:10], p.flagged) for p in history] == [("2026-06-01", 4), ("2026-06-02", 1), ("2026-07-01", 2)]
    assert "<svg" in svg
    assert f"{reports / HISTORY_FILE}:2 and {len(damaged) - 1} more: not an audit's record" in caplog.text
    record(reports, current)  # the next report rewrites the ledger without them
    assert len((reports / HISTORY_FILE).read_text(encoding="utf-8").splitlines()) == 3

