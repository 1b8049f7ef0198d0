"""Where a claim's figure of the newer kinds (corpus/figure_kinds.py) stands on a page, read the way the claim
reader reads it (docs/decisions/0004):

- duration: the number (digits or words, in any of the six languages: "30", "thirty", "dreißig", "trente") with a
  unit of the same span right after it ("days", "Tage", "jours", "-day"), or the same span in another unit ("2
  weeks" ~ "14 days", "1 year" ~ "12 months"): strong. The number alone, as a plain number: weak.
- measure: the number with the same unit in any of its forms ("1,5 Grad Celsius" ~ "1.5 °C", "3 GW" ~ "3
  gigawatts"): strong; the number alone: weak.
- count: the number with the counted noun (the same 6-letter stem) within 40 characters: strong; alone: weak.
- index: the number with the index's name within 80 characters, or a number of 3 significant digits: strong;
  the number alone: weak.
- rank, ratio: both numbers within 30 characters of each other ("Platz 13 von 35", "13th out of 35", "1 in 20",
  "one in twenty"), or the ratio as a percentage ("one in 20" ~ "5 %", "two thirds" ~ "67 %"), or a fraction
  ("2/3", "two-thirds"): strong; the larger number alone: weak. A multiple ("25 times the", "3-fold"): the number
  with a multiple's word or sign near it ("25 times", "25x", "25-fold", "25-mal"): strong; alone: weak.
- decade: "1950s", "1950's", "'50s", "1950er", "années 50", "años 1950", "anni '50", "jaren 50": strong; a year of
  the decade anywhere: weak.
- a salient year (one that opens a statement): the year as a number or in a date: strong.
- a percentage written in words ("fünf Prozent"): the number in words with a percent word after it: strong (its
  digit forms are the number matcher's).

A weak hit is "found": a kind the page writes in a form not read here still has its number on the page, so the
prior says WEAK_MATCH, never a false TOKENS_ABSENT (priors/build.py decides with these kinds only when a claim has
no pct, money, count-with-magnitude or statute figure).
"""

from __future__ import annotations

import re
from functools import lru_cache

from claims_pipeline.corpus.figure_kinds import (
    _MEASURE_AFTER_RE,
    _SYMBOLS,
    _WORD_UNITS,
    DURATION_FACTORS,
    DURATION_UNITS,
    MONTH_FACTORS,
    kind_reading,
)
from claims_pipeline.corpus.number_words import FORMS_OF
from claims_pipeline.corpus.records import Value
from claims_pipeline.priors.numbers import parse_claim_number
from claims_pipeline.priors.page_index import PageIndex, word_stem

Span = tuple[int, int, bool]  # start, end, strong
_MAX = 400
_UNIT_AFTER_RE = re.compile(
    r"[ \u00a0\u202f-]?(?i:(?:business|working|calendar|consecutive|full)[ \u00a0])?([^\W\d_]+)(?![^\W\d_])")
_PCT_WORD_AFTER_RE = re.compile(
    r"[ \u00a0\u202f]?(?:%|(?i:percent|per cent|prozent|pour cent|por ciento|per cento|procent|percento))")
_MULTIPLE_NEAR_RE = re.compile(r"(?i:times|fold|mal|fois|keer|maal|volte|veces|(?<=\d)\s?[x×](?![^\W\d_]))")
_RANK_NEAR_RE = re.compile(
    r"(?i:platz|rang|rank|ranked|ranking|place|position|posición|puesto|posto|posizione|plaats|positie|classé)")


@lru_cache(maxsize=2048)
def _word_form_re(n: int) -> re.Pattern[str] | None:
    """The number n in words, in any of the six languages, as a page may write it (hyphens or spaces, 'ß')."""
    forms = FORMS_OF.get(n)
    if not forms:
        return None
    alts = sorted((re.escape(f).replace(r"\ ", r"[ \-]").replace("ss", "(?:ss|ß)") for f in forms), key=len, reverse=True)
    return re.compile(rf"(?<![^\W\d_])(?:{'|'.join(alts)})(?![^\W\d_])", re.I)


