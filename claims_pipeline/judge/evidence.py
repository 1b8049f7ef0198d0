"""Evidence judged by code against the whole page, with the priors' own number and date readers.

Two questions a fact-checker asks of a quote before signing a verdict on it:
- is the figure in the quote about the claim's subject? The clause of the quote that holds the figure must share
  words with the claim's clause around its figure (`subject_of`). A quote in another language than the claim
  cannot be checked this way: code says so (`SubjectCheck.foreign`) instead of guessing.
- does the page state another figure of the same kind for the same subject elsewhere (`competing`)? A passage of
  the page outside the quote, holding a different pct/money figure in a clause about the claim's subject, is a
  competing reading: the verdict is a judgment call, never confirmed. This is direction B done by code; an
  injected line repeating the claim's figure cannot remove the page's real one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from claims_pipeline.judge.figures import as_value, clause_words, normalized, other_figures, shared_words
from claims_pipeline.judge.model import ItemValue, JudgeItem
from claims_pipeline.priors.context import context_words
from claims_pipeline.priors.matching import find_occurrences
from claims_pipeline.priors.page_index import build_index

SAME_THING_WORDS = 2  # words a quote's clause must share with the claim's clause (one when the claim has one)
MAX_PASSAGE_CHARS = 400
_MAX_SEGMENTS = 5000  # bounds the scan of a huge page

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


_MONEY_LIKE_RE = re.compile(r"[$€£¥]|\b(?:EUR|USD|XCD|GBP|euros?|dollars?|pesos?|million|billion|thousand)\b|\d[\d,. \u00a0\u202f]{2,}\d",
                            re.I)


@dataclass(frozen=True)
class Competing:
    passage: str  # verbatim, one clause or row of the page
    figure: str


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


def competing(item: JudgeItem, page: str, quote: str) -> list[Competing]:
    """Passages of the page, outside every place of the quote, stating another pct/money figure of the claim's
    kind for the claim's subject. Empty for dates and statutes (no competing figure is read for them)."""
    if not item.values or item.values[0].type not in ("pct", "money"):
        return []
    value = item.values[0]
    if not claim_subject_words(item, value):
        return []  # a claim naming no subject ("fee €1,300"): no passage can be said to speak of the same one
    needle = normalized(quote)
    found: list[Competing] = []
    for lo, hi in subject_segments(item, page, value):
        seg = page[lo:hi]
        if needle and (needle in normalized(seg) or normalized(seg.strip()) in needle):
            continue  # the quoted passage itself
        for start, end, fig in other_figure_spans(value, seg, item.values):
            if value.type == "money" and not _MONEY_LIKE_RE.search(fig):
                continue  # a bare small number ("Figure 1", "(2)") is no amount
            if subject_of(item, seg, start, end, value).ok:
                found.append(Competing(" ".join(seg.split())[:MAX_PASSAGE_CHARS], fig))
                break
    return found


def passage_around(page: str, quote: str) -> str:
    """The page's own clause(s) holding the quote, verbatim (whitespace collapsed)."""
    flat = " ".join(page.split())
    at = flat.casefold().find(" ".join(quote.split()).casefold())
    if at < 0:
        return " ".join(quote.split())[:MAX_PASSAGE_CHARS]
    lo, hi = clause_at(flat, at, at + len(" ".join(quote.split())))
    return flat[lo:hi].strip()[:MAX_PASSAGE_CHARS]
