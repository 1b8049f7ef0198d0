"""Figures inside short model-quoted text, read with the priors' own number- and date-aware matchers.

answer_checks.py asks three questions of a quote or a model's sentence: does it carry the claim's figure (in any local
format: "€1,250" ~ "1 250 €"), which figures of the same type but another value does it carry (a MISMATCH's
evidence), and is every number it states somewhere in a given text (no free numerals).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from claims_pipeline.corpus.records import Value, ValueType
from claims_pipeline.judge.model import ItemValue
from claims_pipeline.priors.context import context_words
from claims_pipeline.priors.dates import NO_YEAR, DateToken, parse_claim_date, tokenize_dates
from claims_pipeline.priors.matching import find_occurrences, statute_identifier
from claims_pipeline.priors.numbers import parse_claim_number, tokenize_numbers
from claims_pipeline.priors.page_index import build_index, search_form, word_stem

_WS_RE = re.compile(r"\s+")
# Typography a model "tidies" when it copies a span: folded on both sides, so only the words and figures count.
_TYPO = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"',
                       "–": "-", "—": "-", "‑": "-", "‐": "-", "−": "-"})
_EDGE_ELLIPSIS_RE = re.compile(r"^(?:\.\.\.|…|\s|[\"'])+|(?:\.\.\.|…|\s|[\"'])+$")


def normalized(text: str) -> str:
    """Whitespace collapsed, NFC, typographic quotes and dashes folded, case folded: the form quotes compare in."""
    return _WS_RE.sub(" ", unicodedata.normalize("NFC", text).translate(_TYPO)).strip().casefold()


def quote_core(quote: str) -> str:
    """The quote without the ellipses and quotation marks a model puts around a span."""
    return _EDGE_ELLIPSIS_RE.sub("", quote.strip())


@lru_cache(maxsize=16)
def normalized_page(text: str) -> str:
    return normalized(text)


def as_value(v: ItemValue) -> Value:
    # ItemValue.type is a plain str (the harness fills it from a Value); Value does not check it at run time
    return Value(type=cast(ValueType, v.type), raw=v.raw, needles=(v.raw,), salient=True, pos=0, end=len(v.raw), number=v.number)


@dataclass(frozen=True, slots=True)
class FigureHits:
    strong: list[str]
    weak: list[str]

    @property
    def any(self) -> bool:
        return bool(self.strong or self.weak)


def figure_hits(value: ItemValue, text: str) -> FigureHits:
    """Where the claim's figure occurs in text, as the priors read a page (strong: unit agrees or distinctive)."""
    index = build_index(text)
    occ = find_occurrences(as_value(value), index)
    return FigureHits([text[o.start:o.end] for o in occ if o.strong], [text[o.start:o.end] for o in occ if not o.strong])


_STATUTE_KW = r"(?:Loi|Law|Ley|Gesetz|Decree|D[ée]cret|Regulations?|Act|Cap|Chapter|Articles?|Art|Section|Sec|§§?|No|Nr|Ordinance)"
_STATUTE_IN_TEXT_RE = re.compile(rf"\b{_STATUTE_KW}\.?\s*(?:n[°oº]\.?\s*)?\d[0-9A-Za-z./:-]*", re.I)


def _is_year_like(text: str, value: float) -> bool:
    return text.isdigit() and len(text) == 4 and 1800 <= value <= 2200


def _claimed_numbers(values: list[ItemValue]) -> list:
    return [c for v in values if v.type in ("pct", "money", "number")
            for c in [parse_claim_number(v.raw, v.type, v.number)] if c is not None]


def other_figures(value: ItemValue, text: str, claimed: list[ItemValue] | None = None) -> list[str]:
    """Figures in text of the claim's type whose value differs from the claim's (a MISMATCH/STALE's evidence).

    claimed: all the claim's figures; one of them on the page ("7.25 % for a second home" quoted against the
    claim's "4.5% ..., 7.25% for a second home") is the claim's own figure for another thing, not a different one.
    """
    folded = search_form(text)
    out: list[str] = []
    if value.type in ("pct", "money", "number"):  # number: a count ('2 milliards'), compared with no unit
        claim = parse_claim_number(value.raw, value.type, value.number)
        own = _claimed_numbers([v for v in (claimed or []) if v.type == value.type])
        dates = tokenize_dates(folded)
        tokens = tokenize_numbers(folded)
        for tok in tokens:
            if any(d.start <= tok.start and tok.end <= d.end for d in dates):
                continue  # part of a date, not an amount
            if any(o is not tok and o.start <= tok.start and tok.end <= o.end and (o.end - o.start) > (tok.end - tok.start)
                   for o in tokens):
                continue  # a part of a space-grouped number ("1" of "€ 1 250"): the whole number is read
            if claim is not None and any(claim.matches(v) for v in tok.values):
                continue
            if any(c.matches(v) for c in own for v in tok.values):
                continue
            if value.type == "pct" and tok.unit != "pct":
                continue
            if value.type in ("money", "number") and (tok.unit == "pct" or (tok.unit is None and _is_year_like(tok.text, tok.values[0]))):
                continue
            out.append(text[tok.start:tok.end])
    elif value.type == "date":
        claimed_date = parse_claim_date(value.raw)
        for d in tokenize_dates(folded):
            if d.year == NO_YEAR or d.month is None:
                continue
            if claimed_date is not None and (d.year, d.month) == claimed_date[:2] and (
                    claimed_date[2] is None or d.day in (None, claimed_date[2])):
                continue
            out.append(text[d.start:d.end])
    elif value.type == "statute":
        ident = statute_identifier(value.raw)
        for m in _STATUTE_IN_TEXT_RE.finditer(folded):
            other = statute_identifier(m.group(0))
            if other and (ident is None or _ident_key(other) != _ident_key(ident)):
                out.append(text[m.start():m.end()])
    else:  # a year or a figure we cannot parse: any other 4-digit year / number
        for tok in tokenize_numbers(folded):
            if value.number is None or all(abs(v - value.number) > 1e-9 for v in tok.values):
                if value.raw.strip() != tok.text.strip():
                    out.append(text[tok.start:tok.end])
    return list(dict.fromkeys(out))