def _word_hits(index: PageIndex, n: float | None) -> list[tuple[int, int]]:
    """Where the page writes the whole number n in words."""
    if n is None or not float(n).is_integer():
        return []
    rx = _word_form_re(int(n))
    if rx is None:
        return []
    out: list[tuple[int, int]] = []
    text = index.search_text
    for form in FORMS_OF[int(n)]:
        for pos in index.words.get(word_stem(form.split(" ")[0]), ()):
            m = rx.match(text, pos)
            if m is not None:
                out.append((m.start(), m.end()))
    return sorted(set(out))


def _digit_hits(index: PageIndex, value: float, tolerance: float) -> list[tuple[int, int]]:
    """Where the page writes the number in digits, as a plain figure (not a percentage or an amount)."""
    out = []
    for tok in index.numbers_between(value - tolerance * 1.000001, value + tolerance * 1.000001):
        if tok.unit is None and any(abs(v - value) < tolerance * (1 - 1e-6) + 1e-12 * max(1.0, abs(value)) for v in tok.values):
            out.append((tok.start, tok.end))
    return out


def _number_hits(index: PageIndex, value: Value, n: float | None = None) -> list[tuple[int, int]]:
    """The claim's number on the page, in digits (within its written precision) or in words."""
    claim = parse_claim_number(value.raw, "number", value.number if n is None else n)
    if claim is None:
        return []
    target = claim.value if n is None else n
    tol = claim.tolerance if n is None else 0.5 if float(n).is_integer() else claim.tolerance
    return sorted(_digit_hits(index, target, tol) + _word_hits(index, target))


def _duration_spans(value: Value, index: PageIndex) -> list[Span]:
    reading = kind_reading(value.type, value.raw, value.number)
    if reading.number is None:
        return []
    text = index.search_text
    out: list[Span] = []
    for n, unit in _equal_spans(reading.number, reading.unit):
        for s, e in _number_hits(index, value, n if (n, unit) != (reading.number, reading.unit) else None):
            u = _UNIT_AFTER_RE.match(text, e)
            if u is not None and DURATION_UNITS.get(u.group(1).casefold()) == unit:
                out.append((s, u.end(), True))
            elif n == reading.number:
                out.append((s, e, False))
    return out[:_MAX]


def _equal_spans(n: float, unit: str) -> list[tuple[float, str]]:
    """The same span in the other units a page may use ('2 weeks' ~ '14 days'), whole numbers only."""
    out = [(n, unit)]
    for table in (DURATION_FACTORS, MONTH_FACTORS):
        if unit in table:
            for other, f in table.items():
                m = n * table[unit] / f
                if other != unit and m.is_integer() and m > 0:
                    out.append((m, other))
    return out


def _measure_spans(value: Value, index: PageIndex) -> list[Span]:
    reading = kind_reading(value.type, value.raw, value.number)
    text = index.search_text
    out: list[Span] = []
    for s, e in _number_hits(index, value):
        u = _MEASURE_AFTER_RE.match(text, e)
        unit = (_SYMBOLS.get(u.group("sym") or "") or _WORD_UNITS.get((u.group("word") or "").casefold(), "")) if u else ""
        out.append((s, u.end(), True) if u is not None and unit == reading.unit else (s, e, False))
    return out[:_MAX]


