"""The last audits side by side: flagged, stale_changed and unreadable per audit, so a reader of report.html sees
whether things get better.

Each written report adds one line to <reports>/history.jsonl (run time and headline numbers, under the audit lock
that publish_report holds). A report folder the file does not name (written by a version before it) is read
from its own report.json, when that file is small enough to read in passing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from claims_pipeline.report.chart import Swatch, legend
from claims_pipeline.report.html_templates import render
from claims_pipeline.report.sections import utc_time
from claims_pipeline.store.files import write_text_atomically

log = logging.getLogger(__name__)

HISTORY_FILE = "history.jsonl"
MAX_AUDITS = 12  # audits the chart shows, this one included
MAX_REPORT_JSON_BYTES = 5_000_000  # an older report.json read for its headline; a larger one is left out
UNREADABLE_PRIORS = ("SOURCE_UNAVAILABLE", "PDF_NO_TEXT", "SOURCE_BINARY")
SERIES = (("flagged", "flagged", "#c62828"), ("stale_changed", "stale_changed", "#ad1457"),
          ("unreadable", "unreadable sources", "#757575"))


@dataclass(frozen=True)
class AuditPoint:
    run_at: str
    total: int
    flagged: int
    stale_changed: int
    unreadable: int


_FIELDS = {f.name for f in fields(AuditPoint)}


def point_of(run_at: str, headline: Mapping[str, Any]) -> AuditPoint:
    by_prior = headline.get("by_prior") or {}
    return AuditPoint(run_at=str(run_at), total=int(headline.get("total") or 0), flagged=int(headline.get("flagged") or 0),
                      stale_changed=int(headline.get("stale_changed") or 0),
                      unreadable=sum(int(by_prior.get(p) or 0) for p in UNREADABLE_PRIORS))


def _ledger_points(reports_dir: Path) -> dict[str, AuditPoint]:
    out: dict[str, AuditPoint] = {}
    try:
        lines = (reports_dir / HISTORY_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    damaged: list[int] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            point = _point_record(json.loads(line))
        except ValueError:  # JSONDecodeError is one
            point = None
        if point is None:  # a damaged line: the others still count
            damaged.append(no)
            continue
        out[point.run_at] = point
    if damaged:
        more = f" and {len(damaged) - 1} more" if len(damaged) > 1 else ""
        log.warning("%s:%d%s: not an audit's record (damaged?); left out of the audits side by side (the next report "
                    "rewrites the file without it)", reports_dir / HISTORY_FILE, damaged[0], more)
    return out


def _point_record(data: object) -> AuditPoint | None:
    """The line's AuditPoint, or None when it is not one: every field present, of its type (a run time that is a
    number, or a count that is a string, would stop the sorting or the chart of every later report)."""
    if not isinstance(data, dict) or set(data) != _FIELDS:
        return None
    if not isinstance(data["run_at"], str):
        return None
    if any(type(data[key]) is not int or data[key] < 0 for key in _FIELDS - {"run_at"}):
        return None
    return AuditPoint(**data)


def _report_points(reports_dir: Path, known: set[str]) -> dict[str, AuditPoint]:
    """Report folders the ledger does not name, from their report.json (run_at and headline)."""
    out: dict[str, AuditPoint] = {}
    if not reports_dir.is_dir():
        return out
    for doc in sorted(reports_dir.glob("*/report.json")):
        try:
            if doc.stat().st_size > MAX_REPORT_JSON_BYTES:
                continue
            data = json.loads(doc.read_text(encoding="utf-8"))
            run_at = str(data["run_at"])
            if run_at not in known:
                out[run_at] = point_of(run_at, data.get("headline") or {})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # AttributeError: a headline not a mapping
            continue
    return out


def audit_history(reports_dir: Path, current: AuditPoint, limit: int = MAX_AUDITS) -> list[AuditPoint]:
    """The audits before `current` (by run time), then `current`: at most `limit` in all, oldest first."""
    points = _ledger_points(reports_dir)
    points.update(_report_points(reports_dir, set(points)))
    earlier = sorted((p for p in points.values() if p.run_at < current.run_at), key=lambda p: p.run_at)
    return [*earlier[-(limit - 1):], current] if limit > 1 else [current]


def record(reports_dir: Path, point: AuditPoint) -> None:
    """Add this audit to the ledger (once: the same audit rendered again keeps its line)."""
    points = _ledger_points(reports_dir)
    if points.get(point.run_at) == point:
        return
    points[point.run_at] = point
    lines = [json.dumps(asdict(p), sort_keys=True) for p in sorted(points.values(), key=lambda p: p.run_at)]
    reports_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomically(reports_dir / HISTORY_FILE, "\n".join(lines) + "\n")


BAR_W, GROUP_GAP, CHART_H, TOP, BOTTOM, LEFT = 16, 22, 120, 34, 40, 8


@dataclass(frozen=True)
class HistoryBar:
    x: int
    y: float
    height: float
    colour: str
    label: str
    n: int
    width: int = BAR_W - 2

    @property
    def centre(self) -> float:
        return self.x + self.width / 2

    @property
    def number_y(self) -> float:
        """Where the bar's number is written, just above it."""
        return self.y - 3


@dataclass(frozen=True)
class AuditGroup:
    when: str  # the audit's run time, 'YYYY-MM-DD HH:MM:SS UTC'
    bars: list[HistoryBar]
    centre: float


@dataclass(frozen=True)
class HistoryChart:
    width: int
    height: int
    base: int  # the bars' baseline
    legend: list[Swatch]
    groups: list[AuditGroup]

    @property
    def day_y(self) -> int:
        return self.base + 14

    @property
    def time_y(self) -> int:
        return self.base + 27


def history_chart(points: list[AuditPoint]) -> HistoryChart:
    """Grouped bars, one group per audit (oldest left): flagged, stale_changed, unreadable, each with its number."""
    group_w = len(SERIES) * BAR_W + GROUP_GAP
    base = TOP + CHART_H
    top = max((getattr(p, key) for p in points for key, _, _ in SERIES), default=0) or 1
    groups = []
    for i, p in enumerate(points):
        gx = LEFT + i * group_w
        bars = []
        for j, (key, label, colour) in enumerate(SERIES):
            n = getattr(p, key)
            bh = round(CHART_H * n / top, 1)
            bars.append(HistoryBar(gx + j * BAR_W, base - bh, bh, colour, label, n))
        groups.append(AuditGroup(utc_time(p.run_at), bars, gx + (group_w - GROUP_GAP) / 2))
    return HistoryChart(width=max(LEFT + len(points) * group_w + 8, 420), height=TOP + CHART_H + BOTTOM, base=base,
                        legend=legend((label, colour) for _, label, colour in SERIES), groups=groups)


def history_svg(points: list[AuditPoint]) -> str:
    """The chart as inline SVG (no script, no external asset)."""
    return render("history_chart.svg.j2", history_chart=history_chart(points))


def history_html(points: list[AuditPoint]) -> str:
    """The chart and the same numbers as a table (the table reads without the picture); for a single audit, a note
    that the next ones will show here."""
    return render("history.html.j2", history=points, history_chart=history_chart(points))
