"""Figures in a (masked) claim line: money, percentages, statutes, dates (salient) and bare years (not salient);
then the other kinds of corpus/figure_kinds.py (durations, measures, counts, ranks, ratios, decades, index values,
numbers in words: docs/decisions/0004), read before bare years. extract_values is the entry point.

Follows the reference rules (docs/decisions/0001: regexes applied in a fixed order, each match reserving its span
so later types cannot overlap it) without their false positives (docs/decisions/0002): statute keywords need a word
boundary, magnitude words need one too, and more forms are read (colon chapters, ROC/era years, myriad numerals, apostrophe and
NBSP/thin-space groupings, 'per cent'). The caller masks URLs and stamp dates first, so nothing is read from a URL.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import lru_cache

from claims_pipeline.corpus.figure_kinds import SENTENCE_START_RE, SUBJECT_VERB_RE, has_number_words, read_kinds
from claims_pipeline.corpus.numbers import (
    MAGNITUDES,
    MYRIAD_CHARS,
    digit_groups,
    format_plain,
    group_variants,
    integer_renderings,
    myriad_renderings,
    parse_number,
)
from claims_pipeline.corpus.records import Value, ValueType

MONTHS = (
    r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?"
    r"|Sep(?:t|tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
)
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]
CCY = (
    "USD|EUR|GBP|CHF|AED|SAR|JPY|CNY|HKD|SGD|AUD|NZD|CAD|ZAR|INR|BRL|MXN|TRY|PLN|CZK|HUF|RON|SEK|NOK|DKK|ILS|"
    "KRW|THB|IDR|MYR|PHP|VND|BHD|KWD|QAR|OMR|MUR|XCD|KYD|BMD|TWD|NTD|BWP|MKD|RMB"
)
# A number: digits with '.', ',' inside, or a Swiss/NBSP/thin-space group separator followed by 3 digits. A
# plain space groups thousands too ('1 000 000 EUR', '€300 000', '1 000,50 €': how many French and Swiss
# writers type them), but only between a run of at most three digits and exactly three more, so '2024 500 EUR'
# stays a year and 500 EUR. Without it '1 000 000 EUR' would read as '000 EUR', a salient 0.
# At most 40 characters after the first digit (the longest real figure, '1,000,000,000,000.00', has 20): a figure
# may start at any digit after a ',' or a group space, and from each such start an unbounded run would read on to
# the end of a list of numbers ('1,2,3,…': quadratic in its length).
_NUM_REST = r"(?:[\d.,]|['’\u00a0\u202f\u2009](?=\d{3})|(?<!\d{4}) (?=\d{3}(?!\d))){0,40}"
NUM = r"\d" + _NUM_REST
# Magnitude words after a figure ('€1.3M', '5 bn', '₹5 lakh', '2,5 Mrd.'); numbers.MAGNITUDES holds their values.
MAG_WORDS = ("k|mn|mln|mio|m|bn|b|mrd|million|millions|billion|billions|milliards?|thousand|thousands|tn|trillion"
             "|lakhs?|lac|crores?|millionen|milliarden?")
MAG = rf"(?:\s?(?:{MAG_WORDS})\b)"
MYRIAD = f"[{MYRIAD_CHARS}]"
CJK_CCY = r"(?:円|元|圓|日圓|新台幣|台幣)"
# Scripts written without spaces between words (CJK, kana, Hangul, Thai): '年収1,200万円', '稅率為45%'. Their
# letters are \w to the regex engine, but a figure right after one is not glued to a word. _GLUE is what
# may not touch a figure's first digit: a word character of any other script, or '.'.
_NO_SPACE_SCRIPTS = "\u0e00-\u0e7f\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uff0f\uff1a-\uffef"
_WORD = rf"[^\W{_NO_SPACE_SCRIPTS}]"
_GLUE = rf"(?:{_WORD}|\.)"

MONEY_SYMBOL_RE = re.compile(rf"[€£$¥₹￥](?:\s?{NUM})(?:{MYRIAD}|{MAG})?", re.I)
CCY_CODES = frozenset(CCY.split("|"))
# Any 3-letter word next to a number; the reader keeps only real currency codes (a set lookup is far cheaper
# than a 45-way case-insensitive alternation tried at every position).
# Two passes (code first, then number first) so a rejected "and 2024" never hides a following "5 EUR".
MONEY_CODE_PRE_RE = re.compile(rf"\b(?P<code>[A-Za-z]{{3}})\s?{NUM}(?:{MYRIAD}|{MAG})?", re.I)
# The currency after the figure: '300 EUR', '2,5 Mio. EUR', '150 萬 TWD'.
MONEY_CODE_POST_RE = re.compile(rf"(?<!{_GLUE}){NUM}(?:\s?{MYRIAD}\s?|{MAG}\.?\s?|\s?)(?P<code>[A-Za-z]{{3}})\b", re.I)
# A symbol after the figure, as French, German and many other writers place it: '300 000 €', '1.000,50 €'.
POST_SYMBOLS = "€£¥₹₩₪₺₽"
MONEY_SYMBOL_POST_RE = re.compile(rf"(?<!{_GLUE}){NUM}(?:\s?{MYRIAD}|{MAG}\.?)?\s?[{POST_SYMBOLS}]", re.I)
MONEY_CJK_RE = re.compile(rf"(?<!{_GLUE}){NUM}\s?{MYRIAD}?\s?{CJK_CCY}|(?<!{_GLUE}){NUM}{MYRIAD}")
# The unit in six languages: '5,3 Prozent', '20 pour cent', '15 por ciento', '7 per cento', '12 procent'.
PCT_UNIT = (r"(?:%|％|pp\b|percentage points?\b|per ?cent\b|percento\b|per ?cento\b|prozent(?:punkte?)?\b"
            r"|pour ?cent\b|por ?ciento\b|procent(?:punt(?:en)?)?\b|punti percentuali\b)")
PCT_RE = re.compile(rf"(?<!{_GLUE})\d{{1,3}}(?:[.,]\d+)?\s?{PCT_UNIT}", re.I)
ISO_DATE_RE = re.compile(rf"(?<!{_WORD})\d{{4}}-\d{{2}}-\d{{2}}(?!{_WORD})")
# The three month forms in one pass: leftmost match wins, so "19 Nov 2024" is read whole before "Nov 2024".
MONTH_DATE_RE = re.compile(rf"\b(?:\d{{1,2}}\s)?(?:{MONTHS})\.?\s(?:\d{{1,2}},\s)?\d{{4}}\b")
# French, German, Dutch, Spanish and Italian month names ('21 novembre 2017', '3. März 2024', '1er janvier 2025', 'Juni 2024'). Those spelt
# as in English (April, August, September, November) are read here only after a '1.' or '1er' day: MONTH_DATE_RE
# reads the English forms.
WORD_MONTHS: dict[str, int] = {
    "janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "août": 8,
    "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12, "decembre": 12,
    "januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "april": 4, "juni": 6, "juli": 7,
    "august": 8, "september": 9, "oktober": 10, "november": 11, "dezember": 12,
    # Dutch, Spanish, Italian: news and policy notes date events this way ("in februari 2025", "en marzo 2024")
    "januari": 1, "februari": 2, "maart": 3, "mei": 5, "augustus": 8, "december": 12,
    "enero": 1, "febrero": 2, "marzo": 3, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8, "septiembre": 9,
    "octubre": 10, "noviembre": 11, "diciembre": 12,
    "gennaio": 1, "febbraio": 2, "aprile": 4, "maggio": 5, "giugno": 6, "luglio": 7, "settembre": 9,
    "ottobre": 10, "dicembre": 12,
}
_ENGLISH_SPELT = frozenset(("april", "august", "september", "november", "december"))
# Spelt as in English but written in lower case: a Dutch or German-style date ("sinds september 2023"), never an
# English one (English capitalises its months, and MONTH_DATE_RE reads those).
_LOWER_ENGLISH_SPELT_ALT = "|".join(sorted(_ENGLISH_SPELT))
_WORD_MONTH_ALT = "|".join(sorted(WORD_MONTHS, key=len, reverse=True))
_NON_ENGLISH_ALT = "|".join(sorted(set(WORD_MONTHS) - _ENGLISH_SPELT, key=len, reverse=True))
WORD_DATE_RE = re.compile(
    rf"(?<![\w.])(?:\d{{1,2}}(?:er|\.)\s(?:{_WORD_MONTH_ALT})|(?:\d{{1,2}}\s)?(?:{_NON_ENGLISH_ALT}|(?-i:{_LOWER_ENGLISH_SPELT_ALT})))\s\d{{4}}(?!\d)",
    re.I)
_WORD_DATE_PARTS_RE = re.compile(
    rf"(?:(?P<day>\d{{1,2}})(?:er|\.)?\s)?(?P<month>{_WORD_MONTH_ALT})\s(?P<year>\d{{4}})", re.I)
# The two guards below open with a plain character set (each first letter in both cases, and 'ſ' 'ı' 'İ' that
# re.IGNORECASE folds to 's' and 'i'), so their scan skips ahead in C; a case-blind alternation alone is tried at
# every position of the line.
# Every WORD_DATE_RE match ends with its month word, one space and a year: found from the years after a letter (a
# digit-led scan skips ahead in C), each then asked whether a month word stands right before it.
_YEAR_AFTER_LETTER_RE = re.compile(r"\d(?<=[^\W\d_]\s\d)\d{3}(?!\d)")
_MONTH_BEFORE_RE = re.compile(rf"(?i:{_WORD_MONTH_ALT})\s$")


def _has_word_month(t: str) -> bool:
    return any(_MONTH_BEFORE_RE.search(t, max(0, m.start() - 12), m.start()) for m in _YEAR_AFTER_LETTER_RE.finditer(t))


# Amounts with a currency written as a word, after the figure and its magnitude word: '9 millions d'euros',
# '1,5 Milliarden Euro', '563 Euro', '2 billion euros'.
MONEY_WORD_RE = re.compile(
    rf"(?<!{_GLUE}){NUM}(?:{MAG}\.?)?\s?(?:d['’]\s?|de\s)?"
    r"(?:euros?|dollars?|pounds?|francs?|livres?|franken|pfund)\b", re.I)
_MONEY_WORD_HINT_RE = re.compile(
    r"[eEdDpPfFlL](?:(?<=[eE])(?i:uro)|(?<=[dD])(?i:ollar)|(?<=[pP])(?i:ound|fund)|(?<=[fF])(?i:ran[ck])|(?<=[lL])(?i:ivre))")
# A count with a magnitude word and no currency: '2 milliards', '5,5 Millionen Menschen', '1.7 million residents'.
# Not the upper bound of a range ('€1.2–1.5 million', 'from €500 to 1 million'): _range_bounds reads that one.
NUMBER_WORD_RE = re.compile(
    rf"(?<!{_GLUE})(?<!\d,)(?<![–—‑-])(?<![–—‑-]\s)(?<!\bto\s)(?<!\bbis\s)(?<!\bau\s)(?<!\bà\s){NUM}\s?(?:millions?|milliards?|billions?|trillions?|millionen|milliarden?|mio\.?|mrd\.?)(?!\w)",
    re.I)
_NUMBER_WORD_HINT_RE = re.compile(r"[iIıİmM](?:(?<=[iIıİ])(?i:lli)|(?<=[mM])(?i:io|rd))")
CJK_DATE_RE = re.compile(r"(?:民國|民国|令和|平成|昭和)?\s?\d{1,4}\s?年\s?\d{1,2}\s?月(?:\s?\d{1,2}\s?日)?")
ERA_YEAR_RE = re.compile(r"(?:民國|民国|令和|平成|昭和)\s?(?:\d{1,3}|元)\s?年")
# The number after the keyword may carry a qualifier or a letter before it: 'Regulation (EU) 2016/679',
# 'Art. L. 112-1', 'Law A-12'.
# Capitals only ('Regular 12', 'Regions 3' are no statutes; the keyword matching ignores case, this does not).
# 'no'/'nr' after a keyword in any case ('la loi no 2019-486', 'Ley no 27.430', 'Law No 12').
# A German or French sub-division after the number belongs to it: '§ 3 Abs. 2', 'Art. 6 Abs. 1 lit. a', 'article 4 al. 2'.
# (a French code's part letter may be glued to its number: "article R112 A-3", "l'article L312")
_STATUTE_TAIL = (r"\s?(?:\([A-Z]{2,8}\)\s?)?(?:(?i:n[oº°]\.?|nr\.?)\s?|(?-i:[A-Z]{0,4})[-\s]|(?-i:[A-Z])\.\s?"
                 r"|(?-i:[LRDA])(?=\d\d))?"
                 r"\d(?:[\w./()-]|:(?=\d))*(?:\s(?-i:Abs\.|Absatz|Satz|S\.|UAbs\.|lit\.|al\.|alinéa|Nr\.)\s?(?:\d+[a-z]?|[a-z])\b)*")
STATUTE_RE = re.compile(
    r"(?:\b(?:Loi|Law|Ley|Legge|Lei|Gesetz|Decreto|D[ée]cret|Decree|Directive|Regulation|Reg(?:\.|\b)|Act|Chap(?:ter)?\.?"
    r"|Cap\.?|Article|Art\.|No\.?|n°|nr\.?|Bekendtg[øo]relse|Verordnung|Section|Sec\.|Artikel|Art[íi]culo|Articolo)|§)"
    + _STATUTE_TAIL,
    re.I,
)
CJK_STATUTE_RE = re.compile(r"第\s?\d+(?:-\d+)?\s?[号號條条]")
YEAR_RE = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
# Law numbers written without a keyword before them, by the habits of their own legal systems: a French code's
# article as its part letter and number ("L312-1-2", "R. 311-3-1-1", "D. 123-4"; the number always has a dash), a
# US executive order ("EO 14058", "E.O. 13985", "Executive Order (14067)", Japanese "大統領令 14067"), a Federal
# Acquisition Regulation part ("FAR 39.104", its name spelt out between: "FAR (Federal Acquisition Regulation)
# 39.104"), an OMB memorandum or circular ("M-19-17", "OMB Memo 19-17", "OMB
# Circular A-130"), an EU act's recital ("recital 84", "overweging 84", "Erwägungsgrund 84", "considérant 84").
# docs/decisions/0004.
CODE_ARTICLE_RE = re.compile(
    r"(?:(?<![\w.\-/])(?:[LRD]\.?\s?\d{3,4}(?:-\d{1,4})+|(?:EO|E\.O\.|Executive\sOrder|Exec\.\sOrder)\s?"
    r"(?:No\.\s?)?(?:\d{5}|\(\d{5}\))|(?:FAR|DFARS)(?:\s\([^()\n]{3,60}\))?\s\d{1,3}\.\d{1,4}(?:-\d{1,4})?"
    r"|OMB\s(?:Memo(?:randum)?\s)?(?:M-)?\d{2}-\d{2}|M-\d{2}-\d{2}|(?:OMB\s)?Circular\s(?:No\.\s)?A-\d{1,3}"
    r"|(?i:recital|overweging|erwägungsgrund|considérant|considerando)\s\(?\d{1,3}\)?)"
    r"|大統領令\s?\d{5})(?![\w\-]|\.\d)")

# ---- the same regexes, written so SRE can skip ahead ------------------------------------------------------
# A pattern that opens with a character class (not `\b` or a lookbehind) lets the regex engine jump from one
# possible first character to the next in C instead of trying the whole pattern at every position; the word
# boundary / lookbehind is checked right after the first character instead (`(?<!\w.)` there is `\b` before
# it). Same matches, same order (tests/fuzzing compare each with its plain form above).


def _first_chars(words: str) -> str:
    """Every character a case-insensitive first letter matches (re folds 's' to 'ſ' too)."""
    return "".join(sorted({c for w in words for c in (w.lower(), w.upper(), "ſ" if w.lower() == "s" else "")}))


def _by_first_letter(alternatives: list[str], ignorecase: bool) -> str:
    """'(?:(?<=[Ll])(?i:oi|aw)|…)': the alternatives grouped by first letter, order kept (the caller
    has consumed the first letter and checked the word boundary before it)."""
    groups: dict[str, list[str]] = {}
    for alt in alternatives:
        groups.setdefault(alt[0].lower() if ignorecase else alt[0], []).append(alt[1:])
    flag = "?i:" if ignorecase else "?:"
    return "(?:" + "|".join(
        rf"(?<=[{_first_chars(k) if ignorecase else k}])({flag}{'|'.join(rest)})" for k, rest in groups.items()
    ) + ")"


_MONEY_CODE_POST_FAST = re.compile(rf"\d(?<!{_GLUE}\d){_NUM_REST}(?:\s?{MYRIAD}\s?|{MAG}\.?\s?|\s?)(?P<code>[A-Za-z]{{3}})\b", re.I)
_MONEY_SYMBOL_POST_FAST = re.compile(rf"\d(?<!{_GLUE}\d){_NUM_REST}(?:\s?{MYRIAD}|{MAG}\.?)?\s?[{POST_SYMBOLS}]", re.I)
_MONEY_CJK_FAST = re.compile(rf"\d(?<!{_GLUE}\d)(?:{_NUM_REST}\s?{MYRIAD}?\s?{CJK_CCY}|{_NUM_REST}{MYRIAD})")
_PCT_FAST = re.compile(rf"\d(?<!{_GLUE}\d)\d{{0,2}}(?:[.,]\d+)?\s?{PCT_UNIT}", re.I)
_ISO_DATE_FAST = re.compile(rf"\d(?<!{_WORD}\d)\d{{3}}-\d{{2}}-\d{{2}}(?!{_WORD})")
_YEAR_FAST = re.compile(r"(?:1(?<!\d1)9|2(?<!\d2)0)\d{2}(?!\d)")
_MONTH_ALTS = ["Jan(?:uary)?", "Feb(?:ruary)?", "Mar(?:ch)?", "Apr(?:il)?", "May", "Jun(?:e)?", "Jul(?:y)?",
               "Aug(?:ust)?", "Sep(?:t|tember)?", "Oct(?:ober)?", "Nov(?:ember)?", "Dec(?:ember)?"]
assert "|".join(_MONTH_ALTS) == MONTHS and not MONTH_DATE_RE.flags & re.I  # case-sensitive: 'may' and 'march' in prose are no months
_MONTH_DATE_FAST = re.compile(
    rf"[\dJFMASOND](?<!\w.)(?:(?<=\d)\d?\s(?:{MONTHS})|{_by_first_letter(_MONTH_ALTS, False)})"
    rf"\.?\s(?:\d{{1,2}},\s)?\d{{4}}\b"
)
_STATUTE_WORDS = ["Loi", "Law", "Ley", "Legge", "Lei", "Gesetz", "Decreto", "D[ée]cret", "Decree", "Directive",
                  "Regulation", r"Reg(?:\.|\b)", "Act", r"Chap(?:ter)?\.?", r"Cap\.?", "Article", r"Art\.", r"No\.?", "n°", r"nr\.?",
                  "Bekendtg[øo]relse", "Verordnung", "Section", r"Sec\.", "Artikel", "Art[íi]culo", "Articolo"]
assert STATUTE_RE.pattern.startswith(r"(?:\b(?:" + "|".join(_STATUTE_WORDS) + ")|§)")
_STATUTE_FAST = re.compile(
    rf"[§{_first_chars('LGDRACNBVS')}](?:(?<!\w.){_by_first_letter(_STATUTE_WORDS, True)}|(?<=§))"
    rf"(?i:{_STATUTE_TAIL})"
)
# MONEY_CODE_PRE_RE starts at a 3-letter word right before a number: find that number's first digit (C speed),
# then the match starts 3 letters (or 3 letters and a space) earlier; the empty group tells which.
_CODE_PRE_DIGIT = re.compile(r"\d(?:(?<=\b[A-Za-z]{3}\d)()|(?<=\b[A-Za-z]{3}\s\d))", re.I)


def _money_code_pre_matches(text: str) -> Iterator[re.Match[str]]:
    """Exactly MONEY_CODE_PRE_RE.finditer(text), found from the digits."""
    end = 0
    for f in _CODE_PRE_DIGIT.finditer(text):
        start = f.start() - (3 if f.group(1) is not None else 4)
        if start < end:
            continue
        m = MONEY_CODE_PRE_RE.match(text, start)
        if m is not None:
            end = m.end()
            yield m


_YEAR_ONLY_RE = re.compile(r"19\d{2}|20[0-3]\d")
_ERA_BASE = {"民國": 1911, "民国": 1911, "令和": 2018, "平成": 1988, "昭和": 1925}
_MON_INDEX = {m[:3].lower(): i + 1 for i, m in enumerate(MONTH_NAMES)}
# A magnitude right after the number ('1.3M', '5 bn', '5万'), read from the text that follows the digits.
_MAG_AFTER_RE = re.compile(rf"\s?(?:({MAG_WORDS})\b|([万萬億亿兆]))", re.I)


def _magnitude(raw: str, last_group: str) -> float | None:
    m = _MAG_AFTER_RE.match(raw[raw.rfind(last_group) + len(last_group):])
    return MAGNITUDES[(m.group(1) or m.group(2)).lower()] if m else None


# ---- needles ---------------------------------------------------------------------------------------------
def _ordered(needles: list[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for n in needles:
        n = n.strip()
        if n and n not in seen:
            seen[n] = None
    return tuple(sorted(seen, key=len, reverse=True))  # stable: ties keep first-seen order


def num_needles(raw: str, number: float | None = None) -> tuple[str, ...]:
    """The reference digit-group variants (docs/decisions/0001) plus renderings of the parsed number (magnitudes, myriads)."""
    out: list[str] = []
    for g in digit_groups(raw):
        out += group_variants(g)
    myriad = next((c for c in raw if c in MYRIAD_CHARS), None)
    if myriad:  # keep '5万' itself, and the other script's character
        for g in digit_groups(raw):
            out += [g + c for c in ("万萬" if myriad in "万萬" else "億亿" if myriad in "億亿" else myriad)]
    if number is not None and (myriad or number >= 1000):
        out += integer_renderings(number)
        out += myriad_renderings(number) if number >= 10_000 else []
        if number >= 1e6 and not myriad:
            for unit, word in ((1e9, "billion"), (1e6, "million")):
                if number >= unit:
                    out.append(f"{format_plain(number / unit)} {word}")
                    break
    return _ordered(out)


def _roc(year: int) -> list[str]:
    return [f"{year - 1911}年", f"民國{year - 1911}年"] if year > 1911 else []


def date_needles(raw: str, year: int | None = None, month: int | None = None, day: int | None = None) -> tuple[str, ...]:
    """The reference forms (year, 'Nov', 'November', 'YYYY-MM', full ISO) plus CJK and dotted day forms."""
    out: set[str] = set()
    if ISO_DATE_RE.fullmatch(raw):
        out |= {raw, raw[:4]}
    m = re.search(rf"({MONTHS})\.?\s(\d{{4}})", raw, re.I) or re.search(rf"({MONTHS})\.?\s\d{{1,2}},\s(\d{{4}})", raw, re.I)
    if m:
        mon = m.group(1)[:3].lower()
        out |= {m.group(2), mon.capitalize(), MONTH_NAMES[_MON_INDEX[mon] - 1], f"{m.group(2)}-{_MON_INDEX[mon]:02d}"}
    for y in YEAR_RE.findall(raw):
        out.add(y)
    if year:
        out.add(str(year))
        out.update(_roc(year))
        if month:
            out |= {f"{year}-{month:02d}", f"{year}年{month}月", MONTH_NAMES[month - 1]}
            out.update(f"{y}{month}月" for y in _roc(year))
            if day:
                name = MONTH_NAMES[month - 1]
                out |= {f"{year}-{month:02d}-{day:02d}", f"{year}年{month}月{day}日", f"{day} {name} {year}",
                        f"{name} {day}, {year}", f"{day:02d}.{month:02d}.{year}", f"{day}.{month}.{year}"}
                out.update(f"{y}{month}月{day}日" for y in _roc(year))
    return tuple(sorted(out))


# ---- per-type readers: match -> (needles, salient, number, (year, month, day)) -------------------------
# Magnitude words written with a decimal comma: '2,5 Mio.', '1,250 Mrd.', '3,2 milliards' (not '1,500 million').
_DECIMAL_COMMA_MAG_RE = re.compile(r"\b(?:mio|mrd|milliards?|mln|millions|millionen|milliarden?)\b", re.I)


def _money(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    groups = digit_groups(raw)
    mag = _magnitude(raw, groups[0]) if groups else None
    number = parse_number(groups[0], has_magnitude=bool(mag),
                          decimal_comma=bool(mag) and _DECIMAL_COMMA_MAG_RE.search(raw) is not None) if groups else None
    if number is not None and mag:
        number *= mag
    return num_needles(raw, number), True, number


def _pct(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    g = digit_groups(raw)
    number = float(g[0].replace(",", ".")) if g else None
    return num_needles(raw), True, number


# 'see Section 3', 'Sec. 2': a document's own sections as often as a law's; a section is salient when its number
# could only be a law's ('Section 83(b)', 'Section 1031', 'sec. 501(c)(3)'), docs/decisions/0004.
_PLAIN_SECTION_RE = re.compile(r"(?i:section|sec\.)\s?\d{1,2}")


def _statute(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    needles = num_needles(raw)
    salient = not needles or not all(_YEAR_ONLY_RE.fullmatch(n) for n in needles)
    if salient and raw[:1] in "Ss" and _PLAIN_SECTION_RE.fullmatch(raw) is not None:
        salient = False
    return needles, salient, None


def _ymd_of(raw: str) -> tuple[int | None, int | None, int | None]:
    if ISO_DATE_RE.fullmatch(raw):
        y, mo, d = (int(x) for x in raw.split("-"))
        return (y, mo, d) if 1 <= mo <= 12 and 1 <= d <= 31 else (y, None, None)
    m = re.match(rf"(\d{{1,2}})\s({MONTHS})\.?\s(\d{{4}})", raw) or None
    if m:
        return int(m.group(3)), _MON_INDEX[m.group(2)[:3].lower()], int(m.group(1))
    m = re.match(rf"({MONTHS})\.?\s(\d{{1,2}}),\s(\d{{4}})", raw)
    if m:
        return int(m.group(3)), _MON_INDEX[m.group(1)[:3].lower()], int(m.group(2))
    m = re.match(rf"({MONTHS})\.?\s(\d{{4}})", raw)
    if m:
        return int(m.group(2)), _MON_INDEX[m.group(1)[:3].lower()], None
    return None, None, None


def _cjk_year(raw: str) -> int | None:
    era = next((e for e in _ERA_BASE if e in raw), None)
    m = re.search(r"(\d{1,4}|元)\s?年", raw)
    if not m:
        return None
    n = 1 if m.group(1) == "元" else int(m.group(1))
    if era:
        return _ERA_BASE[era] + n
    return n + 1911 if n < 200 else n  # a bare 3-digit 年 is a Taiwanese ROC year


def _date(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    y, mo, d = _ymd_of(raw)
    if y is None and ("年" in raw):
        y = _cjk_year(raw)
        mm = re.search(r"(\d{1,2})\s?月", raw)
        dd = re.search(r"(\d{1,2})\s?日", raw)
        mo = int(mm.group(1)) if mm and 1 <= int(mm.group(1)) <= 12 else None
        d = int(dd.group(1)) if dd and mo else None
        return tuple(sorted(set(date_needles(raw, y, mo, d)) | {raw.replace(" ", "")})), True, None
    return date_needles(raw, y, mo, d), True, None


def _word_date(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    m = _WORD_DATE_PARTS_RE.fullmatch(raw)
    if m is None:
        return (raw,), True, None
    year, month = int(m["year"]), WORD_MONTHS[m["month"].lower()]
    day = int(m["day"]) if m["day"] and 1 <= int(m["day"]) <= 31 else None
    return tuple(sorted({raw, *date_needles(raw, year, month, day)})), True, None


def date_parts(raw: str) -> tuple[int | None, int | None, int | None]:
    """(year, month, day) of a date value's raw text, in any of the forms the readers take (None: not known)."""
    if (m := _WORD_DATE_PARTS_RE.fullmatch(raw)) is not None:
        day = int(m["day"]) if m["day"] and 1 <= int(m["day"]) <= 31 else None
        return int(m["year"]), WORD_MONTHS[m["month"].lower()], day
    return _ymd_of(raw)


