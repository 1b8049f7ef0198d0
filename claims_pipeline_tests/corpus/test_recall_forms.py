"""Figures and sources as people write them that extraction used to miss (issue 31, the recall pass): hedged
shares, Japanese fractions, years that are what a sentence says, ranges written "between … and …", a paragraph
that is only a link under a statement, and a sentence's first line after a colon or an HTML line break. Each
case is written here in our own words; each failed before these rules."""

from __future__ import annotations

import pytest

from claims_pipeline.corpus.values import extract_values

from .conftest import extract_lines


def kinds(text: str) -> list[tuple[str, str, float | None, bool]]:
    return [(v.type, v.raw, v.number, v.salient) for v in extract_values(text)]


def salient_years(text: str) -> list[str]:
    return [v.raw for v in extract_values(text) if v.type == "year" and v.salient]


# ---- shares hedged by a comparison --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, raw", [
    ("More than half of the towns replied.", "More than half"),
    ("Nearly a third include a deadline.", "Nearly a third"),
    ("Mehr als die Hälfte der Kreise meldete Daten.", "Mehr als die Hälfte"),
    ("Plus de la moitié des communes ont répondu.", "Plus de la moitié"),
    ("Más de la mitad de los hogares ahorra.", "Más de la mitad"),
    ("Più della metà delle scuole aderisce.", "Più della metà"),
    ("Bijna de helft van de gemeenten doet mee.", "Bijna de helft"),
    ("Almost a quarter of the budget went to roads.", "Almost a quarter"),
])
def test_a_hedged_share_is_a_ratio(text, raw):
    assert kinds(text) == [("ratio", raw, 1.0, True)]


@pytest.mark.parametrize("text", [
    "Getting started is half the battle.",
    "She ran for a third term.",
    "One half of the pair stayed home.",
    "The other half is blue.",
])
def test_a_share_without_a_comparison_stays_a_manner_of_speaking(text):
    assert [v for v in extract_values(text) if v.type == "ratio"] == []


def test_a_japanese_fraction_is_a_ratio():
    assert kinds("調査対象の国のうち4分の1が規制を導入した。") == [("ratio", "4分の1", 1.0, True)]


@pytest.mark.parametrize("text, raw, number, salient", [
    ("論文が60以上見つかった。", "60以上", 60.0, True),
    ("約1,200人が回答した。", "1,200人", 1200.0, True),
    ("45か国が参加した。", "45か国", 45.0, True),
])
def test_a_japanese_count(text, raw, number, salient):
    assert kinds(text) == [("count", raw, number, salient)]


def test_a_japanese_count_under_ten_is_no_figure():
    assert kinds("3社が応募した。") == []  # under ten, as in the other languages


# ---- years that are what the sentence says ---------------------------------------------------------------------

@pytest.mark.parametrize("text, year", [
    # a citation in brackets after a framing year does not end its clause
    ("Seit 2011 ([Norm](https://norm.example/x)) ist das Format offen.", "2011"),
    ("Since 2014 ([spec](https://spec.example/y)) the format is open.", "2014"),
    # a point in time written without "in"
    ("Das Ziel wurde bereits 2013 im Plan festgelegt.", "2013"),
    ("Ab 2027 gilt die neue Pflicht für alle Ämter.", "2027"),
    ("Dès 2018 le registre est devenu public.", "2018"),
    ("Vanaf 2026 geldt de regel voor iedereen.", "2026"),
    # a fiscal year names a period
    ("Spending rules of the fiscal year 2017 apply to the grants.", "2017"),
    ("In FY2022, the office closed two sites.", "2022"),
    # the year of an event as the subject's adjective
    ("The 1979 accident and its aftermath had lasting effects.", "1979"),
    ("As announced, the 2024 motto is Clean Water for All.", "2024"),
    # a year after a bold run-in title that opens the paragraph
    ("**Dataset rules** 2021 ist die Verordnung in Kraft getreten.", "2021"),
    # a year closing a law's name
    ("Het Besluit 2019 regelt de toegang tot de gegevens.", "2019"),
    ("Dit volgt uit de Wet op de huurtoeslag (WHT) 1997 en de regels.", "1997"),
])
def test_a_year_that_is_the_point_is_salient(text, year):
    assert salient_years(text) == [year]


