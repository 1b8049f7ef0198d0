"""A statement's source written on the line after it: "Source: [INSEE](…)", "Sources :" over a list of links,
"Quelle: …"; and a lead-in that cites, ending in ':', over the list it introduces ("the 2018 summary
([report](…)) lists, notably:").

The links belong to the statement right above (its paragraph, or its list item, at most one blank line up; every
row of a table right above) when it has no link of its own. A source line keeps its own claims: a figure in a
link's label ("[Decree-Law 112/2024](…)") is checked against that link, as anywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from claims_pipeline.corpus.links import Link, find_links
from claims_pipeline.corpus.sentences import sentence_ends

# "Source:", "**Sources :**", "> Quelle:", "- Sources:", "_Quellen_:", "Bron:" at the start of a line: the word and its
# colon (led by a plain character set, so the scan skips ahead in C), then what may stand before it on its line.
# The word in the six languages read: Source(s) (EN, FR), Quelle(n) (DE), Bron(nen) (NL), Fuente(s) (ES), Fonte/Fonti (IT).
SOURCE_WORD_RE = re.compile(r"[SsQqſBbFf](?:(?<=[Ssſ])(?i:ources?)|(?<=[Qq])(?i:uellen?)|(?<=[Bb])(?i:ron(?:nen)?)"
                            r"|(?<=[Ff])(?i:uentes?|ont[ei]))[*_]*[ \t\u00a0\u202f]?:[*_]*")
_LINE_LEAD_RE = re.compile(r"[ \t>]*(?:[-*+][ \t]+)?[*_]*")
SOURCE_HINT_RE = SOURCE_WORD_RE
_LINK_PARAGRAPH_HINT_RE = re.compile(r"\n\n[ \t]{0,3}[*_]{0,2}\[")
SOURCE_LINE_RE = re.compile(_LINE_LEAD_RE.pattern + SOURCE_WORD_RE.pattern)  # a line that starts with it
_LIST_ITEM_RE = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]")
_BLOCK_START_RE = re.compile(r"[ \t]*(?:#|```|~~~|\||>|\[[^\]\n]+\]:)")
_MAX_LIST_LINES = 12
_MAX_LEAD = 40  # what may stand before the word on its line ("> - **"): longer is prose, found in constant time
_MAX_PARAGRAPH_LINES = 20
# An admonition's first line (Python-Markdown, MkDocs Material: '!!! example "Title"', '??? note', '???+ tip'); its
# body is the indented lines under it. The box is one unit: a source line closing its body sources all of it.
_ADMONITION_RE = re.compile(r"[ \t]*(?:!!!|\?\?\?\+?)[ \t]*[\w-]+")
_INDENTED_RE = re.compile(r"(?: {0,3}\t| {4})")
_MAX_ADMONITION_LINES = 60




def _line(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:end] if end >= 0 else text[start:]


def _prev_start(text: str, start: int) -> int:
    """Start of the line before the one at `start` (-1: none)."""
    return -1 if start == 0 else text.rfind("\n", 0, start - 1) + 1


def find_source_lines(text: str, in_fence: Callable[[int], bool]) -> dict[int, list[Link]] | None:
    """The start of each statement line whose source is given on a "Source:" line below it, or by a paragraph that
    is only a link, -> that source's links."""
    if SOURCE_HINT_RE.search(text) is None and (not _LINK_PARAGRAPH_HINT_RE.search(text)):
        return None
    out: dict[int, list[Link]] = {}
    for m in SOURCE_WORD_RE.finditer(text):
        lo = max(0, m.start() - _MAX_LEAD - 1)
        newline = text.rfind("\n", lo, m.start())
        if newline < 0 and lo > 0:
            continue  # more than _MAX_LEAD characters before the word on its line: prose
        start = newline + 1
        if not _LINE_LEAD_RE.fullmatch(text, start, m.start()) or in_fence(start):
            continue
        links = find_links(_line(text, m.end()))[0]
        listed = 0
        if not links and not _line(text, m.end()).strip():  # "Sources:" alone, its links listed below it
            nxt = text.find("\n", start)
            while nxt >= 0 and listed < _MAX_LIST_LINES:
                line = _line(text, nxt + 1)
                found = find_links(line)[0] if line.strip() else []
                if not found:
                    break
                links += found
                listed += 1
                nxt = text.find("\n", nxt + 1)
        statement = (_INDENTED_RE.match(text, start) and _admonition_body(text, start)) or _statement_lines(text, start)
        if not links or not statement:
            continue
        for s in statement:
            out.setdefault(s, []).extend(links)
    if "](" in text:
        for m in _LINK_PARAGRAPH_RE.finditer(text):
            if in_fence(m.start()):
                continue
            statement = _statement_lines(text, m.start())
            if not statement or _LIST_ITEM_RE.match(_line(text, statement[-1])) or _line(text, statement[0]).lstrip()[:1] == "|":
                continue  # a list's or a table's next paragraph: a link of its own, not their source
            links = find_links(m.group())[0]
            for s in statement:
                if s not in out:
                    out[s] = links
    return out or None


