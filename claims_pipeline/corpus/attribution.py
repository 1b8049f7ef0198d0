"""Nearest-link attribution: each value goes to the citation closest to it on the line.

The reference keys (docs/decisions/0001: overlap first; then distance, a FOLLOWING link winning ties, the
`figure ([source](url))` idiom; then lower index), found with a binary search instead of a scan of every
link, so a pathological line with thousands of links and figures stays near-linear.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import Protocol, TypeVar

from claims_pipeline.corpus.values import WORD_MONTHS


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


# Where a sentence ends on a line: '.', '!', '?' or ';' before a space (footnote markers may follow the mark:
# "in 2024.[^3] Prices"), or a table cell's bar. A German ordinal day ("1. Juli 2025") ends nothing.
_SENTENCE_END_RE = re.compile(r"[.!?;](?:\[\^[^\[\]\n]{1,200}\])*(?=\s|$)|\|")
_ORDINAL_DAY_RE = re.compile(rf"(?<![\d.,])\d{{1,2}}\.\s+(?i:{'|'.join(sorted(WORD_MONTHS, key=len, reverse=True))})\b")
_CLOSED_BEFORE_RE = re.compile(r"[.!?;][*_\"'’”)]*(?:\[\^[^\[\]\n]{1,200}\][*_\"'’”)]*)*$")


# Words whose '.' ends no sentence: "12,5 Mrd. Euro", "Art. 47", "approx. 5 %", "z. B.", "ca. 3 %".
_ABBREVIATIONS = frozenset(
    "mrd mio tsd nr no art abs bzw ca vgl inkl zzgl ggf std dr prof approx etc vs cap chap reg sec st p pp fig "
    "cf env av al e.g i.e z.b u.a d.h eur chf usd bn mn m k".split())
_WORD_BEFORE_RE = re.compile(r"([\w.]{1,8})$")


def _abbreviation(line: str, dot: int) -> bool:
    m = _WORD_BEFORE_RE.search(line, max(0, dot - 8), dot)
    return m is not None and m.group(1).lower().lstrip(".") in _ABBREVIATIONS


def _ordinal_day(line: str, dot: int) -> bool:
    return any(_ORDINAL_DAY_RE.match(line, dot - k) for k in (1, 2) if dot - k >= 0)


def sentence_ends(line: str) -> tuple[list[int], list[int]]:
    """The starts and the ends of the line's sentence ends, in order (no two overlap)."""
    starts: list[int] = []
    ends: list[int] = []
    for m in _SENTENCE_END_RE.finditer(line):
        if not (line[m.start()] == "." and m.end() == m.start() + 1
                and (_ordinal_day(line, m.start()) or _abbreviation(line, m.start()))):
            starts.append(m.start())
            ends.append(m.end())
    return starts, ends


def sentence_span(line: str, start: int, end: int,
                  found: tuple[list[int], list[int]] | None = None) -> tuple[int, int]:
    """The span of the sentence a footnote marker at [start, end) belongs to: the one it closes when it follows
    the sentence's end mark ("… 9.4 % in 2024.[^4]"), else the one it stands in ("… 5,5 Millionen[^ba]. …").
    `found`: sentence_ends(line), found once for all the markers of a line."""
    starts, ends = sentence_ends(line) if found is None else found
    closed = _CLOSED_BEFORE_RE.search(line, max(0, start - 400), start)
    if closed is not None:
        k = bisect_left(starts, closed.start())  # the ends before the mark that closes the sentence
        return (ends[k - 1] if k else 0), start
    k = bisect_left(starts, start)
    lo = min(ends[k - 1], start) if k else 0
    j = bisect_left(starts, end)
    return lo, (starts[j] if j < len(starts) else len(line))
