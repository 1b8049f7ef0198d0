"""Priors: number-aware matching, date rules, statutes, status mapping, proximity and excerpt centring."""

from __future__ import annotations

import pytest

from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.priors import (
    PDF_NO_TEXT,
    SOURCE_BINARY,
    SOURCE_UNAVAILABLE,
    TOKENS_ABSENT,
    TOKENS_PRESENT,
    WEAK_MATCH,
    Prior,
    PriorRules,
    build_prior,
)
from claims_pipeline.priors.page_index import INDEX_CACHE
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value

S = rules_of()
URL = "https://www.impots.gouv.fr/dmto"


def prior_of(claim_text: str, values, page_text: str, *, url: str = URL, rules: PriorRules = S) -> Prior:
    c = claim(claim_text, values, url=url)
    return build_prior(c, page(url, page_text), rules)


# ---- numbers compared as numbers, in local formats ---------------------------------------------------------
@pytest.mark.parametrize(
    "claim_raw, page_fragment",
    [
        ("6.32 %", "le taux global est de 6,32 % du prix"),
        ("6.32 %", "a combined rate of 6.32 per cent applies"),
        ("6.32%", "the rate is 6.32 percent"),
        ("€77,700", "plafond de 77 700 € par foyer"),  # plain space grouping
        ("€77,700", "plafond de 77\u00a0700\u00a0€ par foyer"),  # NBSP
        ("€77,700", "plafond de 77\u202f700 EUR par foyer"),  # narrow NBSP
        ("€77,700", "plafond de 77\u2009700 euros"),  # thin space
        ("€77,700", "Höchstbetrag 77.700 EUR"),  # point grouping
        ("CHF 1,234.50", "Gebühr CHF 1'234.50 pro Jahr"),  # apostrophe grouping
        ("CHF 1,234.50", "Gebühr CHF 1’234.50 pro Jahr"),  # typographic apostrophe
        ("€1.3M", "a budget of EUR 1.3 million for the scheme"),
        ("€1.3M", "a budget of €1,300,000 for the scheme"),
        ("$5bn", "total receipts of $5 billion last year"),
        ("₹5 lakh", "exemption up to ₹500,000 for residents"),
        ("¥50,000", "手数料は5万円です"),
        ("$1.2 crore", "threshold of Rs 12 million"),
    ],
)
def test_format_variants_match_as_numbers(claim_raw: str, page_fragment: str) -> None:
    vtype = "pct" if "%" in claim_raw else "money"
    p = prior_of(f"The figure is {claim_raw} here", [value(vtype, claim_raw)], FILLER + page_fragment + ". " + FILLER)
    assert p.prior == TOKENS_PRESENT, p.to_dict()
    assert p.strong_matched == [claim_raw]


def test_no_hit_inside_a_longer_number() -> None:
    # "5 %" must not be found in "1500", "2015", "15 %" or "5.5 %"
    text = FILLER + "Some 1500 homes were sold in 2015; the rate rose to 15 % and then 5.5 % in total. " + FILLER
    p = prior_of("A reduced rate of 5 % applies", [value("pct", "5 %")], text)
    assert p.prior == TOKENS_ABSENT
    assert p.missing_tokens == ["5 %"]


def test_rounding_tolerance_follows_the_claims_precision() -> None:
    text = FILLER + "The rate for 2025 is 6.3249 % on the declared price. " + FILLER
    assert prior_of("rate 6.32 %", [value("pct", "6.32 %")], text).prior == TOKENS_PRESENT
    # 6.34 is outside half a unit of the claim's last digit
    text2 = FILLER + "The rate for 2025 is 6.34 % on the declared price. " + FILLER
    assert prior_of("rate 6.32 %", [value("pct", "6.32 %")], text2).prior == TOKENS_ABSENT


def test_unit_clash_is_not_a_hit() -> None:
    text = FILLER + "Stamp duty is 5 % of the price. " + FILLER
    p = prior_of("An application fee of $5 is due", [value("money", "$5")], text)
    assert p.prior == TOKENS_ABSENT


