"""A markdown file's blocks: where its fences, headings and comments are, and its wrapped paragraphs.

Extraction visits only the lines that hold a citation (extract.py); these helpers give each such line its place
in the document. Fences, headings and comments are found by scans over the whole text (C speed). A line inside a
paragraph wrapped over several lines is read with its paragraph: the lines around it, up to blank lines, are
parsed by markdown-it (CommonMark, with tables, footnotes, front matter, definition lists, ::: containers and !!!
admonitions), which says which lines form one paragraph, list item or quote and strips their markers. A whole-file
parse costs about three times the whole extraction (docs/decisions/0003-sentences.md), so only the runs of
lines holding a citation are parsed, and runs that cannot hold a wrapped paragraph (one line; only table rows,
headings, list items one a line) not at all.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

from claims_pipeline.corpus.source_lines import SOURCE_LINE_RE

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*$")
# Fence marker lines; a heading line (what HEADING_RE accepts on a single line).
_FENCE_LINE_RE = re.compile(r"\n[ \t]*(?:```|~~~)")
_FENCE_HEAD_RE = re.compile(r"[ \t]*(?:```|~~~)")
HEADING_START_RE = re.compile(r"#{1,6}[^\S\n]")
# A setext underline ("Sources\n-------"): led by "\n" so the scan skips ahead in C.
SETEXT_UNDERLINE_RE = re.compile(r"\n {0,3}(?:={2,}|-{2,})[ \t]*(?=\n|$)")
_NOT_A_TITLE_RE = re.compile(r" {0,3}(?:[#>|]|```|~~~|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|[-=_* \t]*$)")
_BLANK_RE = re.compile(r"[^\n]")


def eol(text: str, start: int) -> int:
    end = text.find("\n", start)
    return end if end >= 0 else len(text)


def blank_comments(text: str) -> str:
    """The text with every closed HTML comment outside fenced code blanked (newlines kept). One pass with plain
    finds: a '<!--' inside a code example is no comment, and an unclosed one ends the search (a regex retried
    from every later '<!--' would be quadratic)."""
    fenced = fenced_spans(text)
    parts: list[str] = []
    done = pos = 0
    while (start := text.find("<!--", pos)) >= 0:
        line_start = text.rfind("\n", 0, start) + 1
        if (fenced and in_spans(fenced, line_start)) or text.count("`", line_start, start) % 2:
            pos = start + 4  # in fenced code, or inside an inline code span (an odd count of backticks before it)
            continue
        end = text.find("-->", start + 4)
        if end < 0:
            break
        end += 3
        parts += [text[done:start], _BLANK_RE.sub(" ", text[start:end])]
        done = pos = end
    return "".join(parts) + text[done:] if parts else text


def fenced_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every fenced block, from its opening marker line to its closing one (both included).

    Same rule as a line walk: ``` or ~~~ (after spaces/tabs) opens; only the same marker closes; an unclosed
    fence runs to the end of the text.
    """
    markers = [(m.start() + 1, m.group()[-3:]) for m in _FENCE_LINE_RE.finditer(text)]
    if (m := _FENCE_HEAD_RE.match(text)) is not None:
        markers.insert(0, (0, m.group()[-3:]))
    # CommonMark: a backtick fence's info string holds no backtick, so "```curl x``` y" is an inline code
    # span, not a fence (taken for one, it hid every later claim of the file)
    markers = [(start, marker) for start, marker in markers if marker == "~~~" or not _backtick_in_info(text, start)]
    spans: list[tuple[int, int]] = []
    fence, opened = "", -1
    for start, marker in markers:
        if opened < 0:
            fence, opened = marker, start
        elif marker == fence:
            spans.append((opened, start))
            opened = -1
    if opened >= 0:
        spans.append((opened, len(text)))
    return spans


_FRONT_CLOSE_RE = re.compile(r"\n(?:---|\.\.\.|\+\+\+)[ \t]*(?=\n|$)")


def code_spans(text: str) -> list[tuple[int, int]]:
    """The spans no claim comes from, sorted: the front matter (a '---' or '+++' block opening the file, closed by
    '---', '...' or '+++'), then every fenced block (fenced_spans)."""
    spans = fenced_spans(text)
    if text.startswith(("---\n", "+++\n")) and (m := _FRONT_CLOSE_RE.search(text, 3)) is not None:
        end = m.end()
        spans = [(0, end)] + [sp for sp in spans if sp[0] > end]
    return spans


def _backtick_in_info(text: str, start: int) -> bool:
    """True when the ``` line at `start` has a backtick after its opening run of backticks."""
    i = text.index("```", start) + 3
    end = text.find("\n", i)
    rest = text[i:end if end >= 0 else len(text)].lstrip("`")
    return "`" in rest


def in_spans(spans: list[tuple[int, int]], pos: int) -> bool:
    i = bisect_right(spans, (pos, len(spans) and 1 << 62)) - 1
    return i >= 0 and spans[i][0] <= pos <= spans[i][1]


