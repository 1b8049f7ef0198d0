"""An inline SVG stacked bar chart of priors by scope (no JS, no external assets)."""

from __future__ import annotations

import pandas as pd

from claims_pipeline.priors import PRIOR_KINDS
from claims_pipeline.report.escape import h

COLOURS = {
    "TOKENS_PRESENT": "#2e7d32",
    "WEAK_MATCH": "#9e9d24",
    "TOKENS_ABSENT": "#c62828",
    "SOURCE_BINARY": "#6d4c41",
    "PDF_NO_TEXT": "#8e24aa",
    "SOURCE_UNAVAILABLE": "#757575",
}
BAR_H, GAP, LABEL_W, BAR_W, LEGEND_H = 18, 6, 150, 520, 28


def priors_by_scope_svg(priors: pd.DataFrame, max_scopes: int = 60) -> str:
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
    height = LEGEND_H + len(scopes) * (BAR_H + GAP) + GAP + note_h
    width = LABEL_W + BAR_W + 60
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title>Priors by scope</title>'
    ]
    x = 0
    for kind in PRIOR_KINDS:  # legend
        parts.append(f'<rect x="{x}" y="4" width="12" height="12" fill="{COLOURS[kind]}"/>')
        parts.append(f'<text x="{x + 16}" y="14" font-size="11">{h(kind)}</text>')
        x += 16 + 7 * len(kind) + 14
    for i, scope in enumerate(scopes):
        y = LEGEND_H + i * (BAR_H + GAP)
        parts.append(f'<text x="{LABEL_W - 6}" y="{y + 13}" font-size="12" text-anchor="end">{h(scope)}</text>')
        bx = float(LABEL_W)
        total = 0
        for kind in PRIOR_KINDS:
            n = int(counts.loc[scope].get(kind, 0)) if kind in counts.columns else 0
            if not n:
                continue
            w = BAR_W * n / widest
            parts.append(
                f'<rect x="{bx:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{COLOURS[kind]}">'
                f"<title>{h(scope)}: {h(kind)} {n}</title></rect>"
            )
            bx += w
            total += n
        parts.append(f'<text x="{bx + 4:.1f}" y="{y + 13}" font-size="11">{total}</text>')
    if left_out:
        y = LEGEND_H + len(scopes) * (BAR_H + GAP) + 14
        parts.append(f'<text x="0" y="{y}" font-size="11">{left_out} more scope{"s" if left_out > 1 else ""} '
                     f"not drawn (fewest figures absent): every scope is in the tables</text>")
    parts.append("</svg>")
    return "".join(parts)
