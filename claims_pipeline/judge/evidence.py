"""Evidence judged by code against the whole page, with the priors' own number and date readers.

Two questions a fact-checker asks of a quote before signing a verdict on it:
- is the figure in the quote about the claim's subject? The clause of the quote that holds the figure must share
  words with the claim's clause around its figure (`subject_of`). A quote in another language than the claim
  cannot be checked this way: code says so (`SubjectCheck.foreign`) instead of guessing.
- does the page state another figure of the same kind for the same subject elsewhere (`competing`)? A passage of
  the page outside the quote, holding a different pct/money figure in a clause about the claim's subject, is a
  competing reading: the verdict is a judgment call, never confirmed. This is direction B done by code; an
  injected line repeating the claim's figure cannot remove the page's real one. A passage is placed by words only
  where they say what its figure is: near the figure, near the claim's own, and in the same role (`_near_subject`);
  the page's topic words recur everywhere on a long page. Nothing here compares a passage with the quote, which a
  hostile page or model chooses. Words alone do not place the
  page's real figure when the page is in another language than the claim or names the subject otherwise: a
  passage also stating another of the claim's figures or numbers (`claim_anchors`) is placed by them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from claims_pipeline.judge.figures import as_value, clause_words, normalized, other_figures, shared_words
from claims_pipeline.judge.model import ItemValue, JudgeItem
from claims_pipeline.priors.context import claim_prose, context_words
from claims_pipeline.priors.dates import tokenize_dates
from claims_pipeline.priors.matching import find_occurrences
from claims_pipeline.priors.numbers import tokenize_numbers
from claims_pipeline.priors.page_index import build_index, search_form

SAME_THING_WORDS = 2  # words a quote's clause must share with the claim's clause (one when the claim has one)
MAX_PASSAGE_CHARS = 400
_MAX_SEGMENTS = 5000  # bounds the scan of a huge page
FOREIGN_WORDS = 3  # function words of its own language a passage needs to be read as written in that language
ANCHOR_MIN = 10  # a whole number of the claim's prose below this ("5 years", "2 instalments") places no passage
_ANCHOR_TYPES = frozenset({"pct", "money", "statute", "number"})  # a date or year is on too many passages

# A clause: the sentence, ;-part or line holding the figure ("Stamp duty on land, vendor pays 7.5%" is one).
_CLAUSE_BREAK_RE = re.compile(r"[;.!?](?=\s)|\n")
_SEGMENT_RE = re.compile(r"[^\n;.!?]+(?:[.!?;](?=\s)|(?=\n)|$)|[^\n]+")

# Function words per language: a clause is read as the language with the most of them (two at least).
_STOP = {
    "en": frozenset("the of and is are for in to on by with per from was were this that which be at an a its".split()),
    "fr": frozenset("le la les des du de est et à au aux une un pour sur par dont sont qui que en l d".split()),
    "es": frozenset("el la los las de del y es en por para una un se al que su sus con".split()),
    "de": frozenset("der die das und ist für von mit ein eine den dem des im zu auf bei wird".split()),
    "it": frozenset("il lo gli della delle di e è per una un che del al nel".split()),
    "pt": frozenset("o os as da das do dos de e é para uma um que em no na".split()),
}
_WORD_RE = re.compile(r"[^\W\d_]+")


def language_counts(text: str) -> dict[str, int]:
    """How many function words of each language the text uses."""
    words = [w.casefold() for w in _WORD_RE.findall(text)]
    return {lang: sum(1 for w in words if w in stop) for lang, stop in _STOP.items()}


def languages_of(text: str) -> frozenset[str]:
    """The languages whose function words the text uses most (a tie keeps them all; none: no function word)."""
    counts = language_counts(text)
    top = max(counts.values())
    return frozenset(lang for lang, n in counts.items() if n == top) if top else frozenset()


def language_of(text: str) -> str | None:
    langs = languages_of(text)
    return next(iter(sorted(langs))) if len(langs) == 1 else None


def clause_at(text: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) of the clause of text holding text[start:end]."""
    lo = 0
    for brk in _CLAUSE_BREAK_RE.finditer(text, 0, start):
        lo = brk.end()
    after = _CLAUSE_BREAK_RE.search(text, end)
    return lo, (after.start() if after else len(text))


