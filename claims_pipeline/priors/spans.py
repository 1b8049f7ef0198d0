"""A set of text spans answering "is [start, end) inside one of them?" in O(log n)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable


class SpanSet:
    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for s, e in sorted(spans):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)  # overlapping spans merge (containment is preserved)
            else:
                merged.append([s, e])
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]

    def covers(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        return i >= 0 and end <= self._ends[i]