def setext_headings(text: str, fenced: list[tuple[int, int]]) -> tuple[list[int], dict[int, str]]:
    """Setext headings ("Sources" over a line of '-' or '='): the sorted starts of their title lines and each
    title. Only a one-line title after a blank line (or a heading, or the file's start) counts: a longer
    paragraph over a rule is left as it is read now. YAML front matter's closing '---' is no underline."""
    starts: list[int] = []
    titles: dict[int, str] = {}
    front_end = -1
    if text.startswith("---\n"):
        close = text.find("\n---", 3)
        front_end = close + 4 if close >= 0 else -1
    for m in SETEXT_UNDERLINE_RE.finditer(text):
        under = m.start() + 1
        if under <= front_end or under < 2:
            continue
        title_start = text.rfind("\n", 0, under - 1) + 1
        title = text[title_start : under - 1]
        if (not title.strip() or title.startswith(("    ", "\t")) or _NOT_A_TITLE_RE.match(title)
                or (fenced and in_spans(fenced, title_start))):  # (4 spaces or a tab: indented code)
            continue
        if title_start > 0:  # the line before the title ends a block: blank, a heading or another underline
            before_start = text.rfind("\n", 0, title_start - 1) + 1
            before = text[before_start : title_start - 1]
            if before.strip() and not before.lstrip().startswith("#") and not SETEXT_UNDERLINE_RE.match("\n" + before):
                continue
        starts.append(title_start)
        titles[title_start] = title.strip()
    return starts, titles


def last_heading(text: str, lo: int, pos: int, fenced: list[tuple[int, int]]) -> int:
    """Start of the last heading line (outside fences) that begins in [lo, pos), or -1."""
    end = pos
    while (i := text.rfind("\n#", max(lo - 1, 0), end)) >= 0:
        if HEADING_START_RE.match(text, i + 1) and not (fenced and in_spans(fenced, i + 1)):
            return i + 1
        end = i + 1
    if lo == 0 < pos and HEADING_START_RE.match(text) and not (fenced and in_spans(fenced, 0)):
        return 0
    return -1


_ATX_LINE_RE = re.compile(r"\n(#{1,6})[^\S\n]+([^\n]*)")
_CLOSING_HASHES_RE = re.compile(r"\s*#*\s*$")


def outline(text: str, fenced: list[tuple[int, int]], setext_titles: dict[int, str]) -> list[tuple[int, int, str]]:
    """(start, level, title) of every heading outside fenced code, in order: ATX lines ('#' to '######') and the
    setext titles found by setext_headings (level 1 over '=', 2 over '-')."""
    out: list[tuple[int, int, str]] = []
    if (m := HEADING_START_RE.match(text)) is not None:
        out.append((0, m.group().count("#"), _atx_title(text, 0)))
    out += [(m.start() + 1, len(m.group(1)), m.group(2)) for m in _ATX_LINE_RE.finditer(text)
            if not (fenced and in_spans(fenced, m.start() + 1))]
    out = [(s, lvl, _CLOSING_HASHES_RE.sub("", t) if t.endswith(("#", " ", "\t")) else t) for s, lvl, t in out]
    for s, title in setext_titles.items():
        under = eol(text, s) + 1
        out.append((s, 1 if text[under:eol(text, under)].lstrip().startswith("=") else 2, title))
    out.sort()
    return out


def _atx_title(text: str, start: int) -> str:
    m = HEADING_RE.match(text[start:eol(text, start)])
    return m.group(2).strip() if m else ""


def enclosed(levels: list[int], marked: list[bool]) -> list[bool]:
    """For each heading of an outline (its level, whether it is marked): is it inside a marked one (a heading of
    a lower level above it, with no heading of that level or lower between)? One pass with a stack."""
    stack: list[tuple[int, bool]] = []
    out: list[bool] = []
    for level, mark in zip(levels, marked):
        while stack and stack[-1][0] >= level:
            stack.pop()
        inside = bool(stack) and stack[-1][1]
        out.append(inside)
        stack.append((level, mark or inside))
    return out


# A line that starts a block of its own (a table row, a heading, a list item, a definition, a fence, a rule): a run
# made only of such lines holds no wrapped paragraph, and is not parsed.
_OWN_BLOCK_LINE_RE = re.compile(r"[ \t]{0,3}(?:\||#|[-*+][ \t]|\d{1,9}[.)][ \t]|\[[^\]\n]+\]:|```|~~~|[-*_=][-*_= \t]*$)")
_PICTURE_LINE_RE = re.compile(r"\s*(?:!\[[^\]\n]*\]\([^)\n]*\)|<[^<>\n]*>)\s*")
# ... or in a colon: "… hat sich geändert:" over "Grundsätzlich sind …" (a line break after a colon, then a capital,
# opens a new sentence, as a list under a lead-in would)
_ENDS_CITING_RE = re.compile(r"(?:\]|\)|:)[*_]*[ \t]*$")
_LEAD_MARKS = "*_\"'“(["
_MAX_RUN_LINES = 200  # a longer run of non-blank lines is cut there (a hostile file is parsed in bounded pieces)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph (or list item, quote, footnote or definition text) over several lines: its text with the lines
    joined by a space and their markers stripped, the start of each of its lines in the file, and where each
    line begins in `text`."""

    text: str
    line_starts: tuple[int, ...]  # offsets in the file
    offsets: tuple[int, ...]  # offsets in `text`, one per line
    item: bool = False  # the text of a list item (one statement when it opens with its topic: is_topic_entry)

    def line_index(self, pos: int) -> int:
        """Which of the paragraph's lines (0-based) holds position `pos` of `text`."""
        return bisect_right(self.offsets, pos) - 1


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.container import container_plugin
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    md = (MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(footnote_plugin).use(deflist_plugin)
          .use(admon_plugin).use(container_plugin, name="any", validate=lambda *_: True))
    # Blocks only: links and figures are read by the extraction's own scanners, on the raw text of each block.
    md.core.ruler.disable(["inline", "footnote_tail", "text_join"])
    return md


