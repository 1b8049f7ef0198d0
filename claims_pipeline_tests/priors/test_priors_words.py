"""Priors on amounts, counts and dates written in words in French and German: the claim's figure, as extraction
reads it, is found on a page that writes it in words or in digits, and a different figure is not."""

from __future__ import annotations

import pytest

from claims_pipeline.corpus.values import extract_values
from claims_pipeline.priors import TOKENS_ABSENT, TOKENS_PRESENT, build_prior
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of

S = rules_of()
URL = "https://www.numerique.gouv.fr/fonds"


def prior_of(claim_text: str, page_text: str) -> str:
    values = [v for v in extract_values(claim_text) if v.salient]
    assert values, claim_text
    return build_prior(claim(claim_text, values, url=URL), page(URL, f"{FILLER} {page_text} {FILLER}"), S).prior


@pytest.mark.parametrize("claim_text, page_text", [
    ("Le fonds est doté de 9 millions d'euros.", "Le fonds d'accompagnement dispose de 9 000 000 € sur trois ans."),
    ("Le fonds est doté de 9 millions d'euros.", "Une enveloppe de 9 millions d'euros est ouverte."),
    ("Le fonds est doté de 9 millions d'euros.", "Enveloppe : 9 M€."),
    ("Die Ausgaben lagen bei 46,9 Milliarden Euro.", "Ausgaben 2024: 46,9 Milliarden Euro (vorläufig)."),
    ("Die Ausgaben lagen bei 46,9 Milliarden Euro.", "Ausgaben insgesamt 46.900.000.000 Euro."),
    ("Rund 5,5 Millionen Menschen bezogen Bürgergeld.", "Im Juni 2024 waren es 5,5 Millionen Leistungsberechtigte."),
    ("Le budget atteint 2 milliards par an.", "soit 2 milliards d'euros chaque année"),
    ("L'audit date du 21 novembre 2017.", "Rapport publié le 21 novembre 2017 par la DINUM."),
    ("L'audit date du 21 novembre 2017.", "Veröffentlicht am 21.11.2017."),
    ("Die Nullrunde wurde am 6. September 2024 verkündet.", "Berlin, 6. September 2024 – Das BMAS teilt mit"),
    ("Au 1er janvier 2025, la règle change.", "À compter du 1 janvier 2025, la règle change."),
])
def test_a_figure_in_words_is_found_in_words_or_digits(claim_text, page_text):
    assert prior_of(claim_text, page_text) == TOKENS_PRESENT


@pytest.mark.parametrize("claim_text, page_text", [
    ("Le fonds est doté de 9 millions d'euros.", "Le fonds dispose de 12 millions d'euros sur trois ans."),
    ("Die Ausgaben lagen bei 46,9 Milliarden Euro.", "Ausgaben 2024: 42,1 Milliarden Euro."),
    ("Le budget atteint 2 milliards par an.", "soit 3 milliards chaque année"),
    ("L'audit date du 21 novembre 2017.", "Rapport publié le 12 novembre 2017."),
])
def test_a_different_figure_is_not_found(claim_text, page_text):
    assert prior_of(claim_text, page_text) == TOKENS_ABSENT


def test_a_counts_other_figures_on_the_page_are_counts_not_years_or_rates():
    from claims_pipeline.judge.figures import other_figures

    (count,) = [v for v in extract_values("Le budget atteint 2 milliards par an.") if v.salient]
    assert count.type == "number"
    page_text = "En 2024 le budget était de 3 milliards, soit 12 % de plus ; 2 milliards en 2023."
    assert other_figures(count, page_text) == ["3 milliards"]
