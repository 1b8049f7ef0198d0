"""The page index's fast paths (priors/page_index.py, dates.py, scan.py, numbers.py) give what the plain loops
they replaced gave, on texts chosen to break them (case folds that change length, letters outside the date
reader's alphabet, full-width digits, a range without its hint) and on the fixture web's own pages."""

from __future__ import annotations

import re

import pytest

from claims_pipeline.priors import build, dates, numbers, page_index, scan
from claims_pipeline.web.html_text import html_to_text
from claims_pipeline_demo.fixture_web.server import DEFAULT_SITES_DIR

SITES = DEFAULT_SITES_DIR

TRICKY = [
    "",
    "   ",
    "2024",
    "Straße STRASSE straße ﬁnance ﬁnances İstanbul ISTANBUL Σίσυφος ΣΊΣΥΦΟΣ",  # casefold grows or differs
    "Kelvin oKt (U+212A) and ſeptember with a long s; µmay, ºmay, ×May 2 2024 and May÷3 2024",
    "Due 12 May 2024, 3 juin 2023, März 2022, 1er août 2021 and Déc. 5, 2020; mai 2019.",
    "SoccerMay 1 2019 and Sport September 3 2020",
    "令和６年 ６．３２％ ٦٫٣٢٪ 2024‑1039 ２０２４年３月１日 民國113年",
    "price €1.2–1.5 million, 2.0–4.8 %, 5 to 10 %, 5to €6 %, 7 bis 9 %",
    "word_with_underscores x2y 3abc abc3 a1b2c3 ___ __init__",
    "é" * 7 + " " + "É" * 3 + "\u00e9\u0301 combining marks",
    "\t\nmultiple\u00a0spaces\u2009and\u202fnarrow 12\u00a0345 67 890",
    "plafond de 77 700 € par foyer; 6,32 % du prix; 1.234,5 EUR; 1'000'000 CHF",
    " ", "\n", " a", "a ", "\u00a0x\u2009y\u3000", "\x1c\x1d a \x85", "x\u200by",  # whitespace of every kind
]


def fixture_pages() -> list[str]:
    texts = []
    for path in sorted(SITES.rglob("*")):
        if path.is_file() and path.suffix in ("", ".html", ".htm", ".txt", ".v2") or path.name.endswith(".html.v2"):
            raw = path.read_text(encoding="utf-8", errors="replace")
            texts.append(html_to_text(raw) if "<" in raw else raw)
    return texts


TEXTS = TRICKY + fixture_pages()


def old_search_form(text: str) -> str:
    return text if text.isascii() else text.translate(page_index._FOLD)