def _era_year(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    y = _cjk_year(raw)
    return tuple(sorted({raw.replace(" ", ""), *date_needles(raw, y)})), False, None


def _year(raw: str) -> tuple[tuple[str, ...], bool, float | None]:
    return date_needles(raw), False, None


Reader = Callable[[str], tuple[tuple[str, ...], bool, "float | None"]]
Guard = Callable[[str], bool] | None

_CJK_MONEY_CHARS = frozenset(MYRIAD_CHARS + "円元圓幣")
_CJK_MONEY_CHAR_LIST = tuple(sorted(_CJK_MONEY_CHARS))  # one str `in` each beats a character-class regex scan


def _has_cjk_money(t: str) -> bool:  # C scans (not a set built from every character of the line)
    return not t.isascii() and any(ch in t for ch in _CJK_MONEY_CHAR_LIST)


# Exact necessary conditions, found by literal-led scans far cheaper than the regexes they gate (most claim
# lines hold no month name or ISO date).
_MONTH_WORD_RE = re.compile("|".join(m[:3] for m in MONTH_NAMES))  # every month form opens with these (case kept)
_ISO_HINT_RE = re.compile(r"-\d\d-")


def _has_month(t: str) -> bool:
    return _MONTH_WORD_RE.search(t) is not None


def _has_iso_hint(t: str) -> bool:
    return _ISO_HINT_RE.search(t) is not None


# Every PCT_RE match has a digit, then maybe one space, then its unit, which opens with '%', '％', 'p' or 'P'
# (PCT_RE ignores case: "5 Per Cent"; only 'p' and 'P' match 'p' so). Finding that is a far cheaper scan than
# PCT_RE, and more exact than looking for the unit words alone ("support", "recent").
_PCT_HINT_RE = re.compile(r"[%％pP](?:(?<=\d.)|(?<=\d\s.))")


def _has_pct(t: str) -> bool:
    return _PCT_HINT_RE.search(t) is not None


_POST_SYMBOL_RE = re.compile(f"[{POST_SYMBOLS}]")

# CODE_ARTICLE_RE has no literal to skip ahead to, and most lines hold none of its forms: first what each form must
# contain, by substring tests (C-fast) and a scan led by a character set ('L312-', 'M-19', 'A-130').
_CODE_ARTICLE_WORDS = ("EO", "E.O", "Order", "FAR", "OMB", "ecital", "verweging", "rwägungsgrund", "onsid", "大統領令")
_CODE_ARTICLE_DASH_RE = re.compile(r"[LRDMA](?:(?<=[LRD])\.?\s?\d{3,4}-\d|(?<=[MA])-\d)")


def _may_hold_code_article(t: str) -> bool:
    return any(w in t for w in _CODE_ARTICLE_WORDS) or _CODE_ARTICLE_DASH_RE.search(t) is not None


# Order matters (a span taken by an earlier reader blocks later ones): dates before statutes, so "Nov 2024"
# is not "No." + "v 2024"; money before pct; years last.
READERS: tuple[tuple[ValueType, re.Pattern[str], Reader, Guard], ...] = (
    ("money", MONEY_SYMBOL_RE, _money, None),
    ("money", MONEY_CODE_PRE_RE, _money, None),
    ("money", MONEY_CODE_POST_RE, _money, None),
    ("money", MONEY_SYMBOL_POST_RE, _money, lambda t: _POST_SYMBOL_RE.search(t) is not None),
    ("money", MONEY_CJK_RE, _money, _has_cjk_money),
    ("money", MONEY_WORD_RE, _money, lambda t: _MONEY_WORD_HINT_RE.search(t) is not None),
    ("number", NUMBER_WORD_RE, _money, lambda t: _NUMBER_WORD_HINT_RE.search(t) is not None),
    ("pct", PCT_RE, _pct, _has_pct),
    ("date", ISO_DATE_RE, _date, _has_iso_hint),
    ("date", CJK_DATE_RE, _date, lambda t: "年" in t),
    ("date", WORD_DATE_RE, _word_date, _has_word_month),
    ("date", MONTH_DATE_RE, _date, _has_month),
    ("year", ERA_YEAR_RE, _era_year, lambda t: "年" in t),
    ("statute", STATUTE_RE, _statute, None),
    ("statute", CJK_STATUTE_RE, _statute, lambda t: "第" in t),
    ("statute", CODE_ARTICLE_RE, _statute, lambda t: _may_hold_code_article(t)),
    ("year", YEAR_RE, _year, None),
)
# What extract_values runs: each reader's regex as a finditer (the fast equivalents above where there is one).
_FAST: dict[re.Pattern[str], Callable[[str], Iterator[re.Match[str]]]] = {
    MONEY_CODE_PRE_RE: _money_code_pre_matches,
    MONEY_CODE_POST_RE: _MONEY_CODE_POST_FAST.finditer,
    MONEY_CJK_RE: _MONEY_CJK_FAST.finditer,
    MONEY_SYMBOL_POST_RE: _MONEY_SYMBOL_POST_FAST.finditer,
    PCT_RE: _PCT_FAST.finditer,
    ISO_DATE_RE: _ISO_DATE_FAST.finditer,
    MONTH_DATE_RE: _MONTH_DATE_FAST.finditer,
    STATUTE_RE: _STATUTE_FAST.finditer,
    YEAR_RE: _YEAR_FAST.finditer,
}
# Readers are pure functions of the matched text, and the same figures ("2024", "5 %") recur across a corpus:
# each reader keeps its recent answers.
_SCANS = tuple((vtype, _FAST.get(rx, rx.finditer), "code" in rx.groupindex, lru_cache(maxsize=8192)(read), guard)
               for vtype, rx, read, guard in READERS)


_TRAILING_PUNCT = " .,-/\u00a0"
_TAIL_CHARS = _TRAILING_PUNCT + ")"  # what _trim_tail may drop


def _trim_tail(raw: str) -> str:
    """Drop trailing punctuation and an unbalanced ')' ('CAP. 293)' -> 'CAP. 293', '§28-' -> '§28')."""
    while raw:
        if raw[-1] in _TRAILING_PUNCT:
            raw = raw[:-1]
        elif raw[-1] == ")" and raw.count("(") < raw.count(")"):
            raw = raw[:-1]
        else:
            break
    return raw


# Ranges: "2.0–4.8 %", "€1.2–1.5 million", "100 K – 5 M TWD", "5 to 10 %". The unit (and magnitude) is
# written once, after the upper bound; the other bound is a figure of the claim too.
_RANGE_SEP = r"\s?(?:[–—‑-]|to|bis|à|au)\s?"
_LOWER_BOUND_RE = re.compile(rf"(?<![\w.,\-–—‑])(?P<num>\d(?:[\d.,]*\d)?)(?P<mag>{MAG})?{_RANGE_SEP}$", re.I)
_UPPER_BOUND_RE = re.compile(rf"{_RANGE_SEP}[€£$¥₹]?(?P<num>\d(?:[\d.,]*\d)?)(?P<mag>{MAG})(?!\w)", re.I)
_RANGE_HINT_RE = re.compile(r"[–—‑-]|\b(?:to|bis|au)\b|à", re.I)
# A range on the line at all (a necessary condition, one C scan): a separator with a digit after it. Its first
# character comes from a plain set, so the engine skips to the next one in C.
_ANY_RANGE_RE = re.compile(r"[–—‑\-tTbBàÀaA](?:(?<=[–—‑\-àÀ])|(?<=[tT])[oO]|(?<=[bB])[iI][sS]|(?<=[aA])[uU])\s?[€£$¥₹]?\d")


_BETWEEN_BOUNDS_RE = re.compile(r"\s?(?:[–—‑-]|to|bis|à|au)\s?", re.I)


def _scale(raw: str) -> float:
    groups = digit_groups(raw)
    return (_magnitude(raw, groups[0]) or 1.0) if groups else 1.0


def _range_bounds(text: str, values: list[Value], starts: list[int], ends: list[int]) -> list[Value]:
    """The other bound of each pct/money range, and the magnitude a lower money bound takes from the upper."""
    out: list[Value] = []
    for k, v in enumerate(values):
        if v.type not in ("pct", "money"):
            continue
        if v.type == "money" and k + 1 < len(values) and _scale(v.raw) == 1.0:
            # '$2 to $15 million', '€2–€3 Mrd.': both bounds read as amounts, the lower takes the upper's scale
            nxt = values[k + 1]
            if (nxt.type == "money" and nxt.pos >= v.end and _BETWEEN_BOUNDS_RE.fullmatch(text, v.end, nxt.pos)
                    and v.number is not None and (mag := _scale(nxt.raw)) > 1.0):
                values[k] = v = replace(v, number=v.number * mag, needles=num_needles(v.raw, v.number * mag))
        head = text[max(0, v.pos - 5):v.pos]  # a separator ends within 5 chars of the bound: far cheaper to ask
        lower = _LOWER_BOUND_RE.search(text, max(0, v.pos - 40), v.pos) if _RANGE_HINT_RE.search(head) else None
        if lower is not None and not _overlaps(starts, ends, lower.start(), lower.start("num") + len(lower["num"])):
            raw = text[lower.start():lower.end("mag") if lower["mag"] else lower.end("num")]
            needles, salient, number = (_pct if v.type == "pct" else _money)(raw)
            if v.type == "money" and not lower["mag"] and number is not None:
                number *= _scale(v.raw)  # '2–4 k EUR': 2 thousand
                needles = num_needles(raw, number)
            if number != 0 and (number is None or v.number is None or number <= v.number):  # upwards, from a figure
                out.append(Value(type=v.type, raw=raw, needles=needles, salient=salient, pos=lower.start(),
                                 end=lower.start() + len(raw), number=number))
        upper = None
        if v.type == "money" and _RANGE_HINT_RE.search(text, v.end, v.end + 5) and _scale(v.raw) == 1.0:
            upper = _UPPER_BOUND_RE.match(text, v.end)
        if upper is not None and not _overlaps(starts, ends, upper.start("num"), upper.end()):
            raw = upper["num"] + upper["mag"]
            mag = _scale(raw)
            needles, salient, number = _money(raw)  # the upper bound, read as any amount is (magnitude, comma)
            top = number / mag if number is not None else None
            # '€1.2–1.5 million': 1.2 million, the lower bound read the way the upper is ('€1,250–1,500 Mio.':
            # 1.25 million); but in 'from €500 to 1 million' the €500 stands as written
            groups = digit_groups(v.raw)
            low = parse_number(groups[0], has_magnitude=True,
                               decimal_comma=_DECIMAL_COMMA_MAG_RE.search(raw) is not None) if groups else None
            if low is not None and top is not None and low <= top:
                values[k] = Value(type=v.type, raw=v.raw, needles=num_needles(v.raw, low * mag), salient=v.salient,
                                  pos=v.pos, end=v.end, number=low * mag)
            out.append(Value(type="money", raw=raw, needles=needles, salient=salient, pos=upper.start("num"),
                             end=upper.end(), number=number))
    return out


# A range written "between A and B" in the six languages: "between $2 and $15 million", "zwischen 2 und 15 Mrd.
# Euro", "entre 2 et 15 millions d'euros", "tussen 2 en 15 miljoen", "entre el 2 y el 15 %", "tra 2 e 15 milioni".
# The lower bound takes the upper's scale, and its percent sign, as with "to" (one C scan: its first letters).
_BETWEEN_HINT_RE = re.compile(r"[bBzZeEtTfF](?:(?<=[bB])(?i:etween)|(?<=[zZ])(?i:wischen)|(?<=[eE])(?i:ntre)"
                              r"|(?<=[tT])(?i:ussen|ra)|(?<=[fF])(?i:ra))\s(?:(?i:el|la|los|las|il|i)\s)?[€£$¥₹]?\s?\d")
_BETWEEN_LOWER_RE = re.compile(
    rf"(?<![^\W\d_])(?i:between|zwischen|entre|tussen|tra|fra)\s(?:(?i:el|la|los|las|il|i)\s)?(?P<cur>[€£$¥₹]\s?)?"
    rf"(?P<num>\d(?:[\d.,]*\d)?)(?P<mag>{MAG})?\s(?i:and|und|et|en|y|e)\s(?:(?i:el|la|los|las|il|i)\s)?[€£$¥₹]?$")


def _between_bounds(text: str, values: list[Value], starts: list[int], ends: list[int]) -> list[Value]:
    out: list[Value] = []
    for v in values:
        if v.type not in ("pct", "money"):
            continue
        lower = _BETWEEN_LOWER_RE.search(text, max(0, v.pos - 60), v.pos)
        if lower is None:
            continue
        lo, hi = lower.start("cur") if lower["cur"] else lower.start("num"), lower.end("mag") if lower["mag"] else lower.end("num")
        mag = _scale(v.raw) if v.type == "money" and not lower["mag"] else 1.0
        read = next((j for j, o in enumerate(values) if o.pos == lo and o.type == v.type), None)
        if read is not None:  # '$2' read already as an amount: it takes the upper bound's scale
            o = values[read]
            if mag > 1.0 and o.number is not None and _scale(o.raw) == 1.0:
                values[read] = replace(o, number=o.number * mag, needles=num_needles(o.raw, o.number * mag))
            continue
        if _overlaps(starts, ends, lo, hi):
            continue
        raw = text[lo:hi]
        needles, salient, number = (_pct if v.type == "pct" else _money)(raw if v.type == "money" else raw + "%")
        if number is not None and mag > 1.0:
            number *= mag
            needles = num_needles(raw, number)
        if number is not None and number != 0 and (v.number is None or number <= v.number):
            out.append(Value(type=v.type, raw=raw, needles=needles, salient=salient, pos=lo, end=hi, number=number))
    return out


def _overlaps(starts: list[int], ends: list[int], s: int, e: int) -> bool:
    i = bisect_left(starts, e)
    return i > 0 and ends[i - 1] > s


def is_plain_no(statute: str) -> bool:
    """'no 5-year hold': a lower-case 'no' opens a statute number only as 'no.' ('news release no. 84')."""
    return statute[:2] == "no" and statute[2:3] != "."


def extract_values(text: str) -> list[Value]:
    """Every figure in `text` (already masked), in reader order, no two overlapping: the READERS' figures, then
    the other kinds (corpus/figure_kinds.py: durations, counts, measures, ranks, ratios, decades, index values,
    numbers in words), then bare years (a year that opens a statement, "2019 was the warmest year", is salient).
    Each Value's type is its kind."""
    starts: list[int] = []  # reserved spans, sorted; they never overlap, so ends are sorted too
    ends: list[int] = []
    values: list[Value] = []
    _scan(text, _SCANS[:-1], starts, ends, values)
    values += read_kinds(text, starts, ends)
    _scan(text, _SCANS[-1:], starts, ends, values)
    if values and _ANY_RANGE_RE.search(text) is not None:
        values += _range_bounds(text, values, starts, ends)
    if values and _BETWEEN_HINT_RE.search(text) is not None:
        values += _between_bounds(text, values, starts, ends)
    for k, v in enumerate(values):
        if v.type == "year" and (_is_subject_year(text, v) or _is_event_year(text, v) or _is_law_year(text, v)
                                 or ((_is_time_year(text, v) or _is_fiscal_year(text, v))
                                     and not _after_a_figure(text, v, values))):
            values[k] = replace(v, salient=True)
    return values


def may_hold_figure(text: str) -> bool:
    """Can extract_values find a figure in text? False only when it can find none: no digit, and no unit, percent
    or fraction word that a number in words could stand before ('thirty days'). For callers that skip text before
    reading it (most lines of a corpus hold no figure)."""
    return _ANY_DIGIT_RE.search(text) is not None or has_number_words(text)


_ANY_DIGIT_RE = re.compile(r"\d")


def _is_subject_year(text: str, v: Value) -> bool:
    """'2019 was the warmest year on record': a year that opens a statement and is its subject. A bold term that
    opens a paragraph ('**Open data** 2023 ist ...', a glossary's or a spec sheet's run-in heading) is a title,
    and the statement opens after it."""
    if SUBJECT_VERB_RE.match(text, v.end) is None and _CHRONOLOGY_AFTER_RE.match(text, v.end) is None:
        return False
    return (SENTENCE_START_RE.search(text, max(0, v.pos - 8), v.pos) is not None
            or _RUN_IN_TITLE_RE.search(text, max(0, v.pos - 160), v.pos) is not None)


# A run-in title: a bold phrase (with maybe a colon) opening the line or a list item, then the statement.
_RUN_IN_TITLE_RE = re.compile(r"(?:^|\n)[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)[^*_\n]{1,120}(?:\*\*|__)[ \t]*:?[ \t]*"
                              r"(?:(?i:seit|since|depuis|sinds|desde|dal|in|im|en)[ \t])?$")

# A year that qualifies the subject of its clause, the date of an event the statement is about: "The 1986 explosion
# and the fallout had ...", ", the 2022 theme is ...", "Die 2015 beschlossene Reform ...". A document's own year ("the
# 2019 report", "l'édition 2023", "the 2021 survey") names the work, not what the sentence says (benchmarks/realkb
# README, docs/decisions/0004); and after any word but an opening article the year is a bare year, as before.
_ARTICLE_BEFORE_YEAR_RE = re.compile(r"(?:^|[.!?;:]\s+|,\s|\n[ \t]*(?:[-*+]|\d{1,3}[.)])?[ \t]*)[*_]*"
                                     r"(?:The|the|Die|die|Der|der|Das|das|Het|het|De|de|Le|le|La|la|L['’]|l['’]|El|el"
                                     r"|Il|il|Lo|lo)\s$")
_NOUN_AFTER_YEAR_RE = re.compile(r"\s([^\W\d_][^\W\d_'’-]+)")
_DOCUMENT_NOUNS = frozenset("""report reports study studies survey surveys paper papers review edition editions version
versions guide guidance update updates publication plan strategy roadmap index census analysis data dataset datasets
statistics figures list ranking rankings budget annual release cohort class season program programme conference
summit event webinar meeting workshop hackathon award awards challenge call cohort agenda session issue
bericht berichte studie studien umfrage ausgabe fassung version leitfaden strategie daten statistik haushalt
konferenz veranstaltung tagung programm jahresbericht liste
rapport rapports étude études enquête édition version guide stratégie données statistiques budget conférence
appel programme
informe estudio encuesta edición versión guía estrategia datos presupuesto conferencia convocatoria
rapporto studio indagine edizione versione guida strategia dati bilancio conferenza
rapport onderzoek enquête editie versie handreiking strategie gegevens begroting conferentie jaarverslag""".split())
_EVENT_VERB_RE = re.compile(
    r"(?:\s[^\W\d_][^\W\d_'’-]*){0,5}?\s(?:is|was|were|are|has|had|have|became|caused|led|killed|ist|war|sind|waren"
    r"|hat|hatte|wurde|est|était|fut|fue|è|fu|heeft|werd)\s")


def _is_event_year(text: str, v: Value) -> bool:
    """'The 1986 explosion ... had', ', the 2022 theme is': an opening article, the year, a noun that is not a
    document's, and the clause's verb within a few words."""
    if _ARTICLE_BEFORE_YEAR_RE.search(text, max(0, v.pos - 12), v.pos) is None:
        return False
    noun = _NOUN_AFTER_YEAR_RE.match(text, v.end)
    if noun is None or noun.group(1).casefold() in _DOCUMENT_NOUNS:
        return False
    return _EVENT_VERB_RE.match(text, v.end) is not None


# The year that closes a law's name: "Wet op de … (BPM) 1992", "Besluit 2019", "Ordonnance 2020": a law's date, as
# "loi du 7 octobre 2016" is (a law's name, then its year, is how these systems cite their laws). ("Act 2018" is
# read by the statute reader, as before.)
_LAW_YEAR_BEFORE_RE = re.compile(r"(?:\b(?:Act|Wet|Gesetz|Besluit|Regeling|Ordinance|Ordonnance)|\((?-i:[A-Z]{2,8})\))\s$")
_LAW_WORD_RE = re.compile(r"\b(?:Act|Wet|Gesetz|Besluit|Regeling|Ordinance|Ordonnance)\b")


def _is_law_year(text: str, v: Value) -> bool:
    before = _LAW_YEAR_BEFORE_RE.search(text, max(0, v.pos - 12), v.pos)
    if before is None:
        return False
    return text[before.start()] != "(" or _LAW_WORD_RE.search(text, max(0, before.start() - 100), before.start()) is not None


# A fiscal or budget year names a period, as a date does: "fiscal year 2019", "FY 2019", "FY2024", "Haushaltsjahr
# 2023", "exercice 2022", "boekjaar 2021", "año fiscal 2020", "esercizio 2019". Written in title case inside a
# sentence ("the OMB Fiscal Year 2017 Historical Tables", "FY 2024 Budget Request") it is part of a document's name.
_FISCAL_BEFORE_YEAR_RE = re.compile(r"(?<![^\W\d_])(?:(?:fiscal|budget)\syear|[Hh]aushaltsjahr|[Gg]eschäftsjahr"
                                    r"|exercice|boekjaar|begrotingsjaar|año\sfiscal|ejercicio|esercizio|FY)\s?$")
_TITLE_WORD_AFTER_RE = re.compile(r"\s[A-Z][a-z]")


def _is_fiscal_year(text: str, v: Value) -> bool:
    before = _FISCAL_BEFORE_YEAR_RE.search(text, max(0, v.pos - 16), v.pos)
    return before is not None and not (text.startswith("FY", before.start())
                                       and _TITLE_WORD_AFTER_RE.match(text, v.end) is not None)


# A chronology's entry: "- 2015: the law on ...", "* 2011 – creation of ...": the year opens the item and is its date.
_CHRONOLOGY_AFTER_RE = re.compile(r"\s?:\s|\s[-–—]\s")


# The year an event took place or a period began, written as the frame of the statement: fronted ("In 2021, 45 %
# ...", "Seit 2006 gilt ...") or inside the clause before what happened ("heeft in 2023 een experiment uitgevoerd",
# "wurde seit 2019 erweitert", "was founded in 2015 by"). A time phrase that ends its clause ("reformed in 2019
# ([r])", "2.1 % in 2023.") qualifies a statement already made or is an aside: a bare year, as before (docs/
# decisions/0001, 0004). A year after any other word ("the 2019 report", "ISO 27001:2013") stays a bare year.
_TIME_BEFORE_YEAR_RE = re.compile(
    r"(?<![^\W\d_])(?:in|since|seit|im\sJahre?|in\shet\sjaar|sinds|sedert|depuis|en|desde|dal|nel|dall['’]anno"
    # a point in time written without "in" ("bereits 2012 definiert", "ab 2025 gilt", "dès 2016", "vanaf 2024")
    r"|bereits|schon|erst|ab|dès|vanaf|à\spartir\sde|a\spartir\sde|a\spartire\sdal)\s$",
    re.I)
_CLAUSE_GOES_ON_RE = re.compile(r",?\s[^\W\d_]")


def _after_a_figure(text: str, v: Value, values: list[Value]) -> bool:
    """'Rents rose 9.4 % in 2024 according to ...': a time phrase after a figure of its sentence is that figure's
    period, not a statement of its own."""
    return any(o.salient and o.type != "year" and o.end <= v.pos and _SENTENCE_END_RE.search(text, o.end, v.pos) is None
               for o in values)


_SENTENCE_END_RE = re.compile(r"[.!?;]\s")


_ASIDE_MAX = 400


def _after_aside(text: str, pos: int) -> int:
    """Past a bracketed aside right after pos ("Seit 2006 ([ECMA-376](…), [ISO](…)) ist ..."): a citation in
    brackets does not end the clause; what follows it tells whether the clause goes on."""
    if not text.startswith(" (", pos) and not text.startswith("(", pos):
        return pos
    depth, opening = 0, text.index("(", pos)
    for i in range(opening, min(len(text), opening + _ASIDE_MAX)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif ch == "\n":
            break
    return pos


def _is_time_year(text: str, v: Value) -> bool:
    """'In 2021, 45 % ...', 'seit 2006 gilt', 'heeft in 2023 ... uitgevoerd': a year read as the time of the statement."""
    before = _TIME_BEFORE_YEAR_RE.search(text, max(0, v.pos - 14), v.pos)
    if before is None:
        return False
    after = _after_aside(text, v.end)
    if _CLAUSE_GOES_ON_RE.match(text, after) is None:
        return False
    return text[after:after + 1] != "," or SENTENCE_START_RE.search(text, max(0, before.start() - 8),
                                                                    before.start()) is not None


def _scan(text: str, scans: tuple, starts: list[int], ends: list[int], values: list[Value]) -> None:
    for vtype, finditer, has_code, read, guard in scans:
        if guard is not None and not guard(text):
            continue
        for m in finditer(text):
            if has_code and m.group("code").upper() not in CCY_CODES:
                continue
            if vtype == "statute" and m.group()[:2] == "no" and is_plain_no(m.group()):
                continue
            s, e = m.span()
            raw = m.group(0)
            if raw[-1] in _TAIL_CHARS or raw[-1].isspace() or raw[0].isspace():  # else nothing to trim or strip
                stripped = _trim_tail(raw)
                e -= len(raw) - len(stripped)
                lead = len(stripped) - len(stripped.lstrip())
                s += lead
                raw = stripped.strip()
                if not raw:
                    continue
            i = bisect_left(starts, e)
            if i > 0 and ends[i - 1] > s:
                continue
            starts.insert(i, s)
            ends.insert(i, e)
            needles, salient, number = read(raw)
            values.append(Value(type=vtype, raw=raw, needles=needles, salient=salient, pos=s, end=e, number=number))
