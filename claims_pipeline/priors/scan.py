r"""Running a digit-led pattern over a page only where a run of digits starts.

The day-first and numeric date patterns (priors/dates.py) begin with a look-behind that refuses a digit
before the match, so a match can only start at the first digit of a run. Trying them there, instead of
letting finditer test every character of a page that is mostly words, finds the same matches for less CPU
per page (benchmarks/README.md); an audit tokenises every cited page once (100k claims cite 20k pages). NUMBER_RE gains nothing
from it: its leading (?=\d) already lets the regex engine skip ahead."""

from __future__ import annotations

import re
from collections.abc import Iterator

_DIGIT_RUN_RE = re.compile(r"\d+")  # a match is a whole run (greedy; the next search starts past it)


def digit_starts(text: str) -> list[int]:
    """Where each run of digits in text starts. (A pattern that starts with a character class lets the regex
    engine skip ahead to the next digit; "(?<!\\d)\\d" would try its look-behind at every character.)"""
    return [m.start() for m in _DIGIT_RUN_RE.finditer(text)]


def finditer_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """pattern.finditer(text) for a pattern that can only match from one of `starts` (sorted): matched there,
    a start inside an earlier match skipped, as finditer resumes after a match."""
    end = 0
    for pos in starts:
        if pos >= end and (m := pattern.match(text, pos)):
            end = m.end()
            yield m