# A paragraph that is only a link to a web page, right under a statement (one blank line between): the document the
# statement sums up, given as its source as a "Source:" line would give it ("… verboden vanaf 2 februari 2025.\n\n
# [Verordening (EU) 2024/1689](https://eur-lex…)"). A link alone inside a paragraph, or under a list, is not one.
_LINK_PARAGRAPH_RE = re.compile(r"(?<=\n\n)[ \t]{0,3}[*_]{0,2}\[[^\[\]\n]{3,200}\]\(https?://[^\s()]+(?:\([^\s()]*\))?[^\s()]*\)"
                                r"[*_]{0,2}\.?[ \t]*(?=\n\n|\n?$)")


def _admonition_body(text: str, source_start: int) -> list[int]:
    """Starts of the body lines above an indented source line that closes an admonition's body (every line up to
    the admonition's first line, blank ones and other source lines left out), or [] when it closes none."""
    lines: list[int] = []
    up = source_start
    for _ in range(_MAX_ADMONITION_LINES):
        up = _prev_start(text, up)
        if up < 0:
            return []
        line = _line(text, up)
        if _ADMONITION_RE.match(line):
            return lines
        if not line.strip():
            continue
        if not _INDENTED_RE.match(line):
            return []  # the body ended above: this source line closes no admonition
        if _is_source_line(line):
            return []  # another source line in the box: each one sources what is right above it
        lines.append(up)
    return []


def _is_source_line(line: str) -> bool:
    lead = _LINE_LEAD_RE.match(line)
    return lead is not None and SOURCE_WORD_RE.match(line, lead.end()) is not None


def _statement_lines(text: str, source_start: int) -> list[int]:
    """Starts of the lines of the statement right above a source line: its table rows, its list item, or its
    paragraph. One blank line may stand between."""
    prev = _prev_start(text, source_start)
    if prev >= 0 and not _line(text, prev).strip():
        prev = _prev_start(text, prev)
    if prev < 0 or not _line(text, prev).strip():
        return []
    first = _line(text, prev)
    if first.lstrip().startswith("|"):  # a table: every row above
        rows = []
        while prev >= 0 and _line(text, prev).lstrip().startswith("|"):
            rows.append(prev)
            prev = _prev_start(text, prev)
        return rows
    if _BLOCK_START_RE.match(first) or _is_source_line(first):
        return []  # a heading, a fence, a quote, a definition, another source line: no statement
    lines = [prev]
    while not _LIST_ITEM_RE.match(_line(text, lines[-1])) and len(lines) < _MAX_PARAGRAPH_LINES:
        up = _prev_start(text, lines[-1])
        if up < 0:
            break
        line = _line(text, up)
        if not line.strip() or _BLOCK_START_RE.match(line) or _is_source_line(line):
            break
        if _LIST_ITEM_RE.match(line) and not _LIST_ITEM_RE.match(first):
            break  # a paragraph under a list: the list is not its statement
        lines.append(up)
    return lines


# A line ending in ':' (emphasis may close after it); the list under it.
_LEAD_IN_END_RE = re.compile(r":[*_]*[ \t]*(?=\n)")
_MAX_LEAD_IN_LINES = 40


def find_lead_ins(text: str, in_fence: Callable[[int], bool]) -> dict[int, list[Link]]:
    """The start of each line of a list introduced by a lead-in that cites (a line ending in ':' with links, the
    list right under it or after one blank line) -> the links of the lead-in's last sentence. How people write
    "the 2018 summary ([report](…)) gives, notably:" over the figures it reports."""
    out: dict[int, list[Link]] = {}
    for m in _LEAD_IN_END_RE.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        line = text[start:m.start()]
        if ("](" not in line and "://" not in line) or _is_source_line(line) or in_fence(start):
            continue
        ends = sentence_ends(line)[1]
        last = ends[-1] if ends and ends[-1] < len(line) else 0  # the last sentence: after the last end mark
        links = [ln for ln in find_links(line)[0] if ln.start >= last]
        if not links:
            continue
        pos = m.end() + 1
        if text.startswith("\n", pos):  # one blank line may stand between
            pos += 1
        first = True
        for _ in range(_MAX_LEAD_IN_LINES):
            if pos >= len(text):
                break
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            item = text[pos:end]
            if not item.strip() or (first and not _LIST_ITEM_RE.match(item)):
                break
            if not _LIST_ITEM_RE.match(item) and not item[:1].isspace():
                break  # the list ended (an item's wrapped lines are indented)
            out.setdefault(pos, links)
            first = False
            pos = end + 1
    return out
