"""Every kind of figure people cite, read with its kind in six languages (corpus/figure_kinds.py,
docs/decisions/0004): what is read, its number, and whether it makes a sentence a claim."""

from __future__ import annotations

import pytest

from claims_pipeline.corpus.records import ClaimRecord, Value
from claims_pipeline.corpus.values import extract_values, may_hold_figure


def kinds(text: str) -> list[tuple[str, str, float | None, bool]]:
    return [(v.type, v.raw, v.number, v.salient) for v in extract_values(text)]


@pytest.mark.parametrize("text, raw, number", [
    ("Die Arbeitslosenquote lag bei 5,3 Prozent.", "5,3 Prozent", 5.3),
    ("Le taux est de 20 pour cent.", "20 pour cent", 20.0),
    ("La tasa es del 15 por ciento.", "15 por ciento", 15.0),
    ("Il tasso è del 7 per cento.", "7 per cento", 7.0),
    ("Het tarief is 12 procent.", "12 procent", 12.0),
    ("The rate is 12 percent.", "12 percent", 12.0),
    ("Die Quote stieg um 2 Prozentpunkte.", "2 Prozentpunkte", 2.0),
    ("Le taux est de vingt pour cent.", "vingt pour cent", 20.0),
    ("Die Quote lag bei fünf Prozent.", "fünf Prozent", 5.0),
])
def test_percentages_in_digits_and_in_words(text, raw, number):
    assert kinds(text) == [("pct", raw, number, True)]


def test_a_money_range_shares_its_scale():
    got = [(v.raw, v.number) for v in extract_values("Costs range from $2 to $15 million; in Germany €2–3 Mrd.") if v.type == "money"]
    assert got == [("$2", 2e6), ("$15 million", 15e6), ("€2", 2e9), ("3 Mrd", 3e9)]


@pytest.mark.parametrize("text, raw, number", [
    ("You must file the election within 30 days of the grant.", "30 days", 30.0),
    ("The average tenure was 7.7 years.", "7.7 years", 7.7),
    ("Die Frist beträgt 30 Tage.", "30 Tage", 30.0),
    ("Le délai est de 6 mois.", "6 mois", 6.0),
    ("De termijn is 3 jaar.", "3 jaar", 3.0),
    ("El plazo es de 15 días.", "15 días", 15.0),
    ("Il termine è di 60 giorni.", "60 giorni", 60.0),
    ("A 30-day window applies.", "30-day", 30.0),
    ("You have thirty days to appeal.", "thirty days", 30.0),
    ("Die Bindung dauert drei Jahre.", "drei Jahre", 3.0),
    ("Le délai est de vingt-cinq jours.", "vingt-cinq jours", 25.0),
    ("El plazo es de treinta y cinco días.", "treinta y cinco días", 35.0),
    ("Pay within 30 working days.", "30 working days", 30.0),
])
def test_durations(text, raw, number):
    assert kinds(text) == [("duration", raw, number, True)]


@pytest.mark.parametrize("text, raw, number", [
    ("About 155 individuals were surveyed.", "155 individuals", 155.0),
    ("Es fanden 203 Bürgerdialoge statt.", "203 Bürgerdialoge", 203.0),
    ("Rund 700.000 Menschen nahmen teil.", "700.000 Menschen", 700000.0),
    ("Plus de 1 200 communes ont répondu.", "1 200 communes", 1200.0),
    ("Participaron 45 municipios.", "45 municipios", 45.0),
    ("Hanno risposto 32 comuni.", "32 comuni", 32.0),
    ("Er deden 88 gemeenten mee.", "88 gemeenten", 88.0),
])
def test_counts_of_a_named_thing_are_salient(text, raw, number):
    assert kinds(text) == [("count", raw, number, True)]


@pytest.mark.parametrize("text, expected", [
    ("Follow these 3 steps to apply.", [("count", "3 steps", 3.0, False)]),
    ("Here are 10 tips for savers.", [("count", "10 tips", 10.0, False)]),
    ("Only 4 countries replied.", [("count", "4 countries", 4.0, False)]),  # below 10: not a claim alone
    ("Table 3 shows the rates.", []),
    ("Write to 155 Main Street.", []),
    ("Only Windows 10 users can upgrade.", []),  # a capitalised word inside a sentence names a thing
    ("COVID-19 cases rose.", []),
    ("In 2019 elections were held.", [("year", "2019", None, True)]),  # no count; the year is the time (salient)
    ("during the 2018–19 academic year", [("year", "2018", None, False)]),
    ("There were 12 and 14 in total.", []),
])
def test_counts_that_make_no_claim(text, expected):
    assert kinds(text) == expected