def test_small_number_without_its_unit_is_only_weak() -> None:
    text = FILLER + "You have 5 days to appeal the decision. " + FILLER
    p = prior_of("A reduced rate of 5 % applies", [value("pct", "5 %")], text)
    assert p.prior == WEAK_MATCH
    assert p.matched_tokens == ["5 %"] and p.strong_matched == []


def test_extractor_number_is_used_when_set() -> None:
    text = FILLER + "The ceiling is 250 000 EUR per household. " + FILLER
    p = prior_of("ceiling of 250k", [value("money", "€250k", number=250000.0)], text)
    assert p.prior == TOKENS_PRESENT


# ---- dates ------------------------------------------------------------------------------------------------------
def test_month_and_year_alone_never_make_a_pct_claim_present() -> None:
    # the page has the date (and the month word "Mar" inside "primary") but not the rate
    text = FILLER + "In force since April 2025 for primary residences; see the 2025 budget law. " + FILLER
    p = prior_of(
        "DMTO 6.32 % since Apr 2025",
        [value("pct", "6.32 %"), value("date", "Apr 2025", needles=("2025", "2025-04", "Apr", "April"))],
        text,
    )
    assert p.prior == TOKENS_ABSENT
    assert "6.32 %" in p.missing_tokens and "Apr 2025" in p.matched_tokens


def test_month_abbreviation_is_not_found_inside_a_word() -> None:
    text = FILLER + "The primary market in 2024 was calm; 12 May 2023 saw a reform. " + FILLER
    p = prior_of("Reform of Mar 2024", [value("date", "Mar 2024", needles=("2024", "Mar", "March"))], text)
    assert p.prior == TOKENS_ABSENT


@pytest.mark.parametrize(
    "claim_raw, page_fragment, expected",
    [
        ("19 Nov 2024", "the decree of 19 November 2024 entered into force", TOKENS_PRESENT),
        ("19 Nov 2024", "published on 2024-11-19 in the gazette", TOKENS_PRESENT),
        ("19 Nov 2024", "publié le 19 novembre 2024 au JO", TOKENS_PRESENT),
        ("19 Nov 2024", "vigente desde el 19 de noviembre de 2024", TOKENS_PRESENT),
        ("19 Nov 2024", "published on November 19, 2024", TOKENS_PRESENT),
        ("19 Nov 2024", "published on 19.11.2024", TOKENS_PRESENT),
        ("19 Nov 2024", "published in November 2024", WEAK_MATCH),  # day unconfirmed
        ("19 Nov 2024", "published on 18 November 2024", TOKENS_ABSENT),
        ("Nov 2024", "effective 1 November 2024", TOKENS_PRESENT),
        ("2024-05-01", "民國113年5月1日起施行", TOKENS_PRESENT),  # ROC year 113 = 2024
        ("May 2024", "2024年5月公布", TOKENS_PRESENT),
        # day and month without a year: weak when the year stands elsewhere on the page (a dateline), else absent
        ("2 Nov 2004", "Posted 2004-10-19. The album hits stores on Election Day, November 2", WEAK_MATCH),
        ("2 Nov 2004", "The album hits stores on Election Day, November 2", TOKENS_ABSENT),
        # a month-year claim and a page naming a day of that month without the year (WiCE: "screenings are
        # scheduled for May 2, 5, and 6" under a 2018 dateline): weak, and absent without the year
        ("May 2018", "Posted 2018-03-23. Screenings are scheduled for May 2, 5, and 6", WEAK_MATCH),
        ("May 2018", "Screenings are scheduled for May 2, 5, and 6", TOKENS_ABSENT),
        ("May 2018", "Posted 2018-03-23. Screenings are scheduled for June 2 and 5", TOKENS_ABSENT),
    ],
)
def test_date_claims_need_the_date(claim_raw: str, page_fragment: str, expected: str) -> None:
    p = prior_of(f"In force from {claim_raw}", [value("date", claim_raw)], FILLER + page_fragment + ". " + FILLER)
    assert p.prior == expected, p.to_dict()


