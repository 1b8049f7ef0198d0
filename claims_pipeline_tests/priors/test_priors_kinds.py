"""Priors on the newer figure kinds (priors/kinds.py, docs/decisions/0004): a claim's figure, as extraction reads
it, is found on a page that writes it in another of its forms, a different figure is not, and a kind the page
does not carry in any form read here never turns a present carrier into TOKENS_ABSENT."""

from __future__ import annotations

import pytest

from claims_pipeline.corpus.values import extract_values
from claims_pipeline.priors import TOKENS_ABSENT, TOKENS_PRESENT, WEAK_MATCH, build_prior
from claims_pipeline.priors.build import Prior
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of

S = rules_of()
URL = "https://www.example.gov/source"


def prior_of(claim_text: str, page_text: str) -> Prior:
    values = [v for v in extract_values(claim_text) if v.salient]
    assert values, claim_text
    return build_prior(claim(claim_text, values, url=URL), page(URL, f"{FILLER} {page_text} {FILLER}"), S)


@pytest.mark.parametrize("claim_text, page_text", [
    # durations: digits, words, the compound adjective, another language, another unit of the same span
    ("You must file within 30 days of the grant.", "The election must be filed no later than 30 days after it."),
    ("You must file within 30 days of the grant.", "The election must be filed within thirty days after it."),
    ("You must file within 30 days of the grant.", "A 30-day window applies to the election."),
    ("Die Frist beträgt 30 Tage.", "Die Frist beträgt dreißig Tage ab Zugang."),
    ("Le délai est de 6 mois.", "Un délai de six mois s'applique."),
    ("De termijn is 3 jaar.", "De termijn bedraagt drie jaar."),
    ("You must file within 2 weeks.", "File within 14 days."),
    ("The lease runs 1 year.", "The lease runs 12 months."),
    ("The average tenure was 7.7 years.", "Average tenure: 7.7 years."),
    # percentages in words
    ("Die Arbeitslosenquote lag bei 5,3 Prozent.", "Arbeitslosenquote: 5.3 %"),
    ("Die Arbeitslosenquote lag bei 5,3 Prozent.", "Arbeitslosenquote: 5,3 %"),
    ("Die Arbeitslosenquote lag bei 5,3 Prozent.", "Die Quote lag bei 5,3 Prozent."),
    ("Le taux est de 20 pour cent.", "Le taux est fixé à 20 %."),
    ("Le taux est de vingt pour cent.", "Le taux est de vingt pour cent."),
    ("Le taux est de vingt pour cent.", "Le taux est fixé à 20 %."),
    # counts: the number near the noun
    ("About 155 individuals were surveyed.", "We surveyed 155 individuals in total."),
    ("Rund 700.000 Menschen nahmen teil.", "Es nahmen 700 000 Menschen teil."),
    ("203 Bürgerdialoge fanden statt.", "Insgesamt 203 Bürgerdialoge wurden geführt."),
    # measures with a unit in another of its forms
    ("Warming of 1,5 Grad Celsius is the limit.", "to limit warming to 1.5°C above pre-industrial levels"),
    ("The plant adds 3 GW.", "a capacity of 3 gigawatts"),
    ("A home uses 12 kWh a day.", "average use of 12 kWh per day"),
    ("Emissions fell by 40 Mt CO2.", "a fall of 40 Mt of CO2"),
    # a named index's value
    ("Germany has a Gini coefficient of 0,29.", "The Gini coefficient stood at 0.29 in 2020."),
    # ranks and ratios: both numbers, or the ratio as a share
    ("Deutschland belegt Platz 13 von 35.", "Deutschland landet auf Rang 13 (von 35 Ländern)."),
    ("The country ranked 13th of 35.", "It is 13th out of 35 countries."),
    ("One in 20 adults smokes.", "5 % of adults smoke."),
    ("One in 20 adults smokes.", "one in twenty adults smoke."),
    ("1 op de 5 Nederlanders rookt.", "1 op de 5 Nederlanders rookt dagelijks."),
    ("Two thirds of voters agreed.", "2/3 of voters agreed."),
    ("Two thirds of voters agreed.", "67 percent of voters agreed."),
    # decades
    ("Since the 1950s the rate rose.", "since the 1950's, rates have risen"),
    ("Die 1990er Jahre waren anders.", "in den 1990er-Jahren"),
    ("Dans les années 1980, le taux a doublé.", "dans les années 80, le taux a doublé"),
    # law and section numbers in their variants
    ("File a Section 83(b) election.", "an election under § 83(b) of the Code"),
    ("File a Section 83(b) election.", "an election under sec. 83(b) of the Code"),
    ("Nach § 3 Abs. 2 gilt das.", "Gemäß § 3 Absatz 2 gilt Folgendes."),
    # a year that opens a statement
    ("2019 was the warmest year on record.", "The year 2019 was the warmest on record."),
    # a multiple, in its other forms
    ("The gas traps 28 times the heat of CO2.", "it traps 28 times more heat than carbon dioxide"),
    ("The gas traps 28 times the heat of CO2.", "a warming effect 28x that of carbon dioxide"),
    ("Der Bedarf ist 4 mal so hoch.", "ein 4-fold higher demand"),
])
def test_a_figure_of_each_kind_is_found_in_its_other_forms(claim_text, page_text):
    assert prior_of(claim_text, page_text).prior == TOKENS_PRESENT