@pytest.mark.parametrize("text, kind, raw, number", [
    ("Deutschland belegt Platz 13 von 35.", "rank", "Platz 13 von 35", 13.0),
    ("The country ranked 13th of 35.", "rank", "ranked 13th of 35", 13.0),
    ("La France est classée 5e place.", "rank", "classée 5e place", 5.0),
    ("One in 20 adults smokes.", "ratio", "One in 20", 1.0),
    ("40 von 100 Menschen sind betroffen.", "ratio", "40 von 100", 40.0),
    ("1 op de 5 Nederlanders rookt.", "ratio", "1 op de 5", 1.0),
    ("1 sur 4 salariés est concerné.", "ratio", "1 sur 4", 1.0),
    ("Two thirds of voters agreed.", "ratio", "Two thirds", 2.0),
    ("Zwei Drittel der Befragten stimmten zu.", "ratio", "Zwei Drittel", 2.0),
    ("Un tiers des communes a répondu.", "ratio", "Un tiers", 1.0),
])
def test_ranks_and_ratios(text, kind, raw, number):
    assert [k for k in kinds(text) if k[0] in ("rank", "ratio")] == [(kind, raw, number, True)]


def test_a_file_size_is_read_but_makes_no_claim():
    assert kinds("Vienne: the traffic PDF (~27 MB)") == [("measure", "27 MB", 27.0, False)]


def test_an_article_before_a_fraction_word_is_a_ratio_only_as_a_share():
    assert kinds("She won a third term.") == []


@pytest.mark.parametrize("text, raw, year", [
    ("Since the 1950s the rate rose.", "1950s", 1950.0),
    ("In the 1950's it fell.", "1950's", 1950.0),
    ("Die 1990er Jahre waren anders.", "1990er Jahre", 1990.0),
    ("Dans les années 1980, le taux a doublé.", "années 1980", 1980.0),
    ("Back in the '80s it was rare.", "'80s", 1980.0),
    ("En los años 70 subió.", "años 70", 1970.0),
    ("In de jaren 60 daalde het.", "jaren 60", 1960.0),
])
def test_decades(text, raw, year):
    assert kinds(text) == [("decade", raw, year, True)]


def test_a_year_that_opens_a_statement_is_salient_and_a_year_elsewhere_is_not():
    assert kinds("2019 was the warmest year on record.") == [("year", "2019", None, True)]
    assert kinds("- 2020 brachte einen Einbruch.") == [("year", "2020", None, True)]
    assert kinds("The report of 2019 was short.") == [("year", "2019", None, False)]


@pytest.mark.parametrize("text, raw, number", [
    ("Warming of 1,5 Grad Celsius is the limit.", "1,5 Grad Celsius", 1.5),
    ("A home uses 12 kWh a day.", "12 kWh", 12.0),
    ("The plant adds 3 GW.", "3 GW", 3.0),
    ("Emissions fell by 40 Mt CO2.", "40 Mt CO2", 40.0),
    ("The trail is 5 km long.", "5 km", 5.0),
    ("Le site couvre 120 hectares.", "120 hectares", 120.0),
    ("Es fielen 1.200 Tonnen an.", "1.200 Tonnen", 1200.0),
])
def test_measures_with_units(text, raw, number):
    assert kinds(text) == [("measure", raw, number, True)]


@pytest.mark.parametrize("text, raw, number", [
    ("Germany has a Gini coefficient of 0,29.", "Gini coefficient of 0,29", 0.29),
    ("Norway's Human Development Index of 0.961 leads.", "Development Index of 0.961", 0.961),
    ("Der Gini-Koeffizient lag bei 0,29.", "Gini-Koeffizient lag bei 0,29", 0.29),
])
def test_a_named_index_value(text, raw, number):
    assert kinds(text) == [("index", raw, number, True)]


@pytest.mark.parametrize("text, raw, salient", [
    ("File a Section 83(b) election.", "Section 83(b)", True),
    ("See sec. 501(c)(3) of the Code.", "sec. 501(c)(3)", True),
    ("Nach § 3 Abs. 2 gilt das.", "§ 3 Abs. 2", True),
    ("Under Art. 6(1) GDPR.", "Art. 6(1)", True),
    ("Nach Artikel 5 DSGVO.", "Artikel 5", True),
    ("La Loi n° 2016-1321 du 7 octobre.", "Loi n° 2016-1321", True),
    ("Selon l'article L. 312-1 du code.", "article L. 312-1", True),
    ("Según el artículo 14 de la ley.", "artículo 14", True),
    ("See Section 3 below.", "Section 3", False),  # a document's own section as often as a law's
])
def test_law_and_section_numbers(text, raw, salient):
    assert [(v.raw, v.salient) for v in extract_values(text) if v.type == "statute"] == [(raw, salient)]