def test_year_alone_does_not_support_a_date() -> None:
    text = FILLER + "The 2024 reform changed the rules. " + FILLER
    p = prior_of("since Nov 2024", [value("date", "Nov 2024")], text)
    assert p.prior == TOKENS_ABSENT


@pytest.mark.parametrize(
    "head, tail, expected",
    [
        ("", "", TOKENS_ABSENT),  # no year anywhere: every year-less "18 October" is no hit
        ("", " Posted 5 January 2024.", WEAK_MATCH),  # the year only at the very end (a dateline)
        ("", " Année 2024", WEAK_MATCH),  # the year as a bare number
        ("Posted 18 October 2024. ", "", TOKENS_PRESENT),  # the full date first, then the repeats
    ],
)
def test_page_repeating_a_yearless_date_gives_the_evidence_of_a_short_page(head: str, tail: str, expected: str) -> None:
    # A hostile page repeating "18 October " thousands of times once cost O(n²) (every year-less candidate
    # rescanned every page date for the year). It must give what a short page of the same pattern gives; the
    # number of occurrences counted is capped like the other value types.
    from claims_pipeline.priors.matching import _MAX_OCCURRENCES

    values = [value("date", "18 October 2024")]
    short = prior_of("The levy applies since 18 October 2024", values, head + "18 October " * 100 + tail).to_dict()
    long = prior_of("The levy applies since 18 October 2024", values, head + "18 October " * 4000 + tail).to_dict()
    assert short["prior"] == long["prior"] == expected, long
    n_short = short["hits"][0].pop("occurrences")
    n_long = long["hits"][0].pop("occurrences")
    assert long == short
    if expected == TOKENS_ABSENT:
        assert n_short == n_long == 0
    else:
        # each repeat is "18 October" and, read across the boundary, "October 18": 199 year-less candidates
        assert n_short == 199 + bool(head) and n_long == _MAX_OCCURRENCES


# ---- statutes ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "claim_raw, page_fragment, expected",
    [
        ("Loi 2024-1039", "en application de la loi n° 2024-1039 du 19 novembre 2024", TOKENS_PRESENT),
        ("Cap. 70:07", "the Deeds Registry Act, Chapter 70.07, provides", TOKENS_PRESENT),
        ("Chap. 70.07", "Deeds Registry Act [Chapter 70:07]", TOKENS_PRESENT),
        ("Article 12", "as provided by article 12 of the code", TOKENS_PRESENT),
        ("Article 12", "we received 12 applications", WEAK_MATCH),  # bare number, no keyword
        ("Article 12", "see article 12.5 and article 120", TOKENS_ABSENT),  # boundaries
        ("Loi 2024-1039", "loi n° 2024-10391 bis", TOKENS_ABSENT),
        ("CAP. 293", "the Non-Citizens Land Holding Regulation Act, Cap 293", TOKENS_PRESENT),
        # a French code's article: the page glues the part letter to the number, with or without 'Article'
        ("article L. 421-7-3", "Article L421-7-3 - Version en vigueur", TOKENS_PRESENT),
        ("R531-4", "Article R. 531-4 du code", TOKENS_PRESENT),
        ("L421-7-3", "voir XL421-7-3 ci-dessous", TOKENS_ABSENT),  # inside a word: not the article
        ("EO 14123", "Executive Order 14123 of May 2, 2024", TOKENS_PRESENT),
        ("Executive Order 14123", "signed E.O. 14123 last spring", TOKENS_PRESENT),
        ("OMB Memo 21-07", "Memorandum M-21-07 for the heads of agencies", TOKENS_PRESENT),
        ("M-21-07", "see OMB memorandum M-21-07", TOKENS_PRESENT),
        ("OMB Circular A-119", "Circular No. A-119, revised", WEAK_MATCH),  # found; a number without a dash is weak
        ("M-21-07", "form XM-21-07 attached", TOKENS_ABSENT),
        ("overweging 61", "(61) Overwegende dat ... zie Overweging 61 van Verordening", TOKENS_PRESENT),
        ("recital 42", "as set out in Recital 42, consent", TOKENS_PRESENT),
    ],
)
def test_statute_identifier_matching(claim_raw: str, page_fragment: str, expected: str) -> None:
    p = prior_of(f"Under {claim_raw}", [value("statute", claim_raw)], FILLER + page_fragment + ". " + FILLER)
    assert p.prior == expected, p.to_dict()


