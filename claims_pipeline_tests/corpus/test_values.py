"""Value rules: types, salience, needles and parsed numbers (the earlier verifier's value types and needles, plus
the new forms)."""

from __future__ import annotations

import pytest

from claims_pipeline.corpus.values import extract_values


def one(text: str, vtype: str | None = None):
    vals = [v for v in extract_values(text) if vtype is None or v.type == vtype]
    assert len(vals) == 1, vals
    return vals[0]


def test_pct_with_decimal_point_and_comma():
    v = one("DMTO is **6.32 % default** in most départements", "pct")
    assert v.salient and v.number == pytest.approx(6.32) and {"6.32", "6,32"} <= set(v.needles)
    assert one("taux de 6,32 % en 2025", "pct").number == pytest.approx(6.32)


@pytest.mark.parametrize("text", ["a 10 per cent levy", "a 10 percent levy", "a 10% levy", "a 10 ％ levy", "a 10 Per Cent levy", "a 10 PERCENT levy"])
def test_pct_spellings(text):
    v = one(text, "pct")
    assert v.number == 10.0 and "10" in v.needles


def test_pct_lookbehind_and_pp():
    assert not [v for v in extract_values("model x5% grade") if v.type == "pct"]
    assert one("up 12.5pp on the year", "pct").number == 12.5


def test_money_thousands_variants_and_prefix():
    v = one("minimum US$300,000 investment", "money")
    assert v.raw == "$300,000" and v.number == 300000.0
    assert {"300,000", "300.000", "300000"} <= set(v.needles)


def test_money_magnitude_words():
    assert one("IFI threshold €1.3M net", "money").number == 1_300_000.0
    v = one("GDP ~5 bn EUR in 2024", "money")
    assert v.number == 5e9 and {"5,000,000,000", "5000000000"} <= set(v.needles)
    v = one("cap of USD 1.3 million", "money")
    assert v.number == 1_300_000.0 and "1,300,000" in v.needles


def test_magnitude_needs_word_boundary():
    v = one("costs €5 monthly", "money")
    assert v.number == 5.0 and v.raw == "€5"


def test_myriad_numerals():
    v = one("补助 5万円 per household", "money")
    assert v.number == 50000.0 and {"50,000", "50000", "5万"} <= set(v.needles)
    v = one("price 1.2億円 for the tower unit", "money")
    assert v.number == 120_000_000.0 and {"120,000,000", "1.2億"} <= set(v.needles)


def test_large_money_gets_myriad_needles():
    v = one("loan up to NT$10,000,000 for first homes", "money")
    assert "1000万" in v.needles or "1,000万" in v.needles


def test_swiss_apostrophe_and_nbsp_groupings():
    v = one("Freigrenze CHF 1'000'000 pro Person", "money")
    assert v.number == 1_000_000.0 and {"1'000'000", "1,000,000", "1000000", "1 000 000"} <= set(v.needles)
    v = one("plafond de 1\u202f000\u202f000 EUR", "money")
    assert v.number == 1_000_000.0 and "1000000" in v.needles


@pytest.mark.parametrize("sep", ["\u00a0", "\u2009", "\u202f", " "], ids=["nbsp", "thin", "narrow-nbsp", "space"])
def test_space_groupings_read_the_whole_number(sep):
    v = one(f"plafond de 1{sep}000{sep}000 EUR par foyer", "money")
    assert v.raw == f"1{sep}000{sep}000 EUR" and v.number == 1_000_000.0
    assert {"1,000,000", "1.000.000", "1000000", "1 000 000"} <= set(v.needles)
    v = one(f"seuil de €300{sep}000 net", "money")
    assert v.raw == f"€300{sep}000" and v.number == 300_000.0 and "300,000" in v.needles
    assert one(f"EUR 5{sep}000 de frais", "money").number == 5000.0
    assert one(f"prix 1{sep}000,50 EUR TTC", "money").number == 1000.5


def test_a_plain_space_never_glues_a_year_or_a_long_run_to_a_figure():
    vals = extract_values("paid in 2024 500 000 EUR to the fund")
    assert [(v.type, v.raw, v.number) for v in vals] == [("money", "500 000 EUR", 500_000.0), ("year", "2024", None)]
    v = one("code 12345 678 EUR", "money")  # five digits before the space: not a grouping
    assert v.raw == "678 EUR" and v.number == 678.0
    v = one("levy of 5 1000 EUR", "money")  # four digits after it: not a grouping either
    assert v.raw == "1000 EUR" and v.number == 1000.0


def test_european_thousands_dot():
    assert one("frais €77.700 au total", "money").number == 77700.0


