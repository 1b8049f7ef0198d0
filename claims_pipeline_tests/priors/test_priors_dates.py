"""The prior's date reading: year-first dates with dots or slashes, month-name dates without the comma, and a date
glued to the word before it by page chrome; a bare year or a number inside a longer number is never a date."""

from __future__ import annotations

import pytest

from claims_pipeline.priors import TOKENS_ABSENT, TOKENS_PRESENT, build_prior
from claims_pipeline.priors.dates import tokenize_dates
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value

S = rules_of()
URL = "https://www.example.gov/notice"


def full_dates(text: str) -> set[tuple[int, int | None, int | None]]:
    return {(t.year, t.month, t.day) for t in tokenize_dates(text)}


@pytest.mark.parametrize(
    "text, expected",
    [
        # year first, dots or slashes (the same separator twice), with or without leading zeros
        ("Promulgated 2003.06.11 by the ministry", (2003, 6, 11)),
        ("Promulgated 2003/06/11 by the ministry", (2003, 6, 11)),
        ("Promulgated 2003.6.1 by the ministry", (2003, 6, 1)),
        ("시행 2003. 6. 11. 법률 제6930호", (2003, 6, 11)),  # Korean statute pages write a space after each dot
        ("Posted: 2011.02.22 19:35", (2011, 2, 22)),  # a time after the date does not extend it
        ("updated 2013/10/22 20:01:01", (2013, 10, 22)),
        ("the decision (2003.06.11).", (2003, 6, 11)),
        # month name first, no comma before the year
        ("The match was played on May 1 2019 in Leeds", (2019, 5, 1)),
        ("Wed May 1 2019 10:00:00 GMT", (2019, 5, 1)),
        ("on Sept. 3rd 2019 the board met", (2019, 9, 3)),
        # glued to the word before it by page chrome (a menu label, a byline, a section name run together)
        ("Home | SoccerMay 1 2019 | Leeds 2 Derby 1", (2019, 5, 1)),
        ("Fagstein Post authorMarch 11, 2010 at 3:10 pm", (2010, 3, 11)),
        ("By Sam KeanApr. 4, 2019 , 10:00 AM", (2019, 4, 4)),
        ("ActualitésAoût 3 2019", (2019, 8, 3)),
        # Dutch month names
        ("gepubliceerd op 3 februari 2025 door de minister", (2025, 2, 3)),
        ("vastgesteld op 14 maart 2023", (2023, 3, 14)),
    ],
)
def test_date_forms_are_read(text: str, expected: tuple[int, int, int]) -> None:
    assert expected in full_dates(text)


@pytest.mark.parametrize(
    "text",
    [
        "The reform of 2003 changed the rules",  # a bare year
        "SoccerMay 2019",  # a glued month name and a year, no day: a bare month name never counts
        "SoccerMay 1 at the stadium",  # a glued month and a day with no year anywhere
        "NewsMay 12",  # idem
        # numbers inside longer numbers
        "serial 12003.06.11 in stock",
        "serial 2003.06.115 in stock",
        "version 1.2003.06.11",
        "build 2003.06.11.5",
        "path 2003/06/11/5/",
        "SoccerMay 1 20191",
        "May 1 20191 units",
        # separators that differ, and values out of range
        "ref 2003.06/11",
        "ref 2003. 6.11",
        "ref 2003.13.01",
        "ref 2003/06/32",
        "ref 1066.10.14",  # outside the years a page about law or money cites
    ],
)
def test_no_date_is_read_from(text: str) -> None:
    assert {d for d in full_dates(text) if d[2] is not None and d[0] != 0} == set(), tokenize_dates(text)


def test_a_year_first_date_is_one_date_not_three_numbers() -> None:
    # a dotted date must not leave "2003.06" behind as a figure for a number claim to match
    from claims_pipeline.priors.page_index import build_index

    index = build_index("Promulgated 2003.06.11 by the ministry")
    assert [(d.year, d.month, d.day) for d in index.dates] == [(2003, 6, 11)]
    assert index.numbers == []


def prior_of(claim_raw: str, page_fragment: str) -> str:
    c = claim(f"In force from {claim_raw}", [value("date", claim_raw)], url=URL)
    return build_prior(c, page(URL, FILLER + page_fragment + ". " + FILLER), S).prior


@pytest.mark.parametrize(
    "claim_raw, page_fragment, expected",
    [
        ("11 June 2003", "법률 제6930호, 2003.06.11, 일부개정", TOKENS_PRESENT),
        ("June 11, 2003", "Act No. 6930, promulgated 2003/06/11", TOKENS_PRESENT),
        ("2003-06-11", "시행 2003. 6. 11.", TOKENS_PRESENT),
        ("May 1, 2019", "The final was played on May 1 2019", TOKENS_PRESENT),
        ("May 1, 2019", "Latest | SoccerMay 1 2019 | Leeds 2 Derby 1", TOKENS_PRESENT),
        # the same forms with another date, a bare year, or the date inside a longer number: still absent
        ("11 June 2003", "법률 제6930호, 2003.06.12, 일부개정", TOKENS_ABSENT),
        ("11 June 2003", "amended in 2003; article 06, item 11", TOKENS_ABSENT),
        ("11 June 2003", "reference number 12003.06.11", TOKENS_ABSENT),
        ("May 1, 2019", "Latest | SoccerMay 2 2019 | Leeds 2 Derby 1", TOKENS_ABSENT),
        ("May 1, 2019", "Latest | SoccerMay 1 | season 20191", TOKENS_ABSENT),
    ],
)
def test_date_claim_against_these_forms(claim_raw: str, page_fragment: str, expected: str) -> None:
    assert prior_of(claim_raw, page_fragment) == expected
