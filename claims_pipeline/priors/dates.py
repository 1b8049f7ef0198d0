"""Dates in running text, in the forms pages and claims write them, reduced to (year, month, day).

A date claim is supported only by the same date: day+month+year when the claim gives a day, else month+year.
A bare year or a bare month name never counts. ROC calendar years (民國113年 = 2024) and CJK dates are read, and so
are year-first dates with dots or slashes ("2003.06.11", "2003/06/11", Korean "2003. 6. 11.") and a month-name date
that page chrome glued to the word before it ("SoccerMay 1 2019": a menu label run into the dateline).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate, compress

from claims_pipeline.priors.scan import digit_starts, finditer_at
from claims_pipeline.priors.spans import SpanSet

# Month names (lower-cased) in the languages of the corpus → month number.
_MONTH_NAMES: dict[int, tuple[str, ...]] = {
    1: ("january", "jan", "janvier", "janv", "enero", "ene", "januar", "januari", "jän", "gennaio", "janeiro"),
    2: ("february", "feb", "février", "fevrier", "févr", "fev", "febrero", "februar", "februari", "febbraio", "fevereiro"),
    3: ("march", "mar", "mars", "marzo", "märz", "maerz", "maart", "março", "marco"),
    4: ("april", "apr", "avril", "avr", "abril", "abr", "aprile"),
    5: ("may", "mai", "mayo", "maggio", "maio", "mei"),
    6: ("june", "jun", "juin", "junio", "juni", "giugno", "junho"),
    7: ("july", "jul", "juillet", "juil", "julio", "juli", "luglio", "julho"),
    8: ("august", "aug", "août", "aout", "agosto", "augustus"),
    9: ("september", "sep", "sept", "septembre", "septiembre", "settembre", "setembro"),
    10: ("october", "oct", "octobre", "octubre", "oktober", "okt", "ottobre", "ott", "outubro"),
    11: ("november", "nov", "novembre", "noviembre", "novembro"),
    12: ("december", "dec", "décembre", "decembre", "déc", "diciembre", "dic", "dezember", "dez", "dicembre", "dezembro"),
}
MONTHS: dict[str, int] = {name: num for num, names in _MONTH_NAMES.items() for name in names}
_MONTH_ALT = "|".join(sorted((re.escape(n) for n in MONTHS), key=len, reverse=True))
_L = "A-Za-z\u00c0-\u024f"

_ISO_RE = re.compile(r"(?=\d)(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_DMY_RE = re.compile(
    rf"(?<![\d{_L}])(\d{{1,2}})(?:st|nd|rd|th|er|º|°)?\.?\s+(?:de\s+)?({_MONTH_ALT})(?![{_L}])\.?,?\s+(?:de\s+)?(\d{{4}})(?!\d)",
    re.I,
)
_MDY_RE = re.compile(
    rf"(?<![{_L}])({_MONTH_ALT})(?![{_L}])\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)", re.I
)
_MY_RE = re.compile(rf"(?<![{_L}])({_MONTH_ALT})(?![{_L}])\.?,?\s+(?:de\s+)?(\d{{4}})(?!\d)", re.I)
# Day and month without a year ("November 2", "18 October", "Oct. 6th"): news pages leave the year to the dateline.
_DM_NOYEAR_RE = re.compile(
    rf"(?<![\d{_L}])(\d{{1,2}})(?:st|nd|rd|th|er)?\.?\s+(?:de\s+)?({_MONTH_ALT})(?![{_L}])(?!\.?,?\s+(?:de\s+)?\d{{4}})", re.I
)
_MD_NOYEAR_RE = re.compile(
    rf"(?<![{_L}])({_MONTH_ALT})(?![{_L}])\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])(?!,?\s+\d{{4}})", re.I
)
# Year first with dots or slashes, the same separator twice. Not inside a longer number or a dotted run
# ("12003.06.11", "1.2003.06.11", "2003.06.11.5" are no dates); a dot may carry one space (Korean "2003. 6. 11.").
_YMD_RE = re.compile(r"(?=\d)(?<!\d)(?<!\d[.,/])(\d{4})(\.\s?|/)(\d{1,2})\2(\d{1,2})(?!\d)(?![./]\d)")
# A title-case word glued to a lower-case letter before it, then a day: where a glued "SoccerMay 1 2019" starts
# when the word is a month. It begins with the capital so the scan skips ahead to capitals in C.
_GLUED_MONTH_RE = re.compile(
    r"[A-Z\u00c0-\u00de](?<=[a-z\u00df-\u00ff][A-Z\u00c0-\u00de])[a-z\u00df-\u00ff]{2,9}(?=\.?\s+\d)"
)
# The month-day-year form at such a start: a day AND a year are required, so a glued month name alone never counts.
_MDY_GLUED_RE = re.compile(rf"({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)", re.I)
_NUMERIC_RE = re.compile(r"(?=\d)(?<![\d./])(\d{1,2})([./])(\d{1,2})\2(\d{4})(?!\d)(?![./]\d)")
_CJK_RE = re.compile(r"(民國|民国)?\s*(\d{1,4})\s*年\s*(?:(\d{1,2})\s*月\s*(?:(\d{1,2})\s*日)?)?")

_WORD_RE = re.compile(rf"[{_L}]+")

ROC_OFFSET = 1911  # 民國 year 1 = 1912


NO_YEAR = 0  # a day and month written without a year


@dataclass(frozen=True, slots=True)
class DateToken:
    year: int  # NO_YEAR when the page wrote only day and month
    month: int | None
    day: int | None
    start: int
    end: int
    text: str


def _valid(y: int, m: int | None, d: int | None) -> bool:
    return 1800 <= y <= 2200 and (m is None or 1 <= m <= 12) and (d is None or 1 <= d <= 31)


def _month_starts(text: str) -> list[int]:
    """Where a word that is a month name starts. Many pages name no month: a C-level pass over the words
    (findall, lower, a set test) says so more cheaply than the per-word loop, which runs only when it finds one."""
    if MONTHS.keys().isdisjoint(map(str.lower, _WORD_RE.findall(text))):
        return []
    return [w.start() for w in _WORD_RE.finditer(text) if w.group(0).lower() in MONTHS]


def month_starts_of_split(parts: list[str]) -> list[int]:
    """_month_starts of a text from its split into [gap, word, gap, ..., word, gap] (the page index's), for a
    text whose words are exactly this module's letter runs (_WORDS_ARE_RUNS says when): no scan of the text
    and no loop in Python, where the page index splits it anyway."""
    lowered = list(map(str.lower, parts[1::2]))
    if MONTHS.keys().isdisjoint(lowered):
        return []
    return list(compress(list(accumulate(map(len, parts)))[0:-1:2], map(MONTHS.__contains__, lowered)))


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")
_LETTER_RE = re.compile(r"[^\W\d_]")  # a character of a word, as the page index reads words


def non_ascii_chars(text: str) -> set[str]:
    """The distinct non-ASCII characters of text (a page has few)."""
    return set() if text.isascii() else set("".join(_NON_ASCII_RE.findall(text)))


def words_are_runs(text: str, non_ascii: set[str] | None = None) -> bool:
    """Are the words of text (runs of [^\\W\\d_]) exactly its runs of _L letters? Not when it has a letter
    outside _L (Greek, CJK, "º") or a non-letter inside it ("×", "÷"). Only non-ASCII characters can be either:
    checking the distinct ones (non_ascii_chars(text), given when known) is far cheaper than a scan of the text."""
    for ch in non_ascii_chars(text) if non_ascii is None else non_ascii:
        if ch in "×÷" or (not "\u00c0" <= ch <= "\u024f" and _LETTER_RE.match(ch)):
            return False
    return True


def tokenize_dates(text: str, month_starts: list[int] | None = None) -> list[DateToken]:
    """Every date in text (several readings of one span when the numeric form is ambiguous). month_starts:
    where its month words start, when the caller knows (month_starts_of_split)."""
    out: list[DateToken] = []

    def add(y: int, m: int | None, d: int | None, match: re.Match[str]) -> None:
        if _valid(y, m, d):
            out.append(DateToken(y, m, d, match.start(), match.end(), match.group(0)))

    m: re.Match[str] | None  # the loops below bind matches, the month-word look-ups may find none
    # the digit-led patterns are tried only where a run of digits starts (priors/scan.py): the same matches
    starts = digit_starts(text)
    for m in finditer_at(_ISO_RE, text, starts):
        add(int(m.group(1)), int(m.group(2)), int(m.group(3)), m)
    if "." in text or "/" in text:
        for m in finditer_at(_YMD_RE, text, starts):
            add(int(m.group(1)), int(m.group(3)), int(m.group(4)), m)
    for m in finditer_at(_DMY_RE, text, starts):
        add(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)), m)
    # Patterns that start with a month name are tried only where a month word stands (a dict look-up per
    # word), not at every character: a 45-way case-insensitive alternation per position is slow on big pages.
    if month_starts is None:
        month_starts = _month_starts(text)
    for pos in month_starts:
        if m := _MDY_RE.match(text, pos):
            add(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2)), m)
        if m := _MY_RE.match(text, pos):
            add(int(m.group(2)), MONTHS[m.group(1).lower()], None, m)
    for g in _GLUED_MONTH_RE.finditer(text):
        if g.group(0).lower() in MONTHS and (m := _MDY_GLUED_RE.match(text, g.start())):
            add(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2)), m)
    for m in finditer_at(_DM_NOYEAR_RE, text, starts):
        if 1 <= int(m.group(1)) <= 31:
            out.append(DateToken(NO_YEAR, MONTHS[m.group(2).lower()], int(m.group(1)), m.start(), m.end(), m.group(0)))
    for pos in month_starts:
        m = _MD_NOYEAR_RE.match(text, pos)
        if m and 1 <= int(m.group(2)) <= 31:
            out.append(DateToken(NO_YEAR, MONTHS[m.group(1).lower()], int(m.group(2)), m.start(), m.end(), m.group(0)))
    for m in finditer_at(_NUMERIC_RE, text, starts):
        a, b, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
        add(y, b, a, m)  # day first (most of the world)
        if a != b and a <= 12:
            add(y, a, b, m)  # month first (US)
    for m in _CJK_RE.finditer(text) if "年" in text else ():
        year = int(m.group(2))
        if m.group(1):
            year += ROC_OFFSET
        elif year < 1800:
            continue
        add(year, int(m.group(3)) if m.group(3) else None, int(m.group(4)) if m.group(4) else None, m)
    # "November 2024" inside "18 November 2024" is the same date, not a second, day-less one
    full = SpanSet((t.start, t.end) for t in out if t.day is not None and t.year != NO_YEAR)
    out = [t for t in out if (t.day is not None and t.year != NO_YEAR) or not full.covers(t.start, t.end)]
    out.sort(key=lambda t: (t.start, -(t.end - t.start)))
    return out


def parse_claim_date(raw: str) -> tuple[int, int, int | None] | None:
    """(year, month, day|None) of a claim's date value, or None when it names no month."""
    best: DateToken | None = None
    for tok in tokenize_dates(raw):
        if tok.month is None or tok.year == NO_YEAR:
            continue
        if best is None or (tok.day is not None and best.day is None):
            best = tok
    return (best.year, best.month, best.day) if best and best.month else None