def test_the_five_sentences_of_issue_31_each_have_a_salient_figure():
    sentences = [
        "The top federal rate is 37% for income above $609,350, according to the",
        "Die Arbeitslosenquote lag bei 5,3 Prozent (Statistik).",
        "You must file the election within 30 days of the grant (IRS 83(b)).",
        "About 155 individuals were surveyed in 2019 (survey).",
        "Le taux est de 20 pour cent (impots).",
    ]
    assert [[v.raw for v in extract_values(s) if v.salient] for s in sentences] == [
        ["$609,350", "37%"], ["5,3 Prozent"], ["30 days"], ["155 individuals"], ["20 pour cent"]]


def test_stored_values_from_before_still_load_and_new_kinds_round_trip():
    old = {"type": "pct", "raw": "5 %", "needles": ["5"], "salient": True, "pos": 0, "end": 3, "number": 5.0}
    assert Value.from_dict(old) == Value("pct", "5 %", ("5",), True, 0, 3, 5.0)
    (v,) = extract_values("within 30 days")
    assert Value.from_dict(v.to_dict()) == v and v.to_dict()["type"] == "duration"
    record = ClaimRecord(id="s:1:x", scope="s", section="", line_no=1, claim_text="within 30 days", values=(v,),
                         source_url="https://a.gov/x", source_host="a.gov", source_tier="primary-gov", inline_stamp=None,
                         link_kind="markdown", last_verified=None, last_verified_origin="none")
    assert ClaimRecord.from_dict(record.to_dict()) == record
    import pickle

    assert pickle.loads(pickle.dumps(v)) == v


@pytest.mark.parametrize("text, holds", [
    ("You have thirty days to appeal.", True), ("Zwei Drittel der Befragten.", True), ("Le taux: vingt pour cent.", True),
    ("a rate of 5 %", True), ("See the guide for details.", False), ("Read it per the rules.", False),
])
def test_may_hold_figure_says_which_text_the_values_reader_needs(text, holds):
    assert may_hold_figure(text) is holds
    if not holds:
        assert extract_values(text) == []


@pytest.mark.parametrize("text, raw", [
    # Dutch, Spanish and Italian policy notes date events by month and year; Dutch writes months in lower case
    ("Het ministerie stelde de regeling vast in februari 2024.", "februari 2024"),
    ("Sinds oktober 2022 werkt de dienst zo.", "oktober 2022"),
    ("Sinds september 2021 werkt de dienst zo.", "september 2021"),
    ("El consejo aprobó el plan el 4 marzo 2023.", "4 marzo 2023"),
    ("Il comitato si è riunito a giugno 2020.", "giugno 2020"),
])
def test_month_and_year_in_dutch_spanish_italian(text, raw):
    assert [(v.type, v.raw, v.salient) for v in extract_values(text)] == [("date", raw, True)]


def test_an_english_lower_case_word_before_a_year_is_no_date():
    assert [v.type for v in extract_values("We may 2024 plan it.")] == ["year"]


@pytest.mark.parametrize("text, year", [
    # the time of the statement: when an event took place or a state began
    ("In 2018, the towns joined the scheme.", "2018"),
    ("The council has published the plan in 2022 after a vote.", "2022"),
    ("Since 2015 the register lists every contract.", "2015"),
    ("Seit 2017 meldet das Amt jeden Fall.", "2017"),
    ("Im Jahr 2009 begann die Erhebung.", "2009"),
    ("De gemeente heeft in 2020 een register ingericht.", "2020"),
    ("Sinds 2016 houdt de dienst dit bij.", "2016"),
    ("Depuis 2014 le registre est public.", "2014"),
    ("En 2012, la ville a ouvert ses données.", "2012"),
    ("Desde 2013 el registro es público.", "2013"),
])
def test_a_year_as_the_time_of_a_statement_is_salient(text, year):
    assert [(v.type, v.raw, v.salient) for v in extract_values(text)] == [("year", year, True)]