@dataclass(frozen=True)
class SubjectCheck:
    ok: bool
    claim_words: list[str]
    shared: list[str]
    foreign: bool = False  # the clause is in another language than the claim: words cannot be compared

    @property
    def needed(self) -> int:
        return min(SAME_THING_WORDS, len(self.claim_words))


def claim_subject_words(item: JudgeItem, value: ItemValue | None = None) -> list[str]:
    value = value or (item.values[0] if item.values else None)
    return clause_words(item.claim_text, value.raw) if value is not None else context_words(item.claim_text)


def subject_of(item: JudgeItem, text: str, start: int, end: int, value: ItemValue | None = None) -> SubjectCheck:
    """Does the clause of text around text[start:end] (a figure) speak of the claim's subject?"""
    words = claim_subject_words(item, value)
    lo, hi = clause_at(text, start, end)
    clause = text[lo:start] + " " + text[end:hi]
    shared = shared_words(words, clause)
    need = min(SAME_THING_WORDS, len(words))
    if len(shared) >= need:
        return SubjectCheck(True, words, shared)
    mine, theirs = languages_of(item.claim_text), languages_of(text[lo:hi])
    return SubjectCheck(False, words, shared, foreign=bool(mine and theirs and mine.isdisjoint(theirs)))


def written_in_another(text: str, langs: frozenset[str]) -> bool:
    """Is text plainly written in another language than langs: FOREIGN_WORDS function words of its own and none
    of theirs (a name or a borrowed word in an English sentence does not make it French)?"""
    counts = language_counts(text)
    top = max(counts.values())
    return top >= FOREIGN_WORDS and all(counts[lang] == 0 for lang in langs)


def claim_figure_spans(value: ItemValue, text: str, *, strong_only: bool) -> list[tuple[int, int]]:
    """Where the claim's figure is in text, read as the priors read a page."""
    occ = find_occurrences(as_value(value), build_index(text))
    return [(o.start, o.end) for o in occ if o.strong or not strong_only]


def best_subject(item: JudgeItem, text: str, spans: list[tuple[int, int]],
                 value: ItemValue | None = None) -> tuple[tuple[int, int] | None, SubjectCheck]:
    """Of the figure's places in text, the one whose clause best speaks of the claim's subject (no place: a
    failed check)."""
    best: tuple[tuple[int, int] | None, SubjectCheck] = (None, SubjectCheck(False, claim_subject_words(item, value), []))
    for span in spans:
        check = subject_of(item, text, span[0], span[1], value)
        if best[0] is None or (check.ok, len(check.shared)) > (best[1].ok, len(best[1].shared)):
            best = (span, check)
    return best


def other_figure_spans(value: ItemValue, text: str, claimed: list[ItemValue]) -> list[tuple[int, int, str]]:
    """Figures of the claim's kind but another value in text, with their places."""
    out = []
    for fig in other_figures(value, text, claimed):
        at = text.find(fig)
        while at >= 0:
            out.append((at, at + len(fig), fig))
            at = text.find(fig, at + 1)
    return sorted(set(out))


NEAR_WORDS = 8  # words of the claim either side of its figure, within its clause, that say what the figure is
PASSAGE_NEAR_WORDS = 12  # the same for a competing figure on the page, whose sentence may name its subject first


def near_window(text: str, start: int, end: int, reach: int = NEAR_WORDS) -> str:
    """The text of text[start:end]'s clause within reach words either side of it, the figure itself left out."""
    lo, hi = clause_at(text, start, end)
    before = [m.start() for m in _WORD_RE.finditer(text, lo, start)]
    after = [m.end() for m in _WORD_RE.finditer(text, end, hi)]
    a = before[-reach] if len(before) >= reach else lo
    b = after[reach - 1] if len(after) >= reach else hi
    return text[a:start] + " " + text[end:b]