def old_words(text: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for m in re.finditer(r"[^\W\d_]+", text):
        out.setdefault(page_index.word_stem(m.group(0)), []).append(m.start())
    return out


def old_month_starts(text: str) -> list[int]:
    return [w.start() for w in dates._WORD_RE.finditer(text) if w.group(0).lower() in dates.MONTHS]


def old_digit_starts(text: str) -> list[int]:
    return [m.start() for m in re.finditer(r"(?<!\d)\d", text)]


def test_the_fixture_pages_are_read() -> None:
    assert len(fixture_pages()) >= 10


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_fast_paths_equal_the_plain_loops(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert page_index.search_form(text) == old_search_form(text)
    assert page_index.word_positions(text) == old_words(text)
    index = page_index.build_index(text)  # its own split (ASCII letters when the page has no other) and dates
    assert index.words == old_words(text)
    assert index.dates == dates.tokenize_dates(old_search_form(text))
    assert dates._month_starts(text) == old_month_starts(text)
    assert scan.digit_starts(text) == old_digit_starts(text)
    split = re.split(r"([^\W\d_]+)", text)
    if dates.words_are_runs(text):
        assert dates.month_starts_of_split(split) == old_month_starts(text)
    else:
        assert re.findall(r"[^\W\d_]+", text) != dates._WORD_RE.findall(text) or re.search("[×÷]", text)
    assert build._squash(text) == re.sub(r"\s+", " ", text)
    folded = old_search_form(text)
    new = numbers.tokenize_numbers(folded)
    ranges = numbers._with_range_units  # as before: the hint searched first, on every text
    monkeypatch.setattr(numbers, "_with_range_units",
                        lambda tokens, t: ranges(tokens, t) if numbers._RANGE_HINT_RE.search(t) else tokens)
    assert new == numbers.tokenize_numbers(folded)


def test_tricky_texts_exercise_the_fast_paths() -> None:
    """The texts above do reach the branches: folds, months found and not, stems that casefold grows."""
    assert page_index.search_form("６．３２％") == "6.32%"
    assert page_index.search_form("€ 5 and ü") == "€ 5 and ü"
    assert dates._month_starts("nothing here but 2024") == []
    assert [TRICKY[5][i:i + 3] for i in dates._month_starts(TRICKY[5])] == ["May", "jui", "Mär", "aoû", "Déc", "mai"]
    assert page_index.word_positions("Straße STRASSE")["strass"] == [0, 7]
    assert dates.words_are_runs(TRICKY[5]) and not dates.words_are_runs(TRICKY[4])
    assert not dates.words_are_runs(TRICKY[3]) and not dates.words_are_runs(TRICKY[7])


def test_a_range_without_its_hint_keeps_its_bounds_apart() -> None:
    """A range's unit is shared only on a text with a range word or dash (the hint): "5to €6 %" has none
    (no word boundary inside "5to"), so its 5 stays unitless, while "5 to €6 %" makes it a percentage."""
    unhinted = numbers.tokenize_numbers("fees 5to €6 %")
    hinted = numbers.tokenize_numbers("fees 5 to €6 %")
    assert [t.unit for t in unhinted] == [None, "pct"]
    assert [t.unit for t in hinted] == ["pct", "pct"]


def test_statutes_found_by_the_shared_shape_are_the_ones_their_own_pattern_finds() -> None:
    """matching._statute_matches against the compiled _statute_pattern, over seeded random pages built from
    the characters that decide a match (digits, separators, spaces, letters, other digits) and identifiers
    with empty parts ("2024--5"); the same spans in the same order, and matches do occur."""
    import random

    from claims_pipeline.priors.matching import _DIGITS_IDENT_RE, _statute_matches, _statute_pattern

    rng = random.Random(19)
    alphabet = ["1", "2", "0", "12", "2024", "-", ".", "/", ":", " ", "  ", "\u00a0", "a", "B", "ſ", "३", "_", ",", "\n"]
    found = 0
    pinned = [("1-1", "1 - 1 - 1"),  # a second match would start inside the first: finditer skips it
              ("2024-5", "३2024-5 and 2024-5"),  # a digit that is not ASCII before: still a start
              ("2024--5", "2024- -5, 2024--5, 2024-5")]
    for ident, text in pinned:
        index = page_index.build_index(text)
        expected = [m.span() for m in _statute_pattern(ident).finditer(index.search_text)]
        assert [m.span() for m in _statute_matches(ident, index)] == expected, (ident, text)
        assert expected
    for _ in range(1500):
        ident = rng.choice(["1", "2", "12", "2024", "0"]) + "".join(
            rng.choice(["-", ".", "/", ":", "1", "2", "0"]) for _ in range(rng.randrange(5)))
        ident = ident.rstrip(".,;:)(/-") or "1"
        assert _DIGITS_IDENT_RE.fullmatch(ident)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        if rng.random() < 0.5:  # plant it, with its separators swapped or spaced
            planted = "".join(rng.choice(["-", ".", " / ", ":"]) if ch in "-./:" else ch for ch in ident)
            cut = rng.randrange(len(text) + 1)
            text = text[:cut] + planted + text[cut:]
        index = page_index.build_index(text)
        expected = [m.span() for m in _statute_pattern(ident).finditer(index.search_text)]
        assert [m.span() for m in _statute_matches(ident, index)] == expected, (ident, text)
        found += bool(expected)
    assert found > 300


def test_words_are_runs_exactly_when_they_are() -> None:
    """dates.words_are_runs, for every character up to U+3000 between two letters and beside a month name:
    never true when the page's words and the date reader's letter runs differ (false when they are the same
    only costs the slower path: it is so for few characters, all letters outside the runs' alphabet)."""
    wrong, cautious = [], []
    for code in range(1, 0x3000):
        for text in (f"a{chr(code)}b", f"{chr(code)}May 2 2024", "May" + chr(code)):
            same = re.findall(r"[^\W\d_]+", text) == dates._WORD_RE.findall(text)
            if dates.words_are_runs(text) and not same:
                wrong.append(code)
            elif same and not dates.words_are_runs(text):
                cautious.append(code)
    assert not wrong, [hex(c) for c in wrong[:10]]
    assert all(re.match(r"[^\W\d_]", chr(c)) for c in cautious)
    assert not dates.words_are_runs("aµb") and dates.words_are_runs("a€b")
