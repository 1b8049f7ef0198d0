"""Two-column pages of ``pdftotext -layout`` output, read column by column.

Why: ``-layout`` keeps tables readable (a row stays on its line, where the figures live), but it prints a
two-column page (gazettes, official journals, bilingual notices) as lines holding the left column's line and
then the right column's. Joined into text, every sentence of one column is cut by fragments of the other, so
the prior's excerpts and the words it looks for near a figure came from the wrong column. Here such a run of
lines is read as the left column, then the right one; anything else on the page stays as it was.

How a page is judged, from its own lines only:
- the gutter: the position that the most lines leave blank over 3 characters with text on both sides (found
  from each line's runs of 3+ spaces, not by testing every position);
- lines with text over the gutter (a title, a full-width table) stay where they are; a run of lines between
  them is read column-wise when at least MIN_TWO_SIDED of its lines have text on both sides and those halves
  read like prose (MIN_PROSE_CHARS on average on each side), except its blocks (blank lines end one) that
  look like a table whose cells straddle the gutter (short halves): they keep their rows and their place.
"""

from __future__ import annotations

import re

MIN_TWO_SIDED = 3
MIN_SHARE = 0.3  # of the page's non-blank lines that must cross the gutter with text on both sides
MIN_PROSE_CHARS = 20
_GAP_RE = re.compile(r" {3,}")


def read_columns(layout_text: str) -> str:
    """`layout_text` (pages separated by form feeds) with each page's two-column regions read column-wise."""
    if "   " not in layout_text:  # no gap of 3 spaces anywhere: nothing can be a gutter
        return layout_text
    return "\f".join(_page(page) for page in layout_text.split("\f"))


def _page(page: str) -> str:
    lines = page.split("\n")
    gutter = _gutter(lines)
    if gutter is None:
        return page
    out: list[str] = []
    region: list[str] = []
    for line in lines:
        if line.strip() and line[gutter - 1:gutter + 2].strip():  # text over the gutter: a full-width line
            out += _region(region, gutter)
            region = []
            out.append(line)
        else:
            region.append(line)
    out += _region(region, gutter)
    return "\n".join(out)


def _gutter(lines: list[str]) -> int | None:
    """The middle of the widest-voted blank band, when enough lines have text on both sides of it."""
    width = max((len(line) for line in lines), default=0)
    if width < 2 * MIN_PROSE_CHARS:
        return None
    votes = [0] * (width + 2)
    text_lines = 0
    for line in lines:
        stripped = line.rstrip()
        if not stripped.strip():
            continue
        text_lines += 1
        lead = len(stripped) - len(stripped.lstrip())
        for gap in _GAP_RE.finditer(stripped, lead):
            # positions x whose band [x-1, x+1] lies inside this gap (text before it and after it on the line)
            votes[gap.start() + 1] += 1
            votes[gap.end() - 1] -= 1
    best, best_from, best_to, running = 0, 0, 0, 0
    for x in range(width + 1):
        running += votes[x]
        if running > best:
            best, best_from, best_to = running, x, x
        elif running == best and best_to == x - 1:
            best_to = x
    if best < MIN_TWO_SIDED or best < MIN_SHARE * text_lines:
        return None
    x = (best_from + best_to) // 2
    return x if 0.2 * width <= x <= 0.8 * width else None


def _region(lines: list[str], gutter: int) -> list[str]:
    """A run of lines with nothing over the gutter: when it is two columns of prose, read left column then
    right column, except blocks (they end at blank lines) that look like a table whose cells straddle the
    gutter, which keep their rows and their place; else unchanged."""
    blocks = _blocks(lines)
    halves_of = [[(line[:gutter].strip(), line[gutter:].strip()) for line in block] for block in blocks]
    if not _two_columns([h for halves in halves_of for h in halves]):
        return lines
    out: list[str] = []
    unit: list[tuple[str, str]] = []  # halves of the consecutive column blocks, blank lines included
    for block, halves in zip(blocks, halves_of):
        if _table_like(halves):
            out += _column_wise(unit) + block
            unit = []
        else:
            unit += halves
    return out + _column_wise(unit)


def _blocks(lines: list[str]) -> list[list[str]]:
    """Runs of non-blank lines, each with the blank lines that follow it."""
    blocks: list[list[str]] = []
    for line in lines:
        if not blocks or (line.strip() and not blocks[-1][-1].strip()):
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def _two_columns(halves: list[tuple[str, str]]) -> bool:
    two_sided = [(left, right) for left, right in halves if left and right]
    return len(two_sided) >= MIN_TWO_SIDED and _prose(two_sided)


def _table_like(halves: list[tuple[str, str]]) -> bool:
    # rows of a label and its figure; a letter heading over two columns of an index ("A ... L") is no row
    rows = [(left, right) for left, right in halves if len(left) > 1 and len(right) > 1]
    return len(rows) >= 2 and not _prose(rows)


def _prose(two_sided: list[tuple[str, str]]) -> bool:
    """Both sides MIN_PROSE_CHARS long on average: text, not a label and its figure."""
    n = len(two_sided)
    return (sum(len(left) for left, _ in two_sided) >= MIN_PROSE_CHARS * n
            and sum(len(right) for _, right in two_sided) >= MIN_PROSE_CHARS * n)


def _column_wise(halves: list[tuple[str, str]]) -> list[str]:
    if not halves:
        return []
    left_column = [left for left, right in halves if left or not right]  # blank lines end paragraphs in both
    right_column = [right for left, right in halves if right or not left]
    return left_column + [""] + right_column
