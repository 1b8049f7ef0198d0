"""Markdown as people write it: footnotes, definitions, "Source:" lines, link labels, tables, images, templates,
and amounts and dates in words in French and German (issue 24), each form on its own, and the hand-labelled
kb_forms corpora as a whole (scored by claims_pipeline_tests/support/kb_forms_scoring.py, as bench_kb_forms prints)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.settings import ExtractionSettings, LinterSettings
from claims_pipeline.corpus.extract import extraction_stats
from claims_pipeline.corpus.linter import lint_corpus, lint_text
from claims_pipeline.corpus.values import extract_values
from claims_pipeline_tests.support import kb_forms_scoring as kb
from claims_pipeline_tests.time_scale import scaled

from .conftest import extract_lines, make_corpus


def got(text: str, **kw) -> list[tuple[int, str, list[str]]]:
    """(line, URL, salient figures) of every claim, secondary sources included."""
    ex = extract_lines(text, include_secondary=True, **kw)
    return [(c.line_no, c.source_url, [v.raw for v in c.values if v.salient]) for c in ex.claims]


# ---- footnotes and definitions -----------------------------------------------------------------------------
def test_a_footnote_gives_its_source_to_its_own_sentence_only():
    text = ("Rents rose 9.4 % in 2024.[^r] A flat now costs around €1,150 a month.\n"
            "Under 35.[^j] The top rate is 48 % above €83,696.[^t]\n"
            "Rund 5,5 Millionen Menschen im Juni 2024[^b]. Davon 1,6 Millionen Kinder.\n"
            "Die Bremse kostete rund 12,5 Mrd. Euro[^m]. Der Zuschuss von 5,5 Milliarden Euro entfiel.\n"
            "\n"
            "[^r]: [INE rents](https://www.ine.pt/rendas)\n[^j]: [AT](https://at.gov.pt/jovem)\n"
            "[^t]: [AT rates](https://at.gov.pt/taxas)\n[^b]: [BA](https://statistik.arbeitsagentur.de/x)\n"
            "[^m]: [BMWK](https://www.bmwk.de/bilanz)\n")
    assert got(text) == [
        (1, "https://www.ine.pt/rendas", ["9.4 %"]),  # not the €1,150 of the next sentence, which cites nothing
        (2, "https://at.gov.pt/taxas", ["€83,696", "48 %"]),  # the first footnote's sentence has no figure
        (3, "https://statistik.arbeitsagentur.de/x", ["5,5 Millionen", "Juni 2024"]),
        (4, "https://www.bmwk.de/bilanz", ["12,5 Mrd. Euro"]),  # "Mrd." ends no sentence
    ]


def test_one_footnote_marked_twice_on_a_line_keeps_the_figures_of_both():
    text = ("Contributions are 20.5 % up to €72,810.95[^i], and 14.16 % up to €107,300.36[^i].\n\n"
            "[^i]: [INASTI](https://www.inasti.be/fr/cotisations)\n")
    assert got(text) == [(1, "https://www.inasti.be/fr/cotisations", ["€72,810.95", "20.5 %", "14.16 %", "€107,300.36"])]


@pytest.mark.parametrize("definition, date", [
    ("[^a]: [Agency](https://www.tax.gov.xx/a) (November 2025)", "2025-11-01"),
    ("[^a]: [Agency](https://www.tax.gov.xx/a), accessed 12 January 2026", "2026-01-12"),
    ("[^a]: [CNIL](https://www.tax.gov.xx/a) (janvier 2026)", "2026-01-01"),
    ("[^a]: [Décret n° 2019-1344](https://www.tax.gov.xx/a), consulté le 10 février 2026", "2026-02-10"),
    ("[^a]: [BA, Juni 2024](https://www.tax.gov.xx/a) (abgerufen am 3. März 2025)", "2025-03-03"),
    ("[^a]: [DRV](https://www.tax.gov.xx/a), Stand 15.03.2025", "2025-03-15"),
    ("[^a]: INASTI, [montants](https://www.tax.gov.xx/a) — retrieved 2026-02-14.", "2026-02-14"),
])
def test_a_definition_line_is_no_claim_and_its_date_is_the_verified_date(definition, date):
    text = f"The fee is €300.[^a]\n\n{definition}\n\n**Last verified**: 2024-01-01\n"
    ex = extract_lines(text)
    assert [(c.line_no, c.last_verified, c.last_verified_origin) for c in ex.claims] == [(1, date, "citation")]


def test_a_reference_definition_is_no_claim_and_its_date_is_read_outside_its_title():
    text = ("The tourist tax is €2 per night [tt].\n\n"
            '[tt]: https://www.cm-porto.pt/taxa "Tax of 3 May 2024" (accessed 2 March 2026)\n')
    (c,) = extract_lines(text, include_secondary=True).claims
    assert (c.line_no, c.link_kind, c.last_verified, c.last_verified_origin) == (1, "reference", "2026-03-02", "citation")


def test_a_definition_without_a_date_leaves_the_file_footer():
    text = "The fee is €300.[^a]\n\n[^a]: [Decree-Law 43/2024](https://www.tax.gov.xx/a)\n\nLast verified: 2026-05-01\n"
    (c,) = extract_lines(text).claims
    assert (c.line_no, c.last_verified, c.last_verified_origin) == (1, "2026-05-01", "file")


# ---- "Source:" lines ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    "Source: [Decree](https://www.tax.gov.xx/decree)",
    "Source : [décret](https://www.tax.gov.xx/decree)",
    "Source\u00a0: https://www.tax.gov.xx/decree",
    "Quelle: [BA](https://www.tax.gov.xx/decree)",
    "*Source: [circular](https://www.tax.gov.xx/decree)*",
    "**Sources:**\n1. [FPS](https://www.tax.gov.xx/decree)",
    "Quellen:\n- [BEHG](https://www.tax.gov.xx/decree)\n- [UBA](https://www.uba.gov.xx/co2)",
])
def test_a_source_line_belongs_to_the_statement_above(source):
    text = f"The minimum wage rose to €870 in January 2025.\n{source}\n"
    claims = got(text)
    assert claims[0] == (1, "https://www.tax.gov.xx/decree", ["€870", "January 2025"])
    assert all(line == 1 for line, _url, _figures in claims)


def test_a_source_line_under_a_table_sources_each_row_and_keeps_its_own_label_figures():
    text = ("| Use | Rate |\n|---|---|\n| self-use | **0.2 %** |\n| general | 1 % |\n\n"
            "Source: [Land Tax Act §16](https://law.gov.xx/g034)\n")
    assert got(text) == [(3, "https://law.gov.xx/g034", ["0.2 %"]), (4, "https://law.gov.xx/g034", ["1 %"]),
                         (6, "https://law.gov.xx/g034", ["§16"])]


def test_a_statement_citing_its_own_source_keeps_it():
    text = "VAT is 20 % ([tax](https://www.tax.gov.xx/vat)).\nSource: [other](https://www.other.gov.xx/x)\n"
    assert got(text) == [(1, "https://www.tax.gov.xx/vat", ["20 %"])]


def test_a_source_line_after_a_heading_or_far_below_sources_nothing():
    text = "## Rates 2025\nSource: [t](https://www.tax.gov.xx/a)\n\nVAT is 20 %.\n\n\nSource: [t](https://www.tax.gov.xx/b)\n"
    assert got(text) == []


# ---- links, tables, images, templates ----------------------------------------------------------------------
def test_a_number_that_is_a_link_label_is_that_links_figure():
    text = ("| Quarter | Rate |\n|---|---|\n| Q1 2025 | [6.9](https://www.ine.pt/t1) |\n"
            "See [3](https://www.ine.pt/ref) and the [2024](https://www.ine.pt/y) page; growth was [1,234.5](https://www.ine.pt/g).\n")
    assert got(text) == [(3, "https://www.ine.pt/t1", ["6.9"]), (4, "https://www.ine.pt/g", ["1,234.5"])]
    (c,) = [c for c in extract_lines(text, include_secondary=True).claims if c.line_no == 3]
    assert [(v.type, v.number) for v in c.values if v.salient] == [("number", 6.9)]


def test_a_table_row_takes_the_figures_of_its_own_cells():
    text = ("| Year | Index | Source |\n|---|--:|---|\n| 2024 | **128.47** | [Statbel](https://statbel.fgov.be/cpi) |\n"
            "| Strom | 40,1 ct/kWh | [BDEW](https://www.bdew.de/strompreis) |\n| Rooms | 3 | [x](https://x.gov.xx/r) |\n")
    assert got(text) == [(3, "https://statbel.fgov.be/cpi", ["128.47"]), (4, "https://www.bdew.de/strompreis", ["40,1"])]


def test_a_row_whose_only_link_is_a_named_home_page_is_a_lint_finding_not_a_claim(corpus):
    text = ("| Tool | Score | Accuracy |\n|---|---|---|\n| [RentenCheck](https://rentencheck.example/) | 27.8 | 91 % |\n"
            "| Gym | €35 | [Fitness Hut](https://www.fitnesshut.pt/) |\n"
            "| CIU (CAP. 293) | `https://cip.gov.ag/` |\n")
    assert got(text) == [(5, "https://cip.gov.ag/", ["CAP. 293"])]  # a home page written as a URL names a source
    root = corpus("countries/xx/playbook.md", text)
    findings = lint_corpus(make_corpus(root), LinterSettings())
    assert [(f.line, f.url) for f in findings] == [(3, "https://rentencheck.example/"), (4, "https://www.fitnesshut.pt/")]
    defaults = CorpusSource(root, ExtractionSettings())
    assert [(f.line, f.url) for f in lint_text(text, rel="x.md", corpus=defaults, linter=LinterSettings())] == [
        (3, "https://rentencheck.example/"), (4, "https://www.fitnesshut.pt/")]


def test_no_figure_from_tags_attributes_or_image_file_names():
    text = ('<img src="photos/ribeira-2023-03-07.png" width="600"> A cover is €3 ([ASAE](https://www.asae.gov.pt/c)).\n'
            "![Tram](images/tram-2023-03-07.jpg) Fares are €2 ([STCP](https://www.stcp.pt/f)).\n"
            '<a href="https://www.tax.gov.xx/v?d=2024-05-01">VAT</a> is 20 %.\n')
    assert got(text) == [(1, "https://www.asae.gov.pt/c", ["€3"]), (2, "https://www.stcp.pt/f", ["€2"]),
                         (3, "https://www.tax.gov.xx/v?d=2024-05-01", ["20 %"])]


def test_template_figures_are_skipped_and_counted():
    text = ("Deadline: {{ fail_on('2026-12-31') }} ([calendar](https://www.tax.gov.xx/cal)).\n"
            "Target: {{ RATE|percent(1) }}% of services ([obs](https://www.tax.gov.xx/obs)).\n"
            "{% if budget %}The fund holds 9 millions d'euros ([DINUM](https://www.tax.gov.xx/fund)).{% endif %}\n"
            "Made by {{ site.organisation }}; {{< price year=\"2025\" >}} €/m².\n"
            "```\n{{ example(2024) }}\n```\n")
    ex = extract_lines(text)
    assert [(c.line_no, [v.raw for v in c.values if v.salient]) for c in ex.claims] == [(3, ["9 millions d'euros"])]
    assert ex.skipped_template_figures == 3 and extraction_stats(ex)["skipped_template_figures"] == 3


# ---- amounts, numbers and dates in words -------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("doté de 9 millions d'euros", [("money", "9 millions d'euros", 9e6)]),
    ("rund 1,5 Milliarden Euro", [("money", "1,5 Milliarden Euro", 1.5e9)]),
    ("2 milliards par an", [("number", "2 milliards", 2e9)]),
    ("3 Millionen Einwohner", [("number", "3 Millionen", 3e6)]),
    ("about 1.7 million residents", [("number", "1.7 million", 1.7e6)]),
    ("bei 563 Euro im Monat", [("money", "563 Euro", 563.0)]),
    ("le 21 novembre 2017", [("date", "21 novembre 2017", None)]),
    ("am 3. März 2024", [("date", "3. März 2024", None)]),
    ("au 1er janvier 2025", [("date", "1er janvier 2025", None)]),
    ("im Juni 2024", [("date", "Juni 2024", None)]),
    ("on 6. September 2024", [("date", "6. September 2024", None)]),
    ("on 15 April 2005", [("date", "15 April 2005", None)]),  # English, read as before
])
def test_amounts_and_dates_in_words(text, expected):
    assert [(v.type, v.raw, v.number) for v in extract_values(text) if v.salient] == expected


# ---- the labelled corpora ----------------------------------------------------------------------------------
def test_the_kb_forms_labels_hold_and_the_corpora_meet_the_targets():
    labels = kb.read_labels(kb.DEFAULT_CORPUS)
    assert kb.check_labels(kb.DEFAULT_CORPUS, labels) == []
    assert {lab.file.split("/", 1)[0] for lab in labels} == {"city_guide", "handbook_fr", "policy_de", "notes_flat", "wiki"}
    score = kb.score(labels, kb.extract(kb.DEFAULT_CORPUS, include_secondary=True))
    total = score["total"]
    assert total["found"] >= 0.9 * total["expected"] and total["correct"] >= 0.9 * total["extracted"], score["missed"]
    assert score["on_definition_lines"] == 0


def test_hostile_lines_of_the_new_forms_are_read_in_linear_time():
    """Lines made of one form repeated (footnote markers of one note, template openers, tags, "Source:" words,
    numeric link labels) are read in a child process with a deadline, so a quadratic scan fails instead of
    hanging the suite (each takes well under 5 s here)."""
    code = (
        "from claims_pipeline.corpus.extract import ExtractOptions, extract_text\n"
        "from claims_pipeline.corpus.records import Extraction\n"
        "from claims_pipeline.config.settings import ExtractionSettings\n"
        "opts = ExtractOptions.of(ExtractionSettings(), include_secondary=True)\n"
        "cases = [\n"
        "  ('x' + '5 %[^1]. ' * 20000 + '\\n\\n[^1]: [a](https://a.gov.xx/a) (May 2025)\\n', 1),\n"
        "  ('5 % [a](https://a.gov.xx/a) ' + '{{' * 100000 + '\\n' + '{%' * 100000 + '\\n', 1),\n"
        "  ('5 % [a](https://a.gov.xx/a) ' + '<a' * 100000 + '\\n', 1),\n"
        "  ('VAT is 20 %.\\n' + 'Source: ' * 50000 + '[a](https://a.gov.xx/a)\\n', 1),\n"
        "  ('| ' + '| [1.5](https://a.gov.xx/1) ' * 20000 + '|\\n', 1),\n"
        "  ('[a](https://a.gov.xx/a) ' + 'mars 2024 1. Juli 2025 Mrd. ' * 5000 + '\\n', 1),\n"
        "]\n"
        "for text, n in cases:\n"
        "    out = Extraction()\n"
        "    extract_text(text, scope='x', rel='x.md', opts=opts, out=out)\n"
        "    assert len(out.claims) == n, (text[:40], len(out.claims))\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