@pytest.mark.parametrize("text", [
    "The 2019 report ([r](https://r.example/a)) describes the method.",  # a document's own year
    "The law was reformed in 2019 ([r](https://r.example/b)).",  # a time phrase closing its clause
    "Using the OMB Fiscal Year 2017 Historical Tables we set the share.",  # a fiscal year in a title
    "See the FY 2024 Budget Request for details.",
    "Rents rose 9.4 % in 2024 according to the office.",  # the period of a figure
])
def test_a_year_that_names_a_work_or_a_period_stays_bare(text):
    assert salient_years(text) == []


# ---- ranges -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, low, high", [
    ("Grants are between $3 and $12 million per city.", 3e6, 12e6),
    ("Die Kosten liegen zwischen 4 und 9 Mrd. Euro.", 4e9, 9e9),
    ("Le coût se situe entre 5 et 8 millions d'euros.", 5e6, 8e6),
    ("The share is between 20 and 35 % of households.", 20.0, 35.0),
])
def test_a_between_range_gives_its_lower_bound_the_upper_scale(text, low, high):
    got = sorted(v.number for v in extract_values(text) if v.type in ("money", "pct"))
    assert got == [low, high]


# ---- law numbers and measures ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, raw", [
    ("Under FAR (Federal Acquisition Regulation) 15.304 the award is scored.", "FAR (Federal Acquisition Regulation) 15.304"),
    ("Selon l’article R245 B-2 du livre, la donnée est protégée.", "article R245"),
])
def test_law_numbers_people_write(text, raw):
    assert [(v.type, v.raw) for v in extract_values(text)] == [("statute", raw)]


def test_metric_tons_are_a_measure():
    assert kinds("The plant emitted 40 metric tons of methane.") == [("measure", "40 metric tons", 40.0, True)]


# ---- sources and sentences across lines ----------------------------------------------------------------------------

def test_a_link_alone_under_a_statement_is_its_source():
    text = ("The rules apply from 3 March 2026 to every registered provider.\n"
            "\n"
            "[Regulation on providers (EU) 2025/77](https://eur-lex.europa.eu/eli/reg/2025/77/oj)\n")
    found = {(c.line_no, c.source_url) for c in extract_lines(text).claims}
    assert (1, "https://eur-lex.europa.eu/eli/reg/2025/77/oj") in found


def test_a_link_alone_under_a_list_is_not_its_source():
    text = ("- The rules apply from 3 March 2026.\n"
            "\n"
            "[Regulation on providers](https://eur-lex.europa.eu/eli/reg/2025/77/oj)\n")
    assert [c for c in extract_lines(text).claims if c.line_no == 1] == []


def test_a_sentence_after_a_line_ending_in_a_colon_starts_on_its_own_line():
    text = ("Since the new statute took effect things have changed a lot:\n"
            "Every office under [§ 4 OrgG](https://laws.example.gov/orgg/4) must publish its records.\n")
    (c,) = extract_lines(text).claims
    assert c.line_no == 2 and [v.raw for v in c.values] == ["§ 4"]


def test_a_sentence_after_an_html_line_break_starts_on_its_own_line():
    text = ("**Format**: the tables are written as comma separated values.<br/>\n"
            "**Standard**: Since 2005 ([RFC 4180](https://www.rfc-editor.org/rfc/rfc4180)) the format is described.\n")
    (c,) = extract_lines(text).claims
    assert c.line_no == 2 and "2005" in [v.raw for v in c.values]


def test_a_small_count_in_a_link_label_is_that_links_figure():
    text = "- Read the [7 criteria for an impact assessment](https://dpa.example.gov/criteria) first.\n"
    (c,) = extract_lines(text).claims
    assert [v.raw for v in c.values] == ["7 criteria"]


def test_a_how_to_count_in_a_link_label_is_no_claim():
    assert extract_lines("- Follow the [3 steps to register](https://dpa.example.gov/register).\n").claims == []