def claim_near_words(item: JudgeItem, value: ItemValue) -> list[str]:
    """The claim's words near its figure ("... a donation worth $2 million to the legal defense fund" of a long
    sentence): what the figure is; the whole clause's words when the figure is not found in the claim."""
    at = item.claim_text.find(value.raw) if value.raw else -1
    if at < 0:
        return claim_subject_words(item, value)
    return context_words(near_window(item.claim_text, at, at + len(value.raw))) or claim_subject_words(item, value)


def _near_subject(item: JudgeItem, seg: str, start: int, end: int, value: ItemValue) -> bool:
    """Do the words near seg's figure share enough of the claim's words near its own figure, and state it in the
    same role (per month or per year, a total or an amount per head, a level or a change in points), to be about
    the claim's subject? Words far from both figures in long sentences say little about what either figure is."""
    words = claim_near_words(item, value)
    near = near_window(seg, start, end, PASSAGE_NEAR_WORDS)
    if len(shared_words(words, near)) < min(SAME_THING_WORDS, len(words)):
        return False
    at = item.claim_text.find(value.raw)
    if at < 0:
        return not _other_roles(item.claim_text, near)
    mine = near_window(item.claim_text, at, at + len(value.raw))
    if _points(item.claim_text[at:]) != _points(seg[start:]):
        return False  # a change in percentage points is no rival of a level in per cent
    if _other_labels(words, (item.claim_text, at, at + len(value.raw)), (seg, start, end)):
        return False
    return not _other_roles(mine, near)


_PERIOD_RE = re.compile(r"\b(?:per|a|an|each|every|/)\s*(day|week|month|year|annum|hour|night)\b|"
                        r"\b(daily|weekly|monthly|yearly|annual|annually|hourly|nightly)\b", re.I)
_PERIOD = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annual": "year",
           "annually": "year", "annum": "year", "hourly": "hour", "nightly": "night"}
_TOTAL_RE = re.compile(r"\b(?:total|combined|overall|altogether|in all|cumulative|to date)\b", re.I)
_EACH_RE = re.compile(r"\b(?:per|each|every|apiece|for an?|a head)\b", re.I)
_POINTS_RE = re.compile(r"^[^\s]*\s*(?:percentage points?|points?|pp)\b", re.I)
# An item's label in a list or table: the letter or small number right after a word ("League B", "Decile 2",
# "Zone 3:"), not the start of an amount ("VAT 20 %")
_LABEL_RE = re.compile(r"[ \u00a0]([A-Z]|\d{1,2})(?![\w.,%€$£¥]|\s*(?:%|per ?cent|pc\b|[€$£¥]))")


def _points(after: str) -> bool:
    """Is the figure at the start of after written in percentage points (a change, not a level)?"""
    return bool(_POINTS_RE.match(after[:40]))


def _labels(words: list[str], text: str, figure: tuple[int, int]) -> dict[str, str]:
    """{claim word: the label right after it in text} ("decile" -> "2" of "Decile 2 = 45.3%")."""
    out: dict[str, str] = {}
    for m in _WORD_RE.finditer(text):
        w = m.group(0).casefold()
        label = _LABEL_RE.match(text, m.end())
        if label and w in words and not (label.start(1) < figure[1] and figure[0] < label.end(1)):
            out.setdefault(w, label.group(1))
    return out


def _other_labels(words: list[str], mine: tuple[str, int, int], theirs: tuple[str, int, int]) -> bool:
    """Do the claim and the passage name two items of one list ("League B: €1m" ~ "League A: €1.5m")?"""
    a, b = _labels(words, mine[0], mine[1:]), _labels(words, theirs[0], theirs[1:])
    return any(b.get(w, label) != label for w, label in a.items())


