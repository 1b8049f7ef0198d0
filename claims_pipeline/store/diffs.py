"""The text diff kept for a confirmed change: lines removed and added, with a little context, capped."""

from __future__ import annotations

import difflib

MAX_LINE_CHARS = 400  # one PDF "line" can be a whole page; keep the diff readable


def text_diff(old: str, new: str, *, context_lines: int, max_lines: int) -> str:
    old_lines = [_clip(line) for line in old.splitlines()]
    new_lines = [_clip(line) for line in new.splitlines()]
    lines = list(difflib.unified_diff(old_lines, new_lines, "before", "after", n=context_lines, lineterm=""))
    if len(lines) > max_lines:
        extra = len(lines) - max_lines
        lines = lines[:max_lines] + [f"… ({extra} more diff lines not kept)"]
    return "\n".join(lines)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
