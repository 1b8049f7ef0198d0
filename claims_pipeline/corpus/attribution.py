"""Nearest-link attribution: each value goes to the citation closest to it on the line.

Same keys as the earlier verifier (overlap first; then distance, a FOLLOWING link winning ties, the
`figure ([source](url))` idiom; then lower index), found with a binary search instead of a scan of every
link, so a pathological line with thousands of links and figures stays near-linear.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Protocol, TypeVar


class _Span(Protocol):
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class _Positioned(Protocol):
    @property
    def pos(self) -> int: ...
    @property
    def end(self) -> int: ...


V = TypeVar("V", bound=_Positioned)


def attribute_values(values: Sequence[V], links: Sequence[_Span]) -> list[list[V]]:
    """For links sorted by start and not overlapping each other: the values each link gets."""
    if not links:
        return []
    if len(links) == 1:
        return [list(values)]
    starts = [ln.start for ln in links]
    out: list[list[V]] = [[] for _ in links]
    for v in values:
        after = bisect_left(starts, v.end)  # first link starting at or after the value's end
        best: tuple[int, int, int] | None = None
        if after < len(links):
            best = (links[after].start - v.end, 0, after)
        k = after - 1  # the last link starting before the value ends: overlapping, or the nearest before
        if k >= 0:
            ln = links[k]
            key = (0, 0, k) if ln.end > v.pos else (v.pos - ln.end, 1, k)
            if best is None or key < best:
                best = key
        assert best is not None
        out[best[2]].append(v)
    return out