def _periods(text: str) -> set[str]:
    return {_PERIOD.get(p.casefold(), p.casefold()) for m in _PERIOD_RE.finditer(text) for p in m.groups() if p}


def _other_roles(mine: str, theirs: str) -> bool:
    """Do two figures' surroundings give them different roles: a rate per month and one per year; a total and an
    amount per unit ("a total of €76 million" ~ "€7.5m for a team")?"""
    a, b = _periods(mine), _periods(theirs)
    if a and b and a.isdisjoint(b):
        return True
    total_here, total_there = bool(_TOTAL_RE.search(mine)), bool(_TOTAL_RE.search(theirs))
    return total_here != total_there and bool(_EACH_RE.search(mine) or _EACH_RE.search(theirs))


_CURRENCY_REACH = 12  # characters either side of an amount where its currency is written ("USD 550", "550 euros")
# The currency an amount is written in, by family: "$" alone does not say which dollar.
_CURRENCIES = {
    **dict.fromkeys(["€", "eur", "euro", "euros"], "EUR"),
    **dict.fromkeys(["£", "gbp", "pound", "pounds", "pfund"], "GBP"),
    **dict.fromkeys(["$", "usd", "us$", "dollar", "dollars", "xcd", "cad", "aud", "nzd", "hkd", "sgd", "kyd", "bmd",
                     "twd"], "$"),
    **dict.fromkeys(["¥", "jpy", "yen", "cny", "rmb", "yuan"], "¥"),
    **dict.fromkeys(["₹", "inr", "rs", "rupee", "rupees"], "INR"),
    **dict.fromkeys(["chf", "fr", "franc", "francs", "franken"], "CHF"),
}
_COUNTED_RE = re.compile(r"[ \u00a0]*[^\W\d_]")  # a word right after a number: what it counts
_CURRENCY_RE = re.compile(r"us\$|[€£$¥₹]|\b(?:" + "|".join(sorted((k for k in _CURRENCIES if k.isalpha()), key=len,
                                                                  reverse=True)) + r")\b", re.I)


def _currency_of(text: str, start: int, end: int) -> str | None:
    """The currency written beside text[start:end] (the nearest mark), or None."""
    near = [(abs(m.start() - end) if m.start() >= end else abs(start - m.end()), m.group(0).casefold())
            for m in _CURRENCY_RE.finditer(text, max(0, start - _CURRENCY_REACH), end + _CURRENCY_REACH)]
    return _CURRENCIES.get(min(near)[1]) if near else None


def _same_currency(currency: str | None, seg: str, start: int, end: int) -> bool:
    """Is seg[start:end] an amount of money in the claim's currency: read as the priors read one, its currency
    beside it, or a bare number, not followed by what it counts, in a row or sentence naming the currency ("Fee
    (EUR): 1 250")? A bare number in a passage naming none ("Figure 1") or counting something ("35,512 square
    feet") is no amount; "£5" is no rival of "$20"."""
    if any(t.unit == "money" and t.start <= start < t.end for t in tokenize_numbers(search_form(seg))):
        theirs = _currency_of(seg, start, end)
        return currency is None or theirs is None or theirs == currency
    if sum(c.isdigit() for c in seg[start:end]) < 3 or _COUNTED_RE.match(seg, end):
        return False  # an age, a rank, a small count ("Milken, 40,"), or a count of something ("1,653 theaters")
    named = {_CURRENCIES.get(m.group(0).casefold()) for m in _CURRENCY_RE.finditer(seg)}
    return bool(named) and (currency is None or currency in named)



# How code placed a competing passage on the claim's subject (the downgrade's reason names it).
PLACED_BY = {
    "words": "the words near its figure share the claim's words near the claim's figure",
    "figures": "it also states another of the claim's figures",
    "cognate": "in another language than the claim, its clause shares a name or cognate of the claim's words",
}