@pytest.mark.parametrize("claim_text, page_text", [
    ("You must file within 30 days of the grant.", "You must file within 60 days of the grant."),
    ("Die Arbeitslosenquote lag bei 5,3 Prozent.", "Die Quote lag bei 6,3 Prozent."),
    ("About 155 individuals were surveyed.", "We surveyed 160 individuals in total."),
    ("Warming of 1,5 Grad Celsius is the limit.", "to limit warming to 2°C above pre-industrial levels"),
    ("Germany has a Gini coefficient of 0,29.", "The Gini coefficient stood at 0.31 in 2020."),
    ("Deutschland belegt Platz 13 von 35.", "Deutschland landet auf Rang 17 (von 38 Ländern)."),
    ("Since the 1950s the rate rose.", "since the 1970s, rates have risen"),
    ("2019 was the warmest year on record.", "The year 2018 was the warmest on record."),
    ("The gas traps 28 times the heat of CO2.", "it traps 25 times more heat than carbon dioxide"),
])
def test_a_different_figure_of_the_kind_is_not_found(claim_text, page_text):
    assert prior_of(claim_text, page_text).prior == TOKENS_ABSENT


@pytest.mark.parametrize("claim_text, page_text", [
    ("You must file within 30 days of the grant.", "Form 30 must be filed within a month of the grant."),
    ("About 155 individuals were surveyed.", "The survey covered 155 respondents."),
    ("Since the 1950s the rate rose.", "In 1953 the rate was low."),
    ("Warming of 1,5 Grad Celsius is the limit.", "warming of 1.5 per year"),
    ("The gas traps 28 times the heat of CO2.", "Table 28 lists the gases."),
])
def test_the_number_without_its_unit_or_noun_is_a_weak_hit_not_an_absence(claim_text, page_text):
    assert prior_of(claim_text, page_text).prior == WEAK_MATCH


def test_a_new_kind_is_no_carrier_beside_a_percentage():
    """The page states the rate; it writes the period as 'a month', which no reader takes for 30 days: the rate
    decides, so the claim is TOKENS_PRESENT, with the period listed as missing."""
    p = prior_of("A 5 % fee applies for 30 days.", "A fee of 5 % applies for a month.")
    assert p.prior == TOKENS_PRESENT and p.missing_tokens == ["30 days"]


def test_kinds_without_a_carrier_decide_together_with_dates():
    p = prior_of("Since 3 March 2021 the deadline is 30 days.", "Since 3 March 2021 the deadline is one month.")
    assert p.prior == WEAK_MATCH  # the date is there, the period in no form read: not absent
    p = prior_of("Since 3 March 2021 the deadline is 30 days.", "Since 3 March 2021 the deadline is thirty days.")
    assert p.prior == TOKENS_PRESENT