def _near_word_spans(value: Value, index: PageIndex, reach: int, distinctive: bool = False) -> list[Span]:
    reading = kind_reading(value.type, value.raw, value.number)
    out: list[Span] = []
    for s, e in _number_hits(index, value):
        d = index.nearest_word(reading.unit, (s + e) // 2) if reading.unit else None
        out.append((s, e, distinctive or (d is not None and d <= reach)))
    return out[:_MAX]


def _rank_spans(value: Value, index: PageIndex) -> list[Span]:
    reading = kind_reading(value.type, value.raw, value.number)
    first, second = reading.number, reading.second
    if first is None:
        return []
    firsts = _number_hits(index, value, first)
    text = index.search_text
    out: list[Span] = []
    if second is None:  # 'Platz 13', 'ranked 13th'; a multiple: '25 times', '25x', '25-fold', '25-mal'
        near_re = _MULTIPLE_NEAR_RE if value.type == "ratio" else _RANK_NEAR_RE
        for s, e in firsts:
            near = near_re.search(text, max(0, s - 20), min(len(text), e + 20)) is not None
            out.append((s, e, near))
        return out[:_MAX]
    seconds = _number_hits(index, value, second)
    for s2, e2 in seconds:
        strong = any(0 <= s2 - e1 <= 30 or 0 <= s1 - e2 <= 30 for s1, e1 in firsts)
        out.append((s2, e2, strong))
    share = 100.0 * first / second if second else None
    if share is not None:  # 'one in 20' ~ '5 %'; 'two thirds' ~ '67 %'
        tol = 1.5 if value.type == "ratio" and share < 100 else 0.5
        for tok in index.numbers_between(share - tol, share + tol):
            if tok.unit == "pct":
                out.append((tok.start, tok.end, True))
    if value.type == "ratio" and first.is_integer() and second.is_integer():
        for m in re.finditer(rf"(?<![\d.,/]){int(first)}/{int(second)}(?![\d/])", text):  # '2/3'
            out.append((m.start(), m.end(), True))
    return sorted(out)[:_MAX]


@lru_cache(maxsize=512)
def _decade_re(year: int) -> re.Pattern[str]:
    yy = f"{year % 100:02d}"
    return re.compile(
        rf"(?<![\d.,]){year}(?:['’]?s|er)(?![^\W\d_])|['’]{yy}s(?![^\W\d_])"
        rf"|(?i:années|jaren|años|anni)\s['’]?(?:{year}|{yy})(?!\d)", re.I)


def _decade_spans(value: Value, index: PageIndex) -> list[Span]:
    if value.number is None:
        return []
    year = int(value.number)
    out: list[Span] = [(m.start(), m.end(), True) for m in _decade_re(year).finditer(index.search_text)]
    for tok in index.numbers_between(year - 0.01, year + 9.01):
        if tok.unit is None and any(float(v).is_integer() and year <= v <= year + 9 for v in tok.values):
            out.append((tok.start, tok.end, False))
    out += [(d.start, d.end, False) for d in index.dates if year <= d.year <= year + 9]
    return sorted(out)[:_MAX]


def _year_spans(value: Value, index: PageIndex) -> list[Span]:
    digits = re.search(r"\d{4}", value.raw)
    if digits is None:
        return []
    year = int(digits.group())
    out: list[Span] = [(t.start, t.end, True) for t in index.numbers_between(year - 0.01, year + 0.01) if t.unit is None]
    out += [(d.start, d.end, True) for d in index.dates if d.year == year]
    return sorted(out)[:_MAX]


def _pct_word_spans(value: Value, index: PageIndex) -> list[Span]:
    """A percentage written in words on the page ('fünf Prozent', 'twenty percent')."""
    out: list[Span] = []
    for s, e in _word_hits(index, value.number):
        if (u := _PCT_WORD_AFTER_RE.match(index.search_text, e)) is not None:
            out.append((s, u.end(), True))
    return out


KIND_TYPES = ("duration", "measure", "count", "index", "rank", "ratio", "decade")


def kind_spans(value: Value, index: PageIndex) -> list[Span]:
    """Every place the value of a newer kind stands on the page (see the module doc)."""
    t = value.type
    if t == "duration":
        return _duration_spans(value, index)
    if t == "measure":
        return _measure_spans(value, index)
    if t == "count":
        return _near_word_spans(value, index, 40)
    if t == "index":
        return _near_word_spans(value, index, 80, distinctive=_significant(value) >= 3)
    if t in ("rank", "ratio"):
        return _rank_spans(value, index)
    if t == "decade":
        return _decade_spans(value, index)
    if t == "year":
        return _year_spans(value, index)
    if t == "pct":
        return _pct_word_spans(value, index)
    return []


def _significant(value: Value) -> int:
    digits = re.search(r"\d[\d.,]*", value.raw)
    return len(re.sub(r"\D", "", digits.group()).lstrip("0")) if digits else 0