# ---- the decision rule with several values ----------------------------------------------------------------------
def test_some_carriers_found_is_weak_match_naming_the_missing() -> None:
    text = FILLER + "Le taux départemental est de 5,00 %. " + FILLER
    p = prior_of(
        "6.32 % default (5.00 % département + 1.20 % commune)",
        [value("pct", "6.32 %"), value("pct", "5.00 %"), value("pct", "1.20 %")],
        text,
    )
    assert p.prior == WEAK_MATCH
    assert p.missing_tokens == ["6.32 %", "1.20 %"]
    assert p.matched_tokens == ["5.00 %"]


def test_no_salient_value_is_weak_with_a_note() -> None:
    p = prior_of("a claim with nothing", [value("year", "2024", salient=False)], FILLER * 2)
    assert p.prior == WEAK_MATCH and "no salient" in p.fetch_note


# ---- fetch status mapping ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "status, expected, note_part",
    [
        ("BINARY", SOURCE_BINARY, "binary"),
        ("PDF_NO_TEXT", PDF_NO_TEXT, "scanned"),
        ("UNREADABLE", SOURCE_UNAVAILABLE, "page not readable, not a missing figure"),
        ("DEAD", SOURCE_UNAVAILABLE, "http 404"),
        ("BLOCKED", SOURCE_UNAVAILABLE, "challenge"),
        ("ROBOTS", SOURCE_UNAVAILABLE, "robots"),
        ("TOO_LARGE", SOURCE_UNAVAILABLE, "cap"),
        ("UNAVAILABLE", SOURCE_UNAVAILABLE, "timeout"),
    ],
)
def test_fetch_status_mapping(status: str, expected: str, note_part: str) -> None:
    notes = {"BINARY": "binary content", "PDF_NO_TEXT": "scanned PDF", "DEAD": "http 404", "BLOCKED": "challenge title",
             "ROBOTS": "robots.txt Disallow", "TOO_LARGE": "over the cap", "UNAVAILABLE": "ReadTimeout timeout",
             "UNREADABLE": "JS shell"}
    c = claim("rate 6.32 %", [value("pct", "6.32 %")])
    p = build_prior(c, page(URL, None, status=status, note=notes[status]), S)
    assert p.prior == expected
    assert note_part in p.fetch_note
    assert p.missing_tokens == ["6.32 %"]


def test_not_fetched_and_not_modified() -> None:
    c = claim("rate 6.32 %", [value("pct", "6.32 %")])
    assert build_prior(c, None, S).prior == SOURCE_UNAVAILABLE
    assert build_prior(c, None, S).fetch_note == "not fetched"
    ok = page(URL, FILLER + "taux de 6,32 %" + FILLER, status="NOT_MODIFIED")
    assert build_prior(c, ok, S).prior == TOKENS_PRESENT
    # an OK page whose cached text could not be read back is unknown, never "figure absent"
    lost = build_prior(c, page(URL, None, status="OK"), S)
    assert lost.prior == SOURCE_UNAVAILABLE and "cached text blob missing or damaged" in lost.fetch_note