@dataclass(frozen=True)
class Competing:
    passage: str  # verbatim, one clause or row of the page
    figure: str
    by: str = "words"  # a key of PLACED_BY


@lru_cache(maxsize=64)
def segments(page: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of the page's sentences, ;-parts and lines (table rows)."""
    out = []
    for m in _SEGMENT_RE.finditer(page):
        if m.group(0).strip():
            out.append(m.span())
        if len(out) >= _MAX_SEGMENTS:
            break
    return tuple(out)


def subject_segments(item: JudgeItem, page: str, value: ItemValue) -> list[tuple[int, int]]:
    """The page's segments that may speak of the claim's subject: each holds the first four letters of enough of
    the claim's words (a cheap superset of subject_of's test: the numbers of the others are never read)."""
    words = claim_subject_words(item, value)
    need = min(SAME_THING_WORDS, len(words))
    heads = [w[:4] for w in words]
    folded = page.casefold()
    return [(lo, hi) for lo, hi in segments(page) if sum(1 for h in heads if h in folded[lo:hi]) >= need]


@dataclass(frozen=True)
class Anchors:
    """What else the claim states, by which code can place a passage of the page on the claim's subject without
    reading its words (a passage in another language, or worded unlike the claim): the claim's other figures
    and the other numbers of its prose ("30 working days", "plots over 500 m²")."""

    values: tuple[ItemValue, ...]
    numbers: tuple[float, ...]

    def __bool__(self) -> bool:
        return bool(self.values or self.numbers)


def claim_anchors(item: JudgeItem, value: ItemValue) -> Anchors:
    others = tuple(v for v in item.values if v is not value and v.raw != value.raw and v.type in _ANCHOR_TYPES)
    prose = claim_prose(item.claim_text)
    for v in item.values:
        prose = prose.replace(v.raw, " ")  # a figure's own digits ("2021" of "Law 2021-44") place nothing new
    folded = search_form(prose)
    dates = tokenize_dates(folded)
    numbers = []
    for tok in tokenize_numbers(folded):
        if tok.unit is not None or any(d.start <= tok.start and tok.end <= d.end for d in dates):
            continue  # an amount the extractor did not keep, or part of a date
        x = tok.values[0]
        if (x < ANCHOR_MIN and x == int(x)) or (len(tok.text) == 4 and tok.text.isdigit() and 1800 <= x <= 2200):
            continue  # a small count ("5 years") or a year is on too many passages to place one
        numbers.append(x)
    return Anchors(others, tuple(dict.fromkeys(numbers)))


def anchored(anchors: Anchors, text: str) -> bool:
    """Does text state one of the claim's other figures or numbers (read as the priors read a page)?"""
    if any(claim_figure_spans(v, text, strong_only=True) for v in anchors.values):
        return True
    if not anchors.numbers:
        return False
    return any(abs(x - n) <= 1e-9 * max(1.0, abs(n)) for tok in tokenize_numbers(search_form(text))
               if tok.unit is None for x in tok.values for n in anchors.numbers)


def _without_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def competing(item: JudgeItem, page: str, quote: str) -> list[Competing]:
    """Passages of the page, outside every place of the quote, stating another pct/money figure of the claim's
    kind for the claim's subject. Empty for dates and statutes (no competing figure is read for them).

    A passage is about the claim's subject when the words near its figure share two of the claim's words near
    the claim's figure, in the same role (_near_subject), or when it also states another of the claim's figures
    or numbers (claim_anchors: that places it whatever its language or wording). Code cannot read a passage in
    another language than the claim's beyond a name or a cognate ("servicio" ~ "service", "résident" ~
    "residents"), so there one such word is enough, unless the quote itself carries another of the claim's
    figures (placed as firmly as code can place it: a word-level hint against it is no competing reading)."""
    if not item.values or item.values[0].type not in ("pct", "money"):
        return []
    value = item.values[0]
    words = claim_subject_words(item, value)
    anchors = claim_anchors(item, value)
    if not words and not anchors:
        return []  # a claim naming no subject ("fee €1,300"): no passage can be said to speak of the same one
    needle = normalized(quote)
    currency = _currency_of(value.raw, 0, len(value.raw)) if value.type == "money" else None
    quote_placed = bool(quote) and anchored(anchors, quote)
    claim_langs = languages_of(item.claim_text)
    bare_words = [_without_accents(w) for w in words]
    found: list[Competing] = []
    for lo, hi in _candidate_segments(page, bare_words, anchors, cognates=not quote_placed and bool(claim_langs)):
        seg = page[lo:hi]
        if needle and (needle in normalized(seg) or normalized(seg.strip()) in needle):
            continue  # the quoted passage itself
        rivals = [(a, b, fig) for a, b, fig in other_figure_spans(value, seg, item.values)
                  if value.type != "money" or _same_currency(currency, seg, a, b)]
        # a passage stating the claim's figure beside the rival is not set aside: a hostile page can add the
        # claim's figure to the sentence holding its real one as easily as it plants a line
        if not rivals:
            continue
        placed = anchored(anchors, seg)
        foreign = not quote_placed and bool(claim_langs) and written_in_another(seg, claim_langs)
        for start, end, fig in rivals:
            by = ("words" if _near_subject(item, seg, start, end, value) else "figures" if placed
                  else "cognate" if foreign and _shares_bare(bare_words, seg, start, end) else "")
            if by:
                found.append(Competing(" ".join(seg.split())[:MAX_PASSAGE_CHARS], fig, by))
                break
    return found


def _candidate_segments(page: str, bare_words: list[str], anchors: Anchors, *, cognates: bool) -> list[tuple[int, int]]:
    """The page's segments competing() reads (a cheap superset, so a huge page's numbers are read only where they
    may count): those holding the first four letters of enough of the claim's words (one, when a cognate may
    place a passage), or the digits of one of the claim's other figures or numbers."""
    need = 1 if cognates else min(SAME_THING_WORDS, len(bare_words))
    heads = [w[:4] for w in bare_words]
    # the last three digits of a number's whole part are written alike in every grouping ("1,500", "1 500", "1500")
    digits = [max(re.findall(r"\d+", v.raw), key=len)[-3:] for v in anchors.values if re.search(r"\d", v.raw)]
    digits += [str(int(n))[-3:] for n in anchors.numbers]
    folded = _bare_page(page)
    out = []
    for lo, hi in segments(page):
        part = folded[lo:hi]
        if not any(c.isdigit() for c in part):
            continue
        if (need and sum(1 for h in heads if h in part) >= need) or any(d in part for d in digits):
            out.append((lo, hi))
    return out


@lru_cache(maxsize=16)
def _bare_page(page: str) -> str:
    """The page case-folded with its accents set aside, at the same offsets (a character that folds to several,
    "ß", is kept as it is)."""
    table = {}
    for c in set(page):
        bare = _without_accents(c.casefold())
        if bare != c and len(bare) == 1:
            table[ord(c)] = bare
    return page.translate(table)


def _shares_bare(bare_words: list[str], seg: str, start: int, end: int) -> bool:
    """Does the clause around seg[start:end] share a word with bare_words, accents set aside?"""
    lo, hi = clause_at(seg, start, end)
    return bool(shared_words(bare_words, _without_accents(seg[lo:start] + " " + seg[end:hi])))


def passage_around(page: str, quote: str) -> str:
    """The page's own clause(s) holding the quote, verbatim (whitespace collapsed)."""
    flat = " ".join(page.split())
    at = flat.casefold().find(" ".join(quote.split()).casefold())
    if at < 0:
        return " ".join(quote.split())[:MAX_PASSAGE_CHARS]
    lo, hi = clause_at(flat, at, at + len(" ".join(quote.split())))
    return flat[lo:hi].strip()[:MAX_PASSAGE_CHARS]
