"""Where a claim's figure occurs on a page: candidate occurrences per value, each strong or weak.

Rules, per value type:
- pct / money / number (a count: '2 milliards', a table cell's '128.47'): page numbers equal AS NUMBERS within the claim's rounding tolerance. A unit clash (a money
  claim against "5 %") is no hit. Strong when the unit agrees (%, a currency next to it, a magnitude word) or the
  figure is distinctive (≥3 significant digits: 6.32, 77,700); a bare "5" is only a weak hit.
- statute: the identifier with boundaries ("2024-1039", "70:07" ~ "70.07"). Strong when it contains a separator
  or a statute keyword (Article, Cap., Law, §…) stands right before it on the page; else weak.
- date: the same date; a claim with a day needs the day (a month+year on the page is weak); bare years and
  bare month names are never hits. A day and month written without a year ("May 2") is weak when the page
  names the claim's year elsewhere (a dateline), for a claim with that day or a claim of that month.
- duration, measure, count, index, rank, ratio, decade, a salient year, a percentage in words: priors/kinds.py.
- anything else (a value we cannot parse): its needles with word boundaries, weak unless ≥4 chars with a digit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from claims_pipeline.corpus.records import Value
from claims_pipeline.priors.dates import NO_YEAR, parse_claim_date
from claims_pipeline.priors.kinds import KIND_TYPES, kind_spans
from claims_pipeline.priors.numbers import ClaimNumber, parse_claim_number, significant_digits
from claims_pipeline.priors.page_index import PageIndex, search_form

_MAX_OCCURRENCES = 400  # per value: bounds the work on pages that repeat a small number hundreds of times
_STATUTE_KW = (
    r"Loi|Law|Ley|Legge|Lei|Gesetz(?:es)?|Decreto|D[ée]cret|Decree|Regulations?|Reg|Acts?|Cap|Chap(?:ter)?|"
    r"Articles?|Art|Artikel|Artículo|Articolo|Section|Sec|§§?|No|n°|nº|Nr|Bekendtg[øo]relse|Verordnung|Ordinance|Ord|第"
    r"|Executive\s+Order|E\.O|EO|FAR|Recitals?|Overweging|Erwägungsgrund|Considérant|Considerando"
)
_STATUTE_RAW_RE = re.compile(rf"^\W*(?:{_STATUTE_KW})\b\.?\s*(?:n[°oº]\.?\s*)?", re.I)
_KW_BEFORE_RE = re.compile(rf"(?:^|[^0-9A-Za-z])(?:{_STATUTE_KW})\.?\s*(?:n[°oº]\.?\s*)?(?:\([^)]{{0,12}}\)\s*)?$", re.I)
_IDENT_RE = re.compile(r"\d[0-9A-Za-z./:-]*")
_SEP_SPLIT_RE = re.compile(r"[-./:]")
_DIGITS_IDENT_RE = re.compile(r"[0-9][0-9./:-]*")
_NUMERIC_TYPES = ("pct", "money", "number")  # number: a count, compared as a number with no unit


@dataclass(frozen=True, slots=True)
class Occurrence:
    start: int
    end: int
    strong: bool


# A claim's figure read once per distinct figure, not once per claim and page: an audit's claims repeat their
# figures (the 10k synthetic corpus: 422 distinct pct/money values among 11,783), and the results are immutable.
_claim_number = lru_cache(maxsize=8192)(parse_claim_number)
_claim_date = lru_cache(maxsize=8192)(parse_claim_date)
_claim_digits = lru_cache(maxsize=8192)(significant_digits)


# Where an identifier may start: not inside a word or a longer number, except after the letter of a French code's
# part glued to it ("L312-1-2", "R311-3-1-1", "D1-2" on Légifrance: the claim's "article L. 312-1-2" is that article)
# and after an OMB memorandum's or circular's "M-" or "A-" ("M-19-17" for "OMB Memo 19-17", "A-130").
_IDENT_START = (r"(?:(?<![0-9A-Za-z])(?<![0-9A-Za-z][-./:])|(?<=(?<![0-9A-Za-z])[LRD])"
                r"|(?<=(?<![0-9A-Za-z])[MA]-))")


@lru_cache(maxsize=4096)
def _statute_pattern(ident: str) -> re.Pattern[str]:
    parts = re.split(r"[-./:]", ident)
    body = r"\s?[-./:]\s?".join(re.escape(p) for p in parts)  # "70:07" ~ "70.07", "2024-1039" ~ "2024/1039"
    # case-blind only when the identifier has letters ("Cap. 70A"): the same matches, and a digits-only one
    # ("2024-1039", most of them) compiles several times faster without re.I; an audit compiles one per distinct statute
    flags = re.I if any(ch.isalpha() for ch in ident) else 0
    return re.compile(rf"{_IDENT_START}{body}(?![0-9A-Za-z])(?![-./:][0-9A-Za-z])", flags)


_ALNUM_RUN = "([0-9A-Za-z]*)"


@lru_cache(maxsize=64)
def _statute_shape(parts: int) -> re.Pattern[str]:
    """_statute_pattern's shape for any digits-only identifier of `parts` parts, each part an alphanumeric run.

    Each literal part of _statute_pattern is followed by a separator, a space or the end's (?![0-9A-Za-z]),
    never by a letter or digit, so it matches only a whole alphanumeric run: the pattern matches where this
    shape matches with its runs equal to the parts, with the same end. One compiled shape serves every
    identifier (compiling one pattern per distinct statute costs a share of the priors' CPU that grows with the corpus)."""
    body = r"\s?[-./:]\s?".join([_ALNUM_RUN] * parts)
    return re.compile(rf"{_IDENT_START}{body}(?![0-9A-Za-z])(?![-./:][0-9A-Za-z])")


def _statute_matches(ident: str, index: PageIndex) -> Iterator[re.Match[str]]:
    """_statute_pattern(ident).finditer(index.search_text), for an identifier of ASCII digits and separators,
    without compiling it:
    a match starts at a digit that starts a run of ASCII digits, so only those starts that begin with the
    identifier's first part are tried (finditer's order, and a start inside an earlier match skipped)."""
    parts = _SEP_SPLIT_RE.split(ident)
    shape = _statute_shape(len(parts))
    text, first, end = index.search_text, parts[0], 0
    for pos in index.ascii_digit_starts():
        if pos >= end and text.startswith(first, pos) and (m := shape.match(text, pos)) and list(m.groups()) == parts:
            end = m.end()
            yield m


@lru_cache(maxsize=8192)
def statute_identifier(raw: str) -> str | None:
    rest = _STATUTE_RAW_RE.sub("", raw, count=1)
    m = _IDENT_RE.search(rest)
    if not m:
        return None
    return m.group(0).rstrip(".,;:)(/-") or None


def _number_occurrences(value: Value, index: PageIndex) -> list[Occurrence]:
    claim = _claim_number(value.raw, value.type, value.number)
    if claim is None:
        return []
    distinctive = _claim_digits(claim.text) >= 3
    out: list[Occurrence] = []
    for tok in index.numbers_between(claim.value - claim.tolerance * 1.000001, claim.value + claim.tolerance * 1.000001):
        if not any(claim.matches(v) for v in tok.values):
            continue
        if not _unit_compatible(claim, tok.unit):
            continue
        # a count in words ('2 milliards') agrees with the page's figure in words ('2 milliards d'euros')
        unit_agrees = tok.unit == claim.unit or (claim.unit in ("money", None) and tok.magnitude > 1)
        out.append(Occurrence(tok.start, tok.end, unit_agrees or distinctive))
        if len(out) >= _MAX_OCCURRENCES:
            break
    return out


def _unit_compatible(claim: ClaimNumber, page_unit: str | None) -> bool:
    return page_unit is None or claim.unit is None or page_unit == claim.unit


def _statute_occurrences(value: Value, index: PageIndex) -> list[Occurrence]:
    ident = statute_identifier(value.raw)
    if ident is None:
        return []
    has_sep = _SEP_SPLIT_RE.search(ident) is not None
    out: list[Occurrence] = []
    text = index.search_text
    # ASCII digits and separators ("2024-1039", most of them) by the shared shape; others (letters, other
    # digits) by their own pattern
    shared = _DIGITS_IDENT_RE.fullmatch(ident) is not None
    for m in _statute_matches(ident, index) if shared else _statute_pattern(ident).finditer(text):
        keyword_before = bool(_KW_BEFORE_RE.search(text, max(0, m.start() - 30), m.start()))
        out.append(Occurrence(m.start(), m.end(), has_sep or keyword_before))
        if len(out) >= _MAX_OCCURRENCES:
            break
    return out


def _date_occurrences(value: Value, index: PageIndex) -> list[Occurrence]:
    parsed = _claim_date(value.raw)
    if parsed is None:
        return []
    year, month, day = parsed
    out: list[Occurrence] = []
    year_on_page: bool | None = None  # loop-invariant: computed once, on the first year-less candidate
    for tok in index.dates:
        if tok.year == NO_YEAR and tok.month == month and (day is None or tok.day == day):
            # "November 2" on a page that names the year elsewhere (a dateline): weak, the year is not beside it;
            # also for a claim's "November 2024", whose month the page names with a day ("screenings on May 2")
            if year_on_page is None:
                year_on_page = _year_on_page(year, index)
            if not year_on_page:
                continue
            out.append(Occurrence(tok.start, tok.end, False))
        elif tok.year != year or tok.month != month:
            continue
        elif day is None or tok.day == day:
            out.append(Occurrence(tok.start, tok.end, True))
        elif tok.day is None:
            out.append(Occurrence(tok.start, tok.end, False))  # the month is right, the day unconfirmed
        else:
            continue
        if len(out) >= _MAX_OCCURRENCES:
            break
    return out


def _year_on_page(year: int, index: PageIndex) -> bool:
    """Does the page name the year anywhere (as a number, or inside a full date)?"""
    if index.numbers_between(year - 0.01, year + 0.01):
        return True
    return any(d.year == year for d in index.dates)


def _needle_occurrences(value: Value, index: PageIndex) -> list[Occurrence]:
    out: list[Occurrence] = []
    for needle in value.needles:
        if len(needle) < 3 or re.fullmatch(r"(?:19|20)\d\d|[A-Za-z]+", needle):
            continue  # bare years and month names carry no figure
        pat = re.compile(rf"(?<![0-9A-Za-z]){re.escape(needle)}(?![0-9A-Za-z])", re.I)
        strong = len(needle) >= 4 and any(c.isdigit() for c in needle)
        for m in pat.finditer(index.search_text):
            out.append(Occurrence(m.start(), m.end(), strong))
            if len(out) >= _MAX_OCCURRENCES:
                return out
    return out


@lru_cache(maxsize=8192)  # a claim's value is read on each page it cites; a "€" makes most values non-ASCII
def _folded(value: Value) -> Value:
    return replace(value, raw=search_form(value.raw), needles=tuple(search_form(n) for n in value.needles))


def find_occurrences(value: Value, index: PageIndex) -> list[Occurrence]:
    """Every place the value's figure appears on the page (see module doc for what counts)."""
    if not value.raw.isascii():  # read the claim the way the page is read: full-width digits, other dashes
        value = _folded(value)
    if value.type in KIND_TYPES:
        return [Occurrence(s, e, strong) for s, e, strong in kind_spans(value, index)]
    if value.type in _NUMERIC_TYPES:
        occ = _number_occurrences(value, index)
        if value.type == "pct" and value.number is not None and not any(ch.isdigit() for ch in value.raw):
            occ += [Occurrence(s, e, strong) for s, e, strong in kind_spans(value, index)]  # 'fünf Prozent'
        if occ or _claim_number(value.raw, value.type, value.number) is not None:
            return occ
    elif value.type == "statute":
        if statute_identifier(value.raw) is not None:
            return _statute_occurrences(value, index)
    elif value.type == "date":
        if _claim_date(value.raw) is not None:
            return _date_occurrences(value, index)
    elif value.type == "year":
        # a year alone never supports a figure; a salient one ('2019 was the warmest year') is found as itself
        return [Occurrence(s, e, strong) for s, e, strong in kind_spans(value, index)] if value.salient else []
    return _needle_occurrences(value, index)