def test_thin_body_and_js_host_are_indeterminate_not_absent() -> None:
    c = claim("rate 6.32 %", [value("pct", "6.32 %")])
    assert build_prior(c, page(URL, "Loading…"), S).prior == SOURCE_UNAVAILABLE
    hk = claim("rate 6.32 %", [value("pct", "6.32 %")], url="https://www.elegislation.gov.hk/cap123")
    p = build_prior(hk, page(hk.source_url, FILLER * 3), S)
    assert p.prior == SOURCE_UNAVAILABLE and "JS-rendered" in p.fetch_note
    # the same long page on an ordinary host is a real TOKENS_ABSENT
    assert build_prior(c, page(URL, FILLER * 3), S).prior == TOKENS_ABSENT
    # and a thin page that does carry the figure is not indeterminate
    assert build_prior(c, page(URL, "Taux: 6,32 %"), S).prior == TOKENS_PRESENT


# ---- proximity and excerpts -------------------------------------------------------------------------------------
def test_best_hit_is_the_one_near_the_context_words_and_excerpt_is_centred() -> None:
    far = "Archive table: 6.32 % was the 1998 interest figure for savings accounts. " + FILLER * 6
    near = "The DMTO département rate is now 6.32 % for every sale. "
    text = far + near + FILLER * 6
    rules = rules_of(settings_from_dict({"priors": {"excerpt_window_chars": 120}}))
    p = prior_of("DMTO: 6.32 % default (département + commune)", [value("pct", "6.32 %")], text, rules=rules)
    hit = p.hits[0]
    assert hit.position == len(far) + near.index("6.32")
    assert {"dmto", "département"} <= set(hit.near_words)
    assert hit.proximity_chars is not None and hit.proximity_chars < 40
    assert hit.occurrences == 2
    excerpt = p.excerpts[0]
    assert excerpt[hit.excerpt_start : hit.excerpt_end] == "6.32 %"
    # centred: the figure sits in the middle third of the excerpt
    assert len(excerpt) / 3 < hit.excerpt_start < 2 * len(excerpt) / 3


def test_excerpt_count_is_capped_and_each_hit_points_into_its_excerpt() -> None:
    parts = [f"Section {i}: the rate is {v} % in that zone. " + FILLER * 4 for i, v in enumerate(["1.1", "2.2", "3.3"])]
    rules = rules_of(settings_from_dict({"priors": {"excerpt_window_chars": 80, "max_excerpts_per_claim": 2}}))
    p = prior_of("rates 1.1 %, 2.2 % and 3.3 %", [value("pct", f"{v} %") for v in ("1.1", "2.2", "3.3")], "".join(parts), rules=rules)
    assert p.prior == TOKENS_PRESENT
    assert len(p.excerpts) == 2
    placed = [h for h in p.hits if h.excerpt_index is not None]
    assert len(placed) == 2
    for h in placed:
        assert p.excerpts[h.excerpt_index][h.excerpt_start : h.excerpt_end] == h.matched_text


def test_prior_round_trips_through_dict() -> None:
    p = prior_of("rate 6.32 %", [value("pct", "6.32 %")], FILLER + "6,32 %" + FILLER)
    assert Prior.from_dict(p.to_dict()).to_dict() == p.to_dict()


def test_page_is_tokenised_once_per_text() -> None:
    text = FILLER + "unique page 4242.42 EUR " + FILLER
    before = INDEX_CACHE.builds
    for i in range(50):
        c = claim(f"fee {i}", [value("money", "4,242.42 EUR")], line_no=i + 1)
        assert build_prior(c, page(URL, text), S).prior == TOKENS_PRESENT
    assert INDEX_CACHE.builds - before == 1


