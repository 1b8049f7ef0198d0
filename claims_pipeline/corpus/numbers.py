"""Reading a written figure as a number, and writing a number the ways a page may print it.

Pure string work, no regexes over whole lines: callers hand in the digits they already matched.
"""

from __future__ import annotations

import re

# Group separators a page may use between thousands: apostrophe (Swiss), NBSP, narrow NBSP, thin space, and a
# plain space (only where values.NUM accepts one: at most three digits before it, exactly three after).
GROUP_CHARS = "'’\u00a0\u202f\u2009 "
_GROUP_TRANS = str.maketrans({c: "" for c in GROUP_CHARS})
_DIGIT_GROUP_RE = re.compile(r"\d(?:[\d.,]|[:'’\u00a0\u202f\u2009](?=\d)|(?<!\d{4}) (?=\d{3}(?!\d)))*\d|\d")

MAGNITUDES: dict[str, float] = {
    "k": 1e3, "thousand": 1e3, "thousands": 1e3,
    "m": 1e6, "mn": 1e6, "mln": 1e6, "mio": 1e6, "million": 1e6, "millions": 1e6,
    "bn": 1e9, "b": 1e9, "billion": 1e9, "billions": 1e9, "mrd": 1e9, "milliard": 1e9, "milliards": 1e9,
    "millionen": 1e6, "milliarde": 1e9, "milliarden": 1e9,
    "lakh": 1e5, "lakhs": 1e5, "lac": 1e5, "crore": 1e7, "crores": 1e7,
    "tn": 1e12, "trillion": 1e12,
    "万": 1e4, "萬": 1e4, "億": 1e8, "亿": 1e8, "兆": 1e12, "千": 1e3,
}
MYRIAD_CHARS = "万萬億亿兆"


def parse_number(digits: str, *, has_magnitude: bool = False, decimal_comma: bool = False) -> float | None:
    """Parse '1,234.5', '1.234,5', "1'000'000", '6,32', '77.700' (thousands) ... into a float.

    A lone separator followed by exactly three digits is read as a thousands separator (money style), unless
    it is a point and a magnitude word follows ('€1.250M' is 1.25 million, '$1,500 million' 1.5 billion), or a
    comma before a magnitude written with a decimal comma (decimal_comma: '1,250 Mio.' is 1.25 million). With both '.' and ',' the last one is the decimal.
    """
    d = digits.translate(_GROUP_TRANS).strip(".,")
    if not d:
        return None
    dots, commas = d.count("."), d.count(",")
    try:
        if dots and commas:
            dec = "." if d.rfind(".") > d.rfind(",") else ","
            grp = "," if dec == "." else "."
            return float(d.replace(grp, "").replace(dec, "."))
        sep = "." if dots else "," if commas else ""
        if not sep:
            return float(d)
        parts = d.split(sep)
        if len(parts) > 2:  # repeated separator: thousands grouping
            return float("".join(parts)) if all(len(p) == 3 for p in parts[1:]) else None
        # with a decimal comma ('1.250 Mio.', German), a point groups thousands: 1,250 million
        if len(parts[1]) == 3 and (not has_magnitude or (sep == ("." if decimal_comma else ","))) and parts[0] != "0":
            return float("".join(parts))
        return float(parts[0] + "." + parts[1])
    except ValueError:
        return None


def digit_groups(raw: str) -> list[str]:
    """Digit runs of a raw figure, with inner separators kept ('€1,300.5 k' -> ['1,300.5'])."""
    return [g.strip(".,") for g in _DIGIT_GROUP_RE.findall(raw)]


def thousands_stripped(d: str) -> str | None:
    """'300,000' -> '300000', '1.234.567' -> '1234567'; None unless every later group has 3 digits."""
    parts = re.split(r"[.,'’\u00a0\u202f\u2009 ]", d)
    if len(parts) >= 2 and parts[0] and all(len(p) == 3 for p in parts[1:]):
        return "".join(parts)
    return None


def group_variants(d: str) -> list[str]:
    """The reference separator variants of one digit group (docs/decisions/0001), plus apostrophe/space/colon forms."""
    out = [d]
    if "," in d:
        out.append(d.replace(",", "."))
    if "." in d:
        out.append(d.replace(".", ","))
    if ":" in d:  # colon chapter numbers: 'Cap. 70:07' is printed '70.07' or '70-07' on many portals
        out += [d.replace(":", "."), d.replace(":", "-")]
    if any(c in d for c in GROUP_CHARS):
        plain = d.translate(_GROUP_TRANS)
        out += [plain, d.translate(str.maketrans(GROUP_CHARS, " " * len(GROUP_CHARS)))]
    ts = thousands_stripped(d)
    if ts:
        out.append(ts)
    return out


def integer_renderings(n: float) -> list[str]:
    """How a page may print a whole number ≥ 1000: 1,300,000 / 1.300.000 / 1300000 / 1 300 000 / 1'300'000."""
    if n != int(n) or n < 1000 or n >= 1e16:
        return []
    i = int(n)
    comma = f"{i:,}"
    return [comma, comma.replace(",", "."), str(i), comma.replace(",", " "), comma.replace(",", "'")]


def myriad_renderings(n: float) -> list[str]:
    """East-Asian myriad forms of a number: 50000 -> 5万/5萬; 120000000 -> 1.2億/1.2亿/12,000万."""
    out: list[str] = []
    for unit, chars in ((1e8, "億亿"), (1e4, "万萬")):
        if n >= unit:
            q = n / unit
            if abs(q * 100 - round(q * 100)) < 1e-9:  # at most two decimals in that unit
                s = f"{q:,.2f}".rstrip("0").rstrip(".")
                out += [s + c for c in chars]
                if "," in s:
                    out += [s.replace(",", "") + c for c in chars]
    return out


def format_plain(n: float) -> str:
    """A short plain rendering: 6.32 -> '6.32', 5.0 -> '5'."""
    return f"{n:.6f}".rstrip("0").rstrip(".") if n != int(n) else str(int(n))
