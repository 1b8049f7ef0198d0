"""Where sentences end in a claim's text (a line, or a paragraph's wrapped lines joined by a space).

Own rules, not a general segmenter: measured against pysbd on wrapped text in six languages and at 100k claims
(docs/decisions/0003-sentences.md). A sentence ends at '.', '!' or '?' before a space or the end (footnote markers
and closing quotes or brackets may follow the mark: "in 2024.[^3] Prices"; so may an HTML line break, "können.<br/>"). A '.' ends nothing after an
abbreviation ("z. B.", "e.g.", "Nr.", "Art.", "St.", "Mrd."), a single letter (initials, "z. B.", "d. h."), a
German or Dutch ordinal day ("1. Juli 2025"), or before a word in lower case (every one of the six languages
starts a sentence with a capital: "ca. drei", "bzw. die"). A decimal ("5.3", "5,3") never has a space after its
mark. A ';' ends a clause, not a sentence: `clause_ends` gives both.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from claims_pipeline.corpus.values import WORD_MONTHS

# Sentence (and clause) end marks; a table cell's bar ends a cell.
# A line break kept in a paragraph's text (blocks.py: after a line ending in a citation) ends a sentence too.
# CJK full stops end a sentence with no space after them ("…増加しました。しかし").
_CLAUSE_END_RE = re.compile(
    r"[.!?;](?:\[\^[^\[\]\n]{1,200}\])*(?=\s|$)|[。！？；](?:\[\^[^\[\]\n]{1,200}\])*|\||(?<=\S)(?=\n)")
_SENTENCE_END_RE = re.compile(
    r"[.!?][*_\"'’”»)]*(?:\[\^[^\[\]\n]{1,200}\])*(?:<br\s?/?>)?(?=\s|$)|[。！？][」』）)]*(?:\[\^[^\[\]\n]{1,200}\])*"
    r"|(?<=\S)(?=\n)")
_ORDINAL_DAY_RE = re.compile(rf"(?<![\d.,])\d{{1,2}}\.\s+(?i:{'|'.join(sorted(WORD_MONTHS, key=len, reverse=True))})\b")
_CLOSED_BEFORE_RE = re.compile(r"[.!?;][*_\"'’”)]*(?:\[\^[^\[\]\n]{1,200}\][*_\"'’”)]*)*$")

# Words whose '.' ends no sentence, in the six languages read (EN, DE, FR, ES, IT, NL), lower case.
ABBREVIATIONS = frozenset(
    # amounts and units
    "mrd mio tsd bn mn m k eur chf usd approx ca env aprox appr "
    # references to laws, pages, numbers, figures
    "nr no nos art arts abs sec secs ch chap cap reg p pp s fig figs vol vols ed eds op cit ibid para paras n° núm "
    "pág pag blz al "
    # Latin and common short forms
    "e.g i.e etc vs cf viz incl excl inkl zzgl exkl bzw ggf evtl usw vgl u.a d.h z.b s.o s.u o.ä z.t bijv o.a m.b.t "
    "nl resp ecc ecc. sig sr sra sres dr dra prof mr mrs ms jr sr st ste mme mlle cie co corp inc ltd dept univ "
    # months written short ("Sept. 2024", "janv. 2025")
    "jan feb mar apr jun jul aug sep sept oct nov dec janv févr fév avr juil déc okt dez mär ene abr ago dic gen "
    "giu lug ott mrt mei".split())
_WORD_BEFORE_RE = re.compile(r"([\w.°]{1,8})$")
# Single letters joined by dots ("U.S", "U.K", "e.g"): an initialism, its last '.' ends nothing ("the U.S. Digital
# Corps", "in the U.K. Parliament").
_INITIALISM_RE = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")


def _abbreviation(text: str, dot: int) -> bool:
    m = _WORD_BEFORE_RE.search(text, max(0, dot - 8), dot)
    if m is None:
        return False
    word = m.group(1).lower().lstrip(".")
    return word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or _INITIALISM_RE.fullmatch(word) is not None


def _ordinal_day(text: str, dot: int) -> bool:
    return any(_ORDINAL_DAY_RE.match(text, dot - k) for k in (1, 2) if dot - k >= 0)


def _lower_next(text: str, end: int) -> bool:
    """The next word after `end` starts in lower case."""
    i = end
    n = len(text)
    while i < n and text[i] in " \t\n*_\"'“‘(«":
        i += 1
    return i < n and text[i].islower()


def _ends(text: str, pattern: re.Pattern[str]) -> tuple[list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    for m in pattern.finditer(text):
        if text[m.start()] == "." and (_ordinal_day(text, m.start()) or _abbreviation(text, m.start())
                                       or _lower_next(text, m.end())):
            continue
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def clause_ends(text: str) -> tuple[list[int], list[int]]:
    """The starts and the ends of the text's clause ends ('.', '!', '?', ';', a table's '|'), in order."""
    return _ends(text, _CLAUSE_END_RE)


def sentence_ends(text: str) -> tuple[list[int], list[int]]:
    """The starts and the ends of the text's sentence ends ('.', '!', '?'), in order."""
    return _ends(text, _SENTENCE_END_RE)


def sentences(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of the text, leading spaces left out."""
    out: list[tuple[int, int]] = []
    lo = 0
    for end in sentence_ends(text)[1] + [len(text)]:
        while lo < end and text[lo].isspace():
            lo += 1
        if lo < end:
            out.append((lo, end))
        lo = end
    return out


def span_at(found: tuple[list[int], list[int]], length: int, pos: int) -> tuple[int, int]:
    """The span of the sentence (or clause) holding position `pos`, from the ends `found` in a text of `length`."""
    starts, ends = found
    k = bisect_left(ends, pos + 1)  # the first end after pos
    return (ends[k - 1] if k else 0), (ends[k] if k < len(ends) else length)


def sentence_span(line: str, start: int, end: int,
                  found: tuple[list[int], list[int]] | None = None) -> tuple[int, int]:
    """The span of the clause a footnote marker at [start, end) belongs to: the one it closes when it follows
    the clause's end mark ("… 9.4 % in 2024.[^4]"), else the one it stands in ("… 5,5 Millionen[^ba]. …").
    `found`: clause_ends(line), found once for all the markers of a line."""
    starts, ends = clause_ends(line) if found is None else found
    closed = _CLOSED_BEFORE_RE.search(line, max(0, start - 400), start)
    if closed is not None:
        k = bisect_left(starts, closed.start())  # the ends before the mark that closes the sentence
        return (ends[k - 1] if k else 0), start
    k = bisect_left(starts, start)
    lo = min(ends[k - 1], start) if k else 0
    j = bisect_left(starts, end)
    return lo, (starts[j] if j < len(starts) else len(line))
