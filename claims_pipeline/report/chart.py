"""The stacked bar chart of priors by scope: its geometry (templates/priors_chart.svg.j2 draws it as inline SVG)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from claims_pipeline.priors import PRIOR_KINDS
from claims_pipeline.report.html_templates import render

COLOURS = {
    "TOKENS_PRESENT": "#2e7d32",
    "WEAK_MATCH": "#9e9d24",
    "TOKENS_ABSENT": "#c62828",
    "SOURCE_BINARY": "#6d4c41",
    "PDF_NO_TEXT": "#8e24aa",
    "SOURCE_UNAVAILABLE": "#757575",
}
BAR_H, GAP, LABEL_W, BAR_W, LEGEND_H = 18, 6, 150, 520, 28


@dataclass(frozen=True)
class Swatch:
    """A legend entry: a colour square at x, its label after it."""

    x: int
    colour: str
    label: str

    @property
    def label_x(self) -> int:
        return self.x + 16


def legend(entries: Iterable[tuple[str, str]]) -> list[Swatch]:
    """(label, colour) pairs laid out left to right, each as wide as its label."""
    out, x = [], 0
    for label, colour in entries:
        out.append(Swatch(x, colour, label))
        x += 16 + 7 * len(label) + 14
    return out


@dataclass(frozen=True)
class Segment:
    """One prior's part of a scope's bar (x and width as drawn, to a tenth)."""

    x: str
    width: str
    colour: str
    kind: str
    n: int


@dataclass(frozen=True)
class ScopeBar:
    scope: str
    y: int
    segments: list[Segment]
    total: int
    total_x: str  # where the scope's count is written, after its bar

    @property
    def text_y(self) -> int:
        return self.y + 13


@dataclass(frozen=True)
class PriorsChart:
    width: int
    height: int
    legend: list[Swatch]
    bars: list[ScopeBar]
    left_out: int  # scopes not drawn
    label_x: int = LABEL_W - 6
    bar_h: int = BAR_H

    @property
    def note_y(self) -> int:
        return LEGEND_H + len(self.bars) * (BAR_H + GAP) + 14


def priors_chart(priors: pd.DataFrame, max_scopes: int = 60) -> PriorsChart:
    counts = priors.groupby(["scope", "prior"]).size().unstack(fill_value=0) if len(priors) else pd.DataFrame()
    scopes = sorted(counts.index.tolist())
    totals = counts.sum(axis=1)  # claims per scope
    left_out = max(0, len(scopes) - max_scopes)
    if left_out:  # the scopes with the most figures absent stay (then the most claims), in name order
        absent = counts["TOKENS_ABSENT"] if "TOKENS_ABSENT" in counts.columns else pd.Series(0, index=counts.index)
        kept = set(sorted(scopes, key=lambda s: (-int(absent.get(s, 0)), -int(totals[s]), s))[:max_scopes])
        scopes = [s for s in scopes if s in kept]
    widest = max((int(totals[s]) for s in scopes), default=1) or 1
    note_h = 20 if left_out else 0
    bars = []
    for i, scope in enumerate(scopes):
        bx = float(LABEL_W)
        segments = []
        for kind in PRIOR_KINDS:
            n = int(counts.loc[scope].get(kind, 0)) if kind in counts.columns else 0
            if not n:
                continue
            w = BAR_W * n / widest
            segments.append(Segment(f"{bx:.1f}", f"{w:.1f}", COLOURS[kind], kind, n))
            bx += w
        bars.append(ScopeBar(str(scope), LEGEND_H + i * (BAR_H + GAP), segments, sum(s.n for s in segments),
                             f"{bx + 4:.1f}"))
    return PriorsChart(width=LABEL_W + BAR_W + 60, height=LEGEND_H + len(scopes) * (BAR_H + GAP) + GAP + note_h,
                       legend=legend((kind, COLOURS[kind]) for kind in PRIOR_KINDS), bars=bars, left_out=left_out)


def priors_by_scope_svg(priors: pd.DataFrame, max_scopes: int = 60) -> str:
    return render("priors_chart.svg.j2", priors_chart=priors_chart(priors, max_scopes))