def test_dates_and_month_needles():
    v = one("effective 19 Nov 2024 nationally", "date")
    assert {"2024", "2024-11", "Nov", "November", "2024-11-19"} <= set(v.needles)
    v = one("Hurricane Irma (Sept 2017, Cat 5)", "date")
    assert {"2017", "2017-09", "Sep", "September"} <= set(v.needles)
    assert "2026-05-27" in one("deadline 2026-05-27 for filing", "date").needles


def test_roc_and_cjk_dates():
    v = one("房屋稅 2.0 自民國113年7月1日施行", "date")
    assert {"2024-07-01", "113年7月1日", "2024年7月1日"} <= set(v.needles)
    era = one("依民國113年公告", "year")
    assert not era.salient and "2024" in era.needles


def test_iso_date_gets_roc_needle_for_taiwanese_pages():
    assert "113年7月1日" in one("effective 2024-07-01 (House Tax 2.0)", "date").needles


def test_statute_needs_word_boundary():
    vals = extract_values("the contract 2024 and an outlaw 55 gang")
    assert not [v for v in vals if v.type == "statute"]


def test_statute_year_only_is_not_salient():
    assert not one("under the Companies Act 1956 rules", "statute").salient
    assert one("Law 7464 on foreign buyers", "statute").salient
    v = one("Loi 2024-1039 du 19 novembre", "statute")
    assert v.salient and "1039" in v.needles


def test_colon_chapter_needles():
    v = one("Deeds Registry Act, Chap. 33:02 governs transfers", "statute")
    assert v.salient and {"33:02", "33.02"} <= set(v.needles)
    assert "70.07" in one("Transfer Duty Act (Cap. 70:07)", "statute").needles


def test_statute_trailing_paren_trimmed():
    assert one("Land Act (§99)", "statute").raw == "§99"


def test_bare_year_not_salient():
    v = one("population grew after 1981 reforms", "year")
    assert not v.salient and v.needles == ("1981",)


def test_dates_before_statutes():
    vals = extract_values("passed Nov 2024 by Parliament")
    assert [v.type for v in vals] == ["date"]


def test_currency_code_after_a_rejected_word():
    vals = [v for v in extract_values("in 2024 the 5 EUR fee and EUR 7 levy") if v.type == "money"]
    assert [v.number for v in vals] == [7.0, 5.0]


def test_date_readers_behind_their_cheap_gates():
    # The ISO reader runs only when '-dd-' is on the line, the month reader only when a month word is.
    got = [(v.type, v.raw) for v in extract_values("fee 5 % from 2024-05-01, 19 Nov 2024 and Sept 2017; 12-34-56")]
    assert got == [("pct", "5 %"), ("date", "2024-05-01"), ("date", "19 Nov 2024"), ("date", "Sept 2017")]
    assert [v.raw for v in extract_values("due 2024-5-1 in june 2023")] == ["2024", "2023"]  # years only


@pytest.mark.parametrize("text, raws", [
    ("年収1,200万円以上", ["1,200万円"]),  # a figure right after a CJK word is not glued to it
    ("稅率為45%", ["45%"]),
    ("手数料は5万円", ["5万円"]),
    ("施行日は2024-04-01から", ["2024-04-01"]),
    ("อัตรา7%", ["7%"]),
    ("세율10%", ["10%"]),
])
def test_figures_right_after_words_of_scripts_without_spaces(text, raws):
    assert [v.raw for v in extract_values(text) if v.salient] == raws


def test_figures_glued_to_latin_words_stay_unread():
    assert [v.raw for v in extract_values("v45% and x2024-04-01 and é5 %") if v.salient] == []


@pytest.mark.parametrize("text, number", [
    ("年収1,200万円以上", 12_000_000), ("$1,500 million", 1.5e9), ("€1.250M", 1.25e6), ("1,5 Mio. EUR", 1.5e6),
])
def test_comma_thousands_before_a_magnitude(text, number):
    # '1,500 million' groups thousands; a point before three digits and a magnitude stays a decimal point
    assert [v.number for v in extract_values(text) if v.type == "money"] == [number]


@pytest.mark.parametrize("text, raw, number", [
    ("₹5 lakh", "₹5 lakh", 5e5), ("INR 2 crore", "INR 2 crore", 2e7), ("EUR 2,5 Mrd.", "EUR 2,5 Mrd", 2.5e9),
    ("$1.5B", "$1.5B", 1.5e9), ("€3 mln", "€3 mln", 3e6), ("€2 milliards", "€2 milliards", 2e9),
])
def test_more_magnitude_words(text, raw, number):
    assert [(v.raw, v.number) for v in extract_values(text) if v.type == "money"] == [(raw, number)]


