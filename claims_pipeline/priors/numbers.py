"""Numbers in running text, parsed in their local formats and kept with their positions.

A page says "77 700 €", "77.700 EUR", "€77,700" or "6,32 %"; a claim says "€77,700" or "6.32 %". Priors
compare these as numbers, never as substrings, so "5" is never found inside "1500" and "6.32" matches
"6,32 %". Grouping separators understood: comma, point, space, NBSP (U+00A0), thin space (U+2009), narrow
NBSP (U+202F), apostrophe (' and ’). Magnitude words (million, bn, k, lakh, crore, 万, 億/亿 …) scale the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# Multipliers of the magnitude words and suffixes we understand.
MAGNITUDES: dict[str, float] = {
    "k": 1e3, "thousand": 1e3, "thousands": 1e3, "tsd": 1e3,
    "m": 1e6, "mn": 1e6, "mln": 1e6, "mio": 1e6, "million": 1e6, "millions": 1e6, "millones": 1e6,
    "bn": 1e9, "billion": 1e9, "billions": 1e9, "mrd": 1e9, "milliard": 1e9, "milliards": 1e9,
    "millionen": 1e6, "milliarde": 1e9, "milliarden": 1e9, "md": 1e9, "mds": 1e9,
    "tn": 1e12, "trillion": 1e12,
    "lakh": 1e5, "lakhs": 1e5, "lac": 1e5, "crore": 1e7, "crores": 1e7,
    "万": 1e4, "萬": 1e4, "億": 1e8, "亿": 1e8,
}

_GROUP_SEPS = ",.\u00a0\u2009\u202f'’ "
_LETTER = "A-Za-z\u00c0-\u024f"
_CURRENCY_CODES = (
    "USD|EUR|GBP|CHF|AED|SAR|JPY|CNY|RMB|HKD|SGD|AUD|NZD|CAD|ZAR|INR|BRL|MXN|TRY|PLN|CZK|HUF|RON|SEK|NOK|DKK|"
    "ILS|KRW|THB|IDR|MYR|PHP|VND|BHD|KWD|QAR|OMR|MUR|XCD|KYD|BMD|TWD|NT"
)

# One number: a grouped form (1,234,567.89 / 1.234,5 / 300 000) or a plain one (6,32 / 2024 / 5),
# then an optional magnitude and an optional percent unit.
NUMBER_RE = re.compile(
    rf"""
    (?=\d)                           # cheap first test at each position
    (?<![0-9{_LETTER}])              # not glued to a word or a longer number ("x5", "1500")
    (?<![0-9{_LETTER}][.,])          # not the tail of "v1.5" / "1,5"
    (?P<num>
        \d{{1,3}}(?P<sep>[{_GROUP_SEPS}])\d{{3}}(?:(?P=sep)\d{{3}})*(?:[.,]\d+)?
      | \d+(?:[.,]\d+)?
    )
    (?![.,]?\d)                      # not followed by more digits ("1.2.3", "12,3456")
    (?:
        (?P<mag_short>[kKmM]|bn|Bn|BN)(?![{_LETTER}])
      | [ \u00a0\u202f]?(?P<mag_word>(?i:thousands?|tsd|millionen|millions?|millones|mln|mn|mio|billions?|mrd|milliarden?|milliards?|tn|trillion|lakhs?|lac|crores?))\.?(?![{_LETTER}])
      | [ \u00a0\u202f]?(?P<mag_cjk>[万萬億亿])
      | [ \u00a0\u202f](?P<mag_cur>[kKmM]|Md|Mds|Mrd|Mio)(?=[€$£])   # French "9 M€", "2 Md€", "500 k€"
    )?
    (?P<pct>[ \u00a0\u202f\u2009]?(?:%|％|(?i:per[ ]?cent|percent|pct|percentage[ ]points?|pp|prozent(?:punkte?)?|pour[ ]cent
        |por[ ]ciento|per[ ]cento|percento|procent(?:punt(?:en)?)?|punti[ ]percentuali))(?![{_LETTER}]))?
    """,
    re.VERBOSE,
)

_CURRENCY_BEFORE_RE = re.compile(rf"(?:[€£$¥₹₩₪]|\b(?:{_CURRENCY_CODES}|Rs|Dh|Fr|CHF)\.?)[ \u00a0\u202f]?$", re.I)
_CURRENCY_AFTER_RE = re.compile(
    # "9 millions d'euros", "2 millions de dollars", "1,5 Milliarden Euro", "300 Franken"
    rf"[ \u00a0\u202f]?(?:[€£$¥₹₩₪]|(?:{_CURRENCY_CODES})\b|(?i:(?:d['’][ ]?|de[ ])?(?:euros?|dollars?|francs?)|pounds?|yuan|yen|rupees?|dirhams?|franken|pfund|元|円|圓))"
)


@dataclass(frozen=True, slots=True)
class NumberToken:
    """A number in a text: its possible values (ambiguous "1,234" has two), unit, span and decimals."""

    values: tuple[float, ...]
    unit: str | None  # "pct" | "money" | None
    start: int
    end: int
    text: str
    decimals: tuple[int, ...]  # decimals of each interpretation (for the rounding tolerance)
    magnitude: float = 1.0

    @property
    def significant_digits(self) -> int:
        return significant_digits(self.text)


def significant_digits(text: str) -> int:
    """Digits that carry information: '6.32' → 3, '1500' → 2, '5.00' → 3, '77,700' → 3."""
    m = re.search(r"\d[\d.,\u00a0\u2009\u202f'’ ]*", text)
    if not m:
        return 0
    body = m.group(0).strip()
    interps = _interpretations(body)
    digits, decimals = interps[0][1], interps[0][2]
    if decimals == 0:
        digits = digits.rstrip("0") or "0"
    return len(digits.lstrip("0")) or 1


def _interpretations(num: str) -> list[tuple[float, str, int]]:
    """Possible readings of a numeric string: (value, all digits, decimals). Ambiguous '1,234' gives two."""
    num = num.strip()
    seps = [c for c in num if not c.isdigit()]
    digits_only = "".join(c for c in num if c.isdigit())
    if not seps:
        return [(float(num), digits_only, 0)]
    groups = re.split(r"\D", num)  # the digits NUMBER_RE reads: any script's ("३.५"), as seps above
    if len(seps) == 1:
        sep = seps[0]
        int_part, frac = groups[0], groups[1]
        if sep in ",." and len(frac) == 3 and len(int_part) <= 3 and int_part != "0":
            # "1,234" / "1.234": thousands or decimals: keep both readings (the grouping one first)
            return [(float(int_part + frac), digits_only, 0), (float(f"{int_part}.{frac}"), digits_only, 3)]
        if sep in ",.":
            return [(float(f"{int_part}.{frac}"), digits_only, len(frac))]
        return [(float(int_part + frac), digits_only, 0)]  # space / apostrophe: grouping
    last = seps[-1]
    group_sep = seps[0]
    if last != group_sep and last in ",." and all(s == group_sep for s in seps[:-1]):
        int_digits = "".join(groups[:-1])
        return [(float(f"{int_digits}.{groups[-1]}"), digits_only, len(groups[-1]))]
    return [(float(digits_only), digits_only, 0)]


def _magnitude(m: re.Match[str]) -> float:
    word = m.group("mag_short") or m.group("mag_word") or m.group("mag_cjk") or m.group("mag_cur")
    if not word:
        return 1.0
    return MAGNITUDES.get(word.lower().rstrip("."), 1.0)


# Between the bounds of a range: "2.0–4.8 %", "1.2 to 1.5 million", "€2–€4 k".
_RANGE_BETWEEN_RE = re.compile(r"\s?(?:[–—‑-]|to|bis|à|au)\s?[€£$¥₹]?")


def _with_range_units(tokens: list[NumberToken], text: str) -> list[NumberToken]:
    """A range's lower bound takes the unit and magnitude written once after the upper one: in "2.0–4.8 %"
    the 2.0 is a percentage, in "1.2–1.5 million" 1.2 million (as well as 1.2: both readings are kept).
    Only on a text with a range word or dash somewhere (_RANGE_HINT_RE), asked at the first range found: a
    search of the whole page that most pages never need (a visible share of a page's index if run on every page)."""
    out = list(tokens)
    hinted: bool | None = None
    for k in range(len(out) - 1):
        lo, hi = out[k], out[k + 1]
        if lo.magnitude != 1.0 or hi.start < lo.end or (hi.unit is None and hi.magnitude == 1.0):
            continue
        if _RANGE_BETWEEN_RE.fullmatch(text, lo.end, hi.start) is None:
            continue
        if hinted is None:
            hinted = _RANGE_HINT_RE.search(text) is not None
        if not hinted:
            return tokens
        values = lo.values if hi.magnitude == 1.0 else lo.values + tuple(v * hi.magnitude for v in lo.values)
        decimals = lo.decimals if hi.magnitude == 1.0 else lo.decimals * 2
        out[k] = replace(lo, values=values, decimals=decimals, unit=lo.unit or hi.unit)
    return out


_RANGE_HINT_RE = re.compile(r"[–—‑-]|\b(?:to|bis|au)\b|à", re.I)


def tokenize_numbers(text: str) -> list[NumberToken]:
    """Every number in text, in order. Space-grouped numbers also yield their parts (ambiguous spacing)."""
    numbers: list[NumberToken] = []  # as written
    parts: dict[int, list[NumberToken]] = {}  # index in numbers -> the parts of a space-grouped one
    for m in NUMBER_RE.finditer(text):
        num = m.group("num")
        mag = _magnitude(m)
        interps = _interpretations(num)
        unit: str | None = "pct" if m.group("pct") else None
        if unit is None and (
            _CURRENCY_BEFORE_RE.search(text, max(0, m.start() - 6), m.start())
            or _CURRENCY_AFTER_RE.match(text, m.end())
        ):
            unit = "money"
        numbers.append(
            NumberToken(
                values=tuple(v * mag for v, _, _ in interps),
                unit=unit,
                start=m.start(),
                end=m.end(),
                text=m.group(0),
                decimals=tuple(d for _, _, d in interps),
                magnitude=mag,
            )
        )
        if m.group("sep") == " ":
            # "in 2023 150 000 homes" is unambiguous, but "items 12 345" may be two numbers: keep the parts too
            offset = m.start("num")
            parts[len(numbers) - 1] = [
                NumberToken((float(p.group(0)),), None, offset + p.start(), offset + p.end(), p.group(0), (0,))
                for p in re.finditer(r"\d+", num)
            ]
    if len(numbers) > 1:
        numbers = _with_range_units(numbers, text)
    if not parts:
        return numbers
    return [t for i, n in enumerate(numbers) for t in (n, *parts.get(i, ()))]


@dataclass(frozen=True, slots=True)
class ClaimNumber:
    """A claim's figure as a number with the tolerance its written precision allows."""

    value: float
    tolerance: float
    unit: str | None
    text: str

    def matches(self, page_value: float) -> bool:
        # strictly inside half a unit: "5 %" accepts 5.4 but not 5.5 (which would round away)
        return abs(page_value - self.value) < self.tolerance * (1 - 1e-6) + 1e-12 * max(1.0, abs(self.value))


def parse_claim_number(raw: str, value_type: str, number: float | None = None) -> ClaimNumber | None:
    """The number a pct/money value states. Ambiguous '1,234' reads as thousands for money, decimals for pct.

    The tolerance is half a unit of the last written digit (scaled by the magnitude): '6.3 %' accepts
    6.25–6.35, '€1.3M' accepts 1.25–1.35 million. A given ``number`` (the extractor's) wins on the value.
    """
    tokens = [t for t in tokenize_numbers(raw) if t.values]
    unit = "pct" if value_type == "pct" else "money" if value_type == "money" else None
    if not tokens:
        if number is None:
            return None
        return ClaimNumber(number, 0.5 * 10 ** -_decimals_of(number), unit, raw)
    tok = max(tokens, key=lambda t: (t.magnitude, len(t.text)))  # "€1.3M" → the scaled one
    idx = 0
    if len(tok.values) > 1 and value_type == "pct":
        idx = 1  # '12,345 %' is a decimal comma, not twelve thousand percent
    value, decimals = tok.values[idx], tok.decimals[idx]
    if number is not None and not any(abs(number - v) < 1e-9 * max(1, abs(v)) for v in tok.values):
        # the extractor read it differently (e.g. unscaled): trust the extractor for the value
        if abs(number * tok.magnitude - value) < 1e-6 * max(1, abs(value)):
            pass  # extractor gave the unscaled mantissa; keep the scaled value
        else:
            value = number
    tolerance = 0.5 * 10 ** (-decimals) * tok.magnitude
    return ClaimNumber(value, tolerance, unit, raw)


def _decimals_of(x: float) -> int:
    s = repr(float(x))
    if "e" in s or "." not in s:
        return 0
    frac = s.split(".", 1)[1].rstrip("0")
    return len(frac)