def _line_starts(text: str, lo: int, hi: int) -> list[int]:
    starts = [lo]
    while (nl := text.find("\n", starts[-1], hi)) >= 0 and nl + 1 < hi:
        starts.append(nl + 1)
    return starts


def run_around(text: str, start: int) -> tuple[int, int]:
    """The run of non-blank lines holding the line at `start`: (start of its first line, end of its last)."""
    lo = start
    for _ in range(_MAX_RUN_LINES):
        if lo == 0:
            break
        prev = text.rfind("\n", 0, lo - 1) + 1
        if not text[prev:lo - 1].strip():
            break
        lo = prev
    hi = eol(text, start)
    for _ in range(_MAX_RUN_LINES):
        if hi >= len(text):
            break
        nxt = eol(text, hi + 1)
        if not text[hi + 1:nxt].strip():
            break
        hi = nxt
    return lo, hi


def wrapped_paragraphs(text: str, lo: int, hi: int, fenced: list[tuple[int, int]] | None = None) -> dict[int, Paragraph]:
    """The paragraphs over several lines in text[lo:hi] (a run of lines), by the file offset of each of their
    lines. `fenced`: the file's code spans (code_spans); a line in one is no paragraph text (a run parsed out of
    its list reads an indented fence as text), the paragraph is cut there."""
    starts = _line_starts(text, lo, hi)
    if len(starts) < 2 or all(_OWN_BLOCK_LINE_RE.match(text, s) for s in starts[1:]):
        return {}
    out: dict[int, Paragraph] = {}
    tokens = _parser().parse(text[lo:hi])
    items = 0  # list items open around the token
    for k, tok in enumerate(tokens):
        if tok.type.startswith("list_item_"):
            items += 1 if tok.nesting > 0 else -1
        if tok.type != "inline" or tok.map is None or tok.map[1] - tok.map[0] < 2:
            continue
        if k and tokens[k - 1].type not in ("paragraph_open", "dt_open"):
            continue  # a heading's or a table's inline: one line each
        first, last = tok.map
        lines = tok.content.split("\n")
        if len(lines) != last - first:
            continue  # not one content line per source line: left to the line reading
        offsets, at = [], 0
        for ln in lines:
            offsets.append(at)
            at += len(ln) + 1
        where = starts[first:last]
        if fenced and any(in_spans(fenced, s) for s in where):
            piece: list[int] = []
            for i, s in enumerate(where + [-1]):
                if s >= 0 and not in_spans(fenced, s):
                    piece.append(i)
                elif piece:
                    _add(out, [lines[j] for j in piece], [where[j] for j in piece],
                         [offsets[j] - offsets[piece[0]] for j in piece], items > 0)
                    piece = []
            continue
        _add(out, lines, where, offsets, items > 0)
    return out


def _starts_capital(line: str) -> bool:
    rest = line.lstrip(_LEAD_MARKS)
    return rest[:1].isupper()


def _add(out: dict[int, Paragraph], lines: list[str], starts: list[int], offsets: list[int], item: bool) -> None:
    """The paragraph, cut before each of its lines that gives a source ("Source: [x](…)" under a statement is
    read as the statement's source, source_lines.py) and after a line that is only a picture (no sentence starts
    there); a piece of one line is left to the line reading."""
    cuts = [0] + [i for i in range(1, len(lines))
                  if SOURCE_LINE_RE.match(lines[i]) or _PICTURE_LINE_RE.fullmatch(lines[i - 1])] + [len(lines)]
    for a, b in zip(cuts, cuts[1:]):
        if b - a < 2:
            continue
        base = offsets[a]
        # a line ending in a citation or a colon, followed by a capital, ends its statement (notes written one a
        # line; "… has changed:" over "All agencies must …"); the line break is kept there, and the sentence
        # reader ends a sentence at it
        joined = "".join(ln + ("\n" if i < b - 1 and _ENDS_CITING_RE.search(ln) and _starts_capital(lines[i + 1])
                              else " ") for i, ln in enumerate(lines[a:b], start=a))[:-1]
        para = Paragraph(joined, tuple(starts[a:b]), tuple(o - base for o in offsets[a:b]), item)
        for s in para.line_starts:
            out[s] = para