# ---- ranges: both bounds are figures of the claim, the unit written once -----------------------------------
@pytest.mark.parametrize("claim_text, page_fragment, expected", [
    ("taxed at 2.0–4.8 %", "the rate ranges from 2.0–4.8 % by region", TOKENS_PRESENT),
    ("taxed at 2.0–4.8 %", "the rate is 2.0 % in towns and 4.8 % elsewhere", TOKENS_PRESENT),
    ("taxed at 2.0–4.8 %", "the rate ranges from 3.0–4.8 % by region", WEAK_MATCH),  # the lower bound moved
    ("fee of €1.2–1.5 million", "a fee between €1.2–1.5 million applies", TOKENS_PRESENT),
    ("fee of €1.2–1.5 million", "a fee of 1,200,000 to 1,500,000 EUR applies", TOKENS_PRESENT),
    ("fee of €1.2–1.5 million", "a fee of 1,200,000 to 1,900,000 EUR applies", WEAK_MATCH),
    ("5 to 10 % levy", "a levy of 5–10 % is due", TOKENS_PRESENT),
])
def test_ranges_are_read_whole_on_both_sides(claim_text: str, page_fragment: str, expected: str) -> None:
    from claims_pipeline.corpus.values import extract_values

    values = extract_values(claim_text)
    assert len(values) == 2, values
    p = prior_of(claim_text, values, FILLER + page_fragment + ". " + FILLER)
    assert p.prior == expected, p.to_dict()


@pytest.mark.parametrize("vtype, claim_raw, page_fragment", [
    ("pct", "6.32 %", "保険料率は６．３２％です"),  # full-width digits and punctuation
    ("pct", "6.32 %", "النسبة ٦٫٣٢٪ من القيمة"),  # Arabic-Indic digits, decimal separator and percent sign
    ("statute", "Law 2024-1039", "loi n° 2024\u20111039 du 4 décembre"),  # non-breaking hyphen
    ("statute", "Law 2024-1039", "loi n° 2024\u20131039 du 4 décembre"),  # en dash
    ("money", "¥50,000", "手数料は５０，０００円です"),
])
def test_figures_in_other_digits_and_dashes_are_found(vtype: str, claim_raw: str, page_fragment: str) -> None:
    p = prior_of(f"The figure is {claim_raw} here", [value(vtype, claim_raw)], FILLER + page_fragment + ". " + FILLER)
    assert p.prior == TOKENS_PRESENT, p.to_dict()
    assert page_fragment.split()[0][:2] in " ".join(p.excerpts)  # the excerpt quotes the page as written


@pytest.mark.parametrize("vtype, raw", [("statute", "法律第２０２４号"), ("pct", "６．３２％"), ("money", "５０，０００円")])
def test_a_claim_written_in_full_width_digits_is_found_as_written_on_the_page(vtype: str, raw: str) -> None:
    # the page is folded for matching; the claim's figure must be read the same way
    p = prior_of(f"The figure is {raw} here", [value(vtype, raw)], FILLER + f"規定は{raw}です。" + FILLER)
    assert p.prior == TOKENS_PRESENT, p.to_dict()


def test_a_page_in_another_scripts_digits_is_read_not_fatal() -> None:
    """Devanagari digits with a decimal point ("३.५ %") once broke the page's index (a split on ASCII digits
    left "." to read as a number), and with it the priors step; now they are numbers like any other."""
    from claims_pipeline.priors.numbers import tokenize_numbers

    assert [(t.values, t.unit) for t in tokenize_numbers("दर ३.५ % और १,२३४ EUR")] == [
        ((3.5,), "pct"), ((1234.0, 1.234), "money")]
    p = prior_of("rate 3.5 %", [value("pct", "3.5 %")], FILLER + " दर ३.५ % है। " + FILLER)
    assert p.prior == TOKENS_PRESENT


def test_a_hit_as_a_dict_has_every_field_in_order_and_its_own_list() -> None:
    """Hit.to_dict is written out field by field: it must name every field, in the dataclass's order (the
    stored JSON's key order), and copy the list so the dict does not share it with the hit."""
    from dataclasses import astuple, fields

    from claims_pipeline.priors import Hit

    hit = Hit("6.32 %", "pct", True, True, "6,32 %", 10, 4, ["taux"], 1.5, 2, 0, 3, 9)
    d = hit.to_dict()
    assert list(d) == [f.name for f in fields(Hit)]
    assert list(d.values()) == list(astuple(hit))
    assert d["near_words"] is not hit.near_words