# ---- does a quote speak of the claim's thing ------------------------------------------------------------------

# A clause is the sentence or ;-part holding the figure, up to a parenthesis after it (a link label, a stamp).
# Commas do not split it: "Stamp duty on land transfer, vendor pays 7.5%" is one thing.
_CLAUSE_START_RE = re.compile(r"[;.!?]\s")
_CLAUSE_END_RE = re.compile(r"[;.!?]\s|\s[—–]\s|\(")
_QUOTE_WORD_RE = re.compile(r"[^\W\d_]+")


def clause_words(claim_text: str, figure: str) -> list[str]:
    """The claim's context words in the clause around its figure ("... gain on a main home sold within 5 years at
    18%" of "...; the annual levy of 0.8% stays due"), the figure's own words left out; the whole claim's when
    the clause has none."""
    at = claim_text.find(figure) if figure else -1
    if at >= 0:
        start = 0
        m: re.Match[str] | None
        for m in _CLAUSE_START_RE.finditer(claim_text, 0, at):
            start = m.end()
        m = _CLAUSE_END_RE.search(claim_text, at + len(figure))
        end = m.start() if m else len(claim_text)
        # the figure's own words ("February" of "1 February 2026") say nothing about what it is
        words = context_words(claim_text[start:at] + " " + claim_text[at + len(figure):end])
        if words:
            return words
    return context_words(claim_text)


def shared_words(claim_words: list[str], quote: str) -> list[str]:
    """The claim's words the quote also uses: the same crude stem as the priors use, or one word the start of
    the other ("price" ~ "prices", "resident" ~ "residents")."""
    words = {w.casefold() for w in _QUOTE_WORD_RE.findall(quote) if len(w) >= 3}
    stems = {word_stem(w) for w in words}

    def shared(w: str) -> bool:
        return word_stem(w) in stems or any(len(q) >= 4 and (q.startswith(w) or w.startswith(q)) for q in words)

    return [w for w in claim_words if shared(w)]


def _ident_key(ident: str) -> str:
    return re.sub(r"[-./:]", "-", ident.casefold())


# --- numerals that must be found somewhere -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Numerals:
    values: list[float]  # sorted
    dates: frozenset[tuple[int, int | None, int | None]]


def _numerals(text: str) -> _Numerals:
    folded = search_form(text)
    values = sorted(v for tok in tokenize_numbers(folded) for v in tok.values)
    dates = frozenset((d.year, d.month, d.day) for d in tokenize_dates(folded))
    return _Numerals(values, dates)


@lru_cache(maxsize=16)
def _page_numerals(text: str) -> _Numerals:
    return _numerals(text)


def _has_value(values: list[float], x: float, tolerance: float) -> bool:
    i = bisect.bisect_left(values, x - tolerance)
    return i < len(values) and values[i] <= x + tolerance


def free_numerals(text: str, *sources: str) -> list[str]:
    """Numbers written in text that none of the sources carries (within the rounding text's own precision
    allows: "6.3 %" is carried by "6.32 %"). A date is carried by the same date in any format."""
    if not any(c.isdigit() for c in search_form(text)):
        return []
    folded = search_form(text)
    found = [_page_numerals(s) if len(s) > 2000 else _numerals(s) for s in sources if s]
    dates = tokenize_dates(folded)
    free: list[str] = []
    for d in dates:
        if d.year == NO_YEAR:
            continue  # "5 April": its numbers are checked one by one below
        if not any(_date_carried(d, n.dates) for n in found):
            free.append(text[d.start:d.end])
    full_dates = [d for d in dates if d.year != NO_YEAR]
    for tok in tokenize_numbers(folded):
        if any(d.start <= tok.start and tok.end <= d.end for d in full_dates):
            continue
        carried = False
        for v, dec in zip(tok.values, tok.decimals):
            tolerance = 0.5 * 10 ** (-dec) * tok.magnitude + 1e-9 * max(1.0, abs(v))
            if any(_has_value(n.values, v, tolerance) for n in found):
                carried = True
                break
        if not carried:
            free.append(text[tok.start:tok.end])
    return list(dict.fromkeys(free))


def _date_carried(d: DateToken, dates: frozenset[tuple[int, int | None, int | None]]) -> bool:
    if (d.year, d.month, d.day) in dates:
        return True
    # a date written without a day ("March 2026") is carried by any day of that month
    return d.day is None and any(y == d.year and m == d.month for y, m, _ in dates)
