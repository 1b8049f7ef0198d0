"""A page's text tokenised once (numbers, dates, words with positions), cached by text hash.

An audit of ~1,000 claims over ~700 pages asks the same page many times; every claim citing it reuses the
index, so the page is scanned once per distinct text, not once per claim.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter

from claims_pipeline.priors.dates import (
    DateToken,
    month_starts_of_split,
    non_ascii_chars,
    tokenize_dates,
    words_are_runs,
)
from claims_pipeline.priors.numbers import NumberToken, tokenize_numbers
from claims_pipeline.priors.spans import SpanSet

_WORD_SPLIT_RE = re.compile(r"([^\W\d_]+)")  # split keeps the words: [gap, word, gap, word, ..., gap]
_ASCII_WORD_SPLIT_RE = re.compile(r"([A-Za-z]+)")
_LETTER_RE = re.compile(r"[^\W\d_]")
_ASCII_DIGITS_RE = re.compile(r"[0-9]+")
_CACHE_SIZE = 1024
STEM_CHARS = 6  # a crude stem: "département" ~ "départements", "commune" ~ "communale"
_STEM = itemgetter(slice(None, STEM_CHARS))


def word_stem(word: str) -> str:
    return word.casefold()[:STEM_CHARS]


@dataclass(slots=True)
class PageIndex:
    text: str
    numbers: list[NumberToken]
    dates: list[DateToken]
    words: dict[str, list[int]]  # casefolded word stem (first STEM_CHARS letters) → sorted start positions
    # (value, token index) sorted by value, for range look-ups of a claim figure with its tolerance
    by_value: list[tuple[float, int]] = field(default_factory=list)
    _values_only: list[float] = field(default_factory=list)
    search_text: str = ""  # search_form(text): what the statute and needle matchers search
    _ascii_digit_starts: list[int] | None = None  # computed when a statute is first looked for

    def ascii_digit_starts(self) -> list[int]:
        """Where each run of ASCII digits in search_text starts (where a statute's number can start)."""
        if self._ascii_digit_starts is None:
            self._ascii_digit_starts = [m.start() for m in _ASCII_DIGITS_RE.finditer(self.search_text)]
        return self._ascii_digit_starts

    def numbers_between(self, lo: float, hi: float) -> list[NumberToken]:
        i = bisect.bisect_left(self._values_only, lo)
        j = bisect.bisect_right(self._values_only, hi)
        seen: set[int] = set()
        out: list[NumberToken] = []
        for _, idx in self.by_value[i:j]:
            if idx not in seen:
                seen.add(idx)
                out.append(self.numbers[idx])
        return out

    def nearest_word(self, word: str, pos: int) -> int | None:
        """Distance in chars from pos to the nearest occurrence of word, or None when absent."""
        positions = self.words.get(word_stem(word))
        if not positions:
            return None
        i = bisect.bisect_left(positions, pos)
        best = None
        for j in (i - 1, i):
            if 0 <= j < len(positions):
                d = abs(positions[j] - pos)
                best = d if best is None or d < best else best
        return best


# Figures written with other digits and dashes, folded one character for one (positions and excerpts stay the
# page's own): full-width digits and punctuation of Japanese and Chinese pages ("６．３２％", "令和６年"),
# Arabic-Indic digits and separators ("٦٫٣٢٪"), and the hyphens and minus signs of "2024‑1039".
_FOLD = str.maketrans({
    **{chr(0xFF10 + d): str(d) for d in range(10)}, **{chr(0x0660 + d): str(d) for d in range(10)},
    **{chr(0x06F0 + d): str(d) for d in range(10)},
    "．": ".", "，": ",", "％": "%", "：": ":", "／": "/", "－": "-", "٫": ".", "٬": ",", "٪": "%",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-", "\ufe63": "-",
})


_FOLDED_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in _FOLD) + "]")


def search_form(text: str) -> str:
    """The text as the matchers read it: ASCII digits and dashes, same length as the page's text."""
    # translate() walks the text a character at a time in Python's slow path: most pages with a non-ASCII
    # character (a €, an accent) have nothing to fold, and a regex search says so far faster
    return text if text.isascii() or _FOLDED_RE.search(text) is None else text.translate(_FOLD)


def word_positions(text: str) -> dict[str, list[int]]:
    """{word_stem(word): start of each of its words, in order} for the words of text."""
    return _positions_of_split(_WORD_SPLIT_RE.split(text))


def _positions_of_split(parts: list[str]) -> dict[str, list[int]]:
    """word_positions from the text's split into [gap, word, gap, ..., word, gap]. The same as a finditer loop
    calling word_stem per word, for less CPU (the split is a large part of a page's index): the lengths of the parts
    give the positions, one casefold of all the words (joined by NUL, which is no letter and no fold of one)
    their stems."""
    words: dict[str, list[int]] = {}
    if len(parts) == 1:
        return words
    stems = map(_STEM, "\0".join(parts[1::2]).casefold().split("\0"))
    for stem, start in zip(stems, list(accumulate(map(len, parts)))[0:-1:2], strict=True):
        if stem in words:
            words[stem].append(start)
        else:
            words[stem] = [start]
    return words


def build_index(text: str) -> PageIndex:
    folded = search_form(text)
    odd = non_ascii_chars(text)
    # folding changes no letter: the same words in text and folded. Without a non-ASCII letter, the words are
    # the runs of ASCII letters, which the regex engine finds more cheaply than a Unicode class
    ascii_words = not any(_LETTER_RE.match(ch) for ch in odd)
    split = (_ASCII_WORD_SPLIT_RE if ascii_words else _WORD_SPLIT_RE).split(text)
    dates = tokenize_dates(folded, month_starts_of_split(split) if words_are_runs(text, odd) else None)
    date_spans = SpanSet((d.start, d.end) for d in dates)
    # numbers that are part of a date ("2024-11-19", "19 Nov 2024") are the date, not figures
    numbers = [n for n in tokenize_numbers(folded) if not date_spans.covers(n.start, n.end)]
    words = _positions_of_split(split)
    by_value = sorted((v, i) for i, n in enumerate(numbers) for v in n.values)
    return PageIndex(text, numbers, dates, words, by_value, [v for v, _ in by_value], folded)


class _IndexCache:
    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[str, PageIndex] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0  # how many indexes were built (tests and benchmarks read it)

    def get(self, text: str, text_hash: str | None = None) -> PageIndex:
        key = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest() if not text_hash else text_hash
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit.text == text:
                self._items.move_to_end(key)
                return hit
        index = build_index(text)
        with self._lock:
            self.builds += 1
            self._items[key] = index
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return index


INDEX_CACHE = _IndexCache(_CACHE_SIZE)


def page_index(text: str, text_hash: str | None = None) -> PageIndex:
    return INDEX_CACHE.get(text, text_hash)