@pytest.mark.parametrize("text", [
    "The 2018 report describes the method.",  # a year naming a document
    "See the standard ISO 9001:2015 for details.",
    "As noted earlier (Jansen, 2017), the method works.",
    "Version 2021 of the tool is out.",
])
def test_a_year_after_another_word_stays_a_bare_year(text):
    assert [v.salient for v in extract_values(text) if v.type == "year"] == [False]



@pytest.mark.parametrize("text", [
    "The portal was reformed in 2019 (see the notice).",  # the time phrase ends the clause: an aside
    "Growth was 2.1 % in 2023.",  # the period of a figure already stated
    "Prices rose in 2020, then fell.",
])
def test_a_time_phrase_that_ends_its_clause_leaves_a_bare_year(text):
    assert [v.salient for v in extract_values(text) if v.type == "year"] == [False]


@pytest.mark.parametrize("text", [
    "- 2014: the first register of public contracts",
    "* 2009 – Gründung der Stelle für offene Daten",
    "1. 2016 - création du portail national",
])
def test_a_year_that_opens_a_chronology_entry_is_salient(text):
    assert [(v.type, v.salient) for v in extract_values(text) if v.type == "year"] == [("year", True)]


def test_a_year_inside_a_list_item_before_a_colon_is_not_an_entry_date():
    assert [v.salient for v in extract_values("- The plan of 2014: a first register")] == [False]


@pytest.mark.parametrize("text, raw", [
    # a French code's article by its part letter and number, no keyword before it
    ("Le décret applique les dispositions du L421-7-3 du code.", "L421-7-3"),
    ("Voir [D. 214-12 du code rural](https://www.example.fr/d) pour la liste.", "D. 214-12"),
    ("Le R531-4 précise la procédure.", "R531-4"),
    # a US executive order and a FAR part
    ("Agencies follow EO 14123 since its signature.", "EO 14123"),
    ("Executive Order 13999 set the goal.", "Executive Order 13999"),
    ("Under E.O. 13888, agencies report yearly.", "E.O. 13888"),
    ("The new Executive Order (13777) on data sharing.", "Executive Order (13777)"),
    ("米国の大統領令 13990 は目標を定めた。", "大統領令 13990"),
    ("FAR 12.207 limits the contract type.", "FAR 12.207"),
    # an OMB memorandum or circular
    ("Agencies follow M-21-07 for logging.", "M-21-07"),
    ("Per OMB Memo 21-07, agencies log events.", "OMB Memo 21-07"),
    ("OMB Circular A-119 covers standards.", "OMB Circular A-119"),
    # an EU act's recital, in the languages of the act
    ("As recital 42 of the regulation explains, consent is needed.", "recital 42"),
    ("Zie overweging 61 van de verordening.", "overweging 61"),
    ("Laut Erwägungsgrund 27 gilt das nicht.", "Erwägungsgrund 27"),
    ("Le considérant 15 le précise.", "considérant 15"),
])
def test_law_numbers_written_without_a_keyword(text, raw):
    assert [(v.raw, v.salient) for v in extract_values(text) if v.type == "statute"] == [(raw, True)]


@pytest.mark.parametrize("text", [
    "Take exit L2-3 after the bridge.",  # a short number: not a code article
    "The R2-D2 droid.",
    "Visit www.L312-1.example for more.",
    "The flight EO 123 left late.",  # an order number has five digits
    "Take the M-5-1 road north.",
])
def test_letter_and_number_that_are_no_law(text):
    assert [v.raw for v in extract_values(text) if v.type == "statute"] == []


def test_a_time_phrase_after_a_figure_is_that_figures_period():
    values = extract_values("Prices rose 4.2 % in 2021 according to the office.")
    assert [(v.raw, v.salient) for v in values] == [("4.2 %", True), ("2021", False)]


@pytest.mark.parametrize("text, raw, number", [
    ("Methane traps 28 times the heat of carbon dioxide.", "28 times", 28.0),
    ("A letter is 12 times more likely to be read.", "12 times", 12.0),
    ("The region saw a 3-fold rise.", "3-fold", 3.0),
    ("Die Kosten sind 4 mal so hoch.", "4 mal", 4.0),
    ("Il y a 2 fois plus de cas.", "2 fois", 2.0),
    ("Het is 5 keer zo groot.", "5 keer", 5.0),
])
def test_a_multiple_is_a_ratio(text, raw, number):
    assert kinds(text) == [("ratio", raw, number, True)]


def test_a_repetition_is_no_multiple():
    assert kinds("The team meets 3 times a week.") == []
