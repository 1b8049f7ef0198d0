"""The text diff kept for a confirmed change: lines removed and added, with a little context, capped.

Cost is bounded whatever the texts are. difflib's SequenceMatcher is quadratic or worse on adversarial input
(many lines drawn from a few values, each under its 1 % autojunk threshold; figures in benchmarks/README.md), so:

1. the common leading and trailing lines are stripped first (linear);
2. the changed region left in the middle goes to difflib when it is at most MAX_EXACT_LINES on each side, and
   difflib's matching is metered (_BudgetedMatcher): past MAX_MATCHING_WORK it is abandoned. An exact diff
   reads like difflib.unified_diff over the whole texts, line numbers counted in the whole texts (autojunk now
   sees only the region, so where a frequent line such as a blank one could go either way it may be placed
   differently);
3. otherwise the diff is approximated in linear time: a header line says so, then the changed region's lines
   found only before (-) and only after (+), each in text order, with no context.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any

MAX_LINE_CHARS = 400  # one PDF "line" can be a whole page; keep the diff readable

# Bounds of the exact diff. SequenceMatcher's cost is its find_longest_match calls, each scanning, for every
# line of an old range, that line's occurrences in the new text; _BudgetedMatcher adds up that bound (O(1) per
# call, from prefix sums) and gives up once it passes MAX_MATCHING_WORK: adversarial regions give up early,
# real edits use a small part of the budget (figures in benchmarks/README.md). MAX_EXACT_LINES caps each side of
# the region on its own: it bounds the linear setup (difflib indexes the new side) and the memory, and is a
# hard stop should difflib ever stop routing its matching through find_longest_match. Page texts run a few
# hundred to a few thousand lines (median ~29 kB), and stripping the common ends leaves only the changed part.
MAX_EXACT_LINES = 10_000
MAX_MATCHING_WORK = 1_000_000

APPROXIMATED = "approximated"  # the word the header of an approximated diff carries


def text_diff(old: str, new: str, *, context_lines: int, max_lines: int) -> str:
    a = [_clip(line) for line in old.splitlines()]
    b = [_clip(line) for line in new.splitlines()]
    # common leading and trailing lines: never part of a hunk beyond its context
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    if not a_mid and not b_mid:
        return ""
    lines = None
    if len(a_mid) <= MAX_EXACT_LINES and len(b_mid) <= MAX_EXACT_LINES:
        lines = _exact(a, b, head, tail, context_lines)
    if lines is not None:
        if len(lines) > max_lines:
            extra = len(lines) - max_lines
            lines = lines[:max_lines] + [f"… ({extra} more diff lines not kept)"]
        return "\n".join(lines)
    return "\n".join(_approximated(a_mid, b_mid, head, max_lines))


def _exact(a: list[str], b: list[str], head: int, tail: int, n: int) -> list[str] | None:
    """difflib.unified_diff(a, b, "before", "after", n=n, lineterm="") run on the changed region and the n
    lines of context around it only; opcodes are shifted so hunk headers count lines in the whole texts.
    None when the matching would cost more than MAX_MATCHING_WORK."""
    lo = max(0, head - n)
    a_win, b_win = a[lo : len(a) - tail + min(n, tail)], b[lo : len(b) - tail + min(n, tail)]
    try:
        groups = list(_BudgetedMatcher(a_win, b_win, MAX_MATCHING_WORK).get_grouped_opcodes(n))
    except _OverBudget:
        return None
    out: list[str] = []
    for group in groups:
        if not out:
            out += ["--- before", "+++ after"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(lo + first[1], lo + last[2])} +{_range(lo + first[3], lo + last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a_win[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a_win[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b_win[j1:j2]]
    return out


def _range(start: int, stop: int) -> str:
    """A unified diff's line range, as difflib writes it (1-based; an empty range names the line before)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if length == 0 else start + 1},{length}"


class _OverBudget(Exception):
    pass


class _BudgetedMatcher(difflib.SequenceMatcher[str]):
    """A SequenceMatcher that raises _OverBudget once its matching has scanned (an upper bound of) more than
    `budget` steps: (old line, new occurrence) pairs, plus one per old line. find_longest_match(alo, ahi, …)
    scans, for each old line in alo..ahi, at most all its entries in b2j (autojunk's popular lines are not in
    b2j); prefix sums of those entry counts price each call in O(1) before it runs."""

    # set by SequenceMatcher.set_seqs (CPython's difflib); typeshed does not declare them
    a: list[str]
    b2j: dict[str, list[int]]

    def __init__(self, a: list[str], b: list[str], budget: int) -> None:
        super().__init__(None, a, b)
        self._budget = budget
        self._spent = 0
        self._cost = [0]
        b2j = self.b2j
        for line in a:
            entries = b2j.get(line)
            self._cost.append(self._cost[-1] + (len(entries) if entries else 0))

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None) -> Any:
        ahi = len(self.a) if ahi is None else ahi
        self._spent += self._cost[ahi] - self._cost[alo] + (ahi - alo) + 1
        if self._spent > self._budget:
            raise _OverBudget
        return super().find_longest_match(alo, ahi, blo, bhi)


def _approximated(a_mid: list[str], b_mid: list[str], head: int, max_lines: int) -> list[str]:
    """Linear: the lines of the changed region found only before (as -) and only after (as +), counted as a
    multiset (a line before three times and after once is removed twice), each side in text order."""
    header = (
        f"@@ {APPROXIMATED} diff of lines -{_range(head, head + len(a_mid))} +{_range(head, head + len(b_mid))}:"
        " the changed region is too large or too repetitive for an exact diff; listed are its lines found only"
        " before (-) or only after (+), in order, without context; lines found on both sides are not shown @@"
    )
    removed = _only_in(a_mid, b_mid)
    added = _only_in(b_mid, a_mid)
    lines = ["--- before", "+++ after", header]
    if max_lines < len(lines) + 1:  # no room for anything but the header
        return [header]
    room = max_lines - len(lines)
    if not removed and not added:
        return lines + ["  (the same lines, in another order)"]
    if len(removed) + len(added) <= room:
        return lines + ["-" + line for line in removed] + ["+" + line for line in added]
    # one line goes to the note of what was left out; the rest is shared so that both sides show
    room -= 1
    keep_removed = min(len(removed), max(room // 2, room - len(added)))
    keep_added = min(len(added), room - keep_removed)
    lines += ["-" + line for line in removed[:keep_removed]] + ["+" + line for line in added[:keep_added]]
    lines.append(f"… ({len(removed) - keep_removed} more removed and {len(added) - keep_added} more added lines not kept)")
    return lines


def _only_in(lines: list[str], other: list[str]) -> list[str]:
    """The lines not matched by an occurrence in other, in order (each occurrence in other matches once)."""
    left = Counter(other)
    out = []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            out.append(line)
    return out


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