@pytest.mark.parametrize("text, raw, number", [
    ("Seuil 300 000 € par an", "300 000 €", 300_000), ("frais 1.000,50 €", "1.000,50 €", 1000.5),
    ("2,5 Mio. EUR", "2,5 Mio. EUR", 2.5e6), ("上限150 萬 TWD", "150 萬 TWD", 1.5e6), ("£12 and", "£12", 12),
    ("Kosten 1 000,50 € netto", "1 000,50 €", 1000.5), ("5万円", "5万円", 50_000),
])
def test_currency_after_the_figure(text, raw, number):
    assert [(v.raw, v.number) for v in extract_values(text) if v.type == "money"] == [(raw, number)]


@pytest.mark.parametrize("text, raw", [
    ("Reg 883/2004", "Reg 883/2004"), ("Regulation (EU) 2016/679", "Regulation (EU) 2016/679"),
    ("Directive 2011/16/EU", "Directive 2011/16/EU"), ("Art. L. 112-1 CGI", "Art. L. 112-1"),
])
def test_statute_forms_with_qualifiers(text, raw):
    assert [(v.type, v.raw, v.salient) for v in extract_values(text)] == [("statute", raw, True)]


def test_lower_case_no_without_a_point_is_no_statute():
    assert [v.type for v in extract_values("There is no 5-year hold")] == ["duration"]  # '5-year', no statute
    assert [v.raw for v in extract_values("news release no. 84; Law No 12")] == ["no. 84", "Law No 12"]


@pytest.mark.parametrize("text, figures", [
    ("taxed 2.0–4.8 %", [("pct", "4.8 %", 4.8), ("pct", "2.0", 2.0)]),
    ("€1.2–1.5 million", [("money", "€1.2", 1.2e6), ("money", "1.5 million", 1.5e6)]),
    ("100 K – 5 M TWD", [("money", "5 M TWD", 5e6), ("money", "100 K", 1e5)]),
    ("2–4 k EUR", [("money", "4 k EUR", 4e3), ("money", "2", 2e3)]),
    ("5 to 10 %", [("pct", "10 %", 10), ("pct", "5", 5)]),
    ("income tax (0–25%)", [("pct", "25%", 25)]),  # a zero bound says nothing
    ("10-5 %", [("pct", "5 %", 5)]),  # not a range: it would run downwards
    ("8.1 → 8.5 %", [("pct", "8.5 %", 8.5)]),  # a change, not a range: the old figure is not demanded
    ("Law 2024-1039, 5 %", [("pct", "5 %", 5), ("statute", "Law 2024-1039", None)]),
])
def test_range_bounds(text, figures):
    assert [(v.type, v.raw, v.number) for v in extract_values(text)] == figures


@pytest.mark.parametrize("text", ["Regular 12 monthly instalments", "Regions 3 and 4", "Directives 12 apply", "Actual 2024 figures"])
def test_words_opening_like_a_keyword_are_no_statutes(text):
    assert [v for v in extract_values(text) if v.type == "statute"] == []


@pytest.mark.parametrize("text, figures", [
    ("fines from €500 to 1 million", [("money", "€500", 500), ("money", "1 million", 1e6)]),  # 500 is not 500 million
    ("€100 to 5 M", [("money", "€100", 100), ("money", "5 M", 5e6)]),
    ("5 TO 10 %", [("pct", "10 %", 10), ("pct", "5", 5)]),  # the separator in capitals
])
def test_range_bounds_are_scaled_only_when_they_belong_together(text, figures):
    assert [(v.type, v.raw, v.number) for v in extract_values(text)] == figures


@pytest.mark.parametrize("text, number", [("1,250 Mio. EUR", 1.25e6), ("EUR 3,2 Mrd.", 3.2e9), ("$1,500 million", 1.5e9)])
def test_a_decimal_comma_before_mio_or_mrd(text, number):
    assert [v.number for v in extract_values(text) if v.type == "money"] == [number]


@pytest.mark.parametrize("text, raw", [("la loi no 2019-486 du 22 mai", "loi no 2019-486"),
                                       ("Décret no 2024-1039", "Décret no 2024-1039"), ("Ley no 27.430", "Ley no 27.430"),
                                       ("Law nr. 12", "Law nr. 12"), ("Act No 5", "Act No 5")])
def test_no_and_nr_after_a_keyword_in_any_case(text, raw):
    assert [v.raw for v in extract_values(text) if v.type == "statute"] == [raw]


@pytest.mark.parametrize("text, numbers", [("€1,250–1,500 Mio.", [1.25e6, 1.5e6]), ("$1,500–2,000 million", [1.5e9, 2e9])])
def test_a_range_lower_bound_is_read_the_way_its_upper_bound_is(text, numbers):
    assert [v.number for v in extract_values(text) if v.type == "money"] == numbers


def test_a_point_groups_thousands_before_mio_or_mrd():
    # German: '1.250 Mio.' is 1,250 million; the comma is the decimal mark there ('1,250 Mio.' is 1.25 million)
    assert [v.number for v in extract_values("EUR 1.250 Mio.") if v.type == "money"] == [1.25e9]
