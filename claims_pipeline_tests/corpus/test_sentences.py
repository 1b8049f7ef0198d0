"""Claims as people write them: wrapped paragraphs read as one text, sentences, attribution a reader agrees with,
lead-in lists, bibliography entries, `extract --explain` and `init`'s count of lines not taken. Sentences written
for these tests, in the forms real knowledge bases use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from claims_pipeline_tests.corpus.conftest import extract_lines


def got(text: str, **kw) -> list[tuple[int, str, list[str]]]:
    """(line, URL, salient figures) of every claim, secondary sources included."""
    ex = extract_lines(text, include_secondary=True, **kw)
    return [(c.line_no, c.source_url, [v.raw for v in c.values if v.salient]) for c in ex.claims]


def reasons(text: str) -> dict[str, str]:
    return {c.source_url: c.source_reason for c in extract_lines(text, include_secondary=True).claims}


# ---- wrapped paragraphs --------------------------------------------------------------------------------------
def test_a_sentence_wrapped_over_lines_is_one_claim_on_the_line_it_starts_on():
    text = ("# Tax\n\n"
            "The top federal rate is 37% for income above $609,350, according to the\n"
            "[IRS tables](https://www.irs.example.gov/newsroom/inflation-adjustments).\n")
    assert got(text) == [(3, "https://www.irs.example.gov/newsroom/inflation-adjustments", ["$609,350", "37%"])]


def test_each_sentence_of_a_wrapped_paragraph_keeps_its_own_line_and_source():
    text = ("Die Mehrwertsteuer beträgt z. B. für Lebensmittel 7 % nach Art. 12 Nr. 1 des\n"
            "Gesetzes ([UStG](https://www.gesetze.example.de/ustg/12)). Der Regelsatz liegt bei\n"
            "19 % ([BMF](https://www.bmf.example.de/regelsatz)).\n")
    assert got(text) == [(1, "https://www.gesetze.example.de/ustg/12", ["7 %", "Art. 12 Nr. 1"]),
                         (2, "https://www.bmf.example.de/regelsatz", ["19 %"])]


def test_a_wrapped_list_item_and_a_quote_are_read_whole():
    text = ("- The deposit is capped at two months of rent, or €2,400 in\n"
            "  most cases ([decree](https://www.legis.example.gov/deposit)).\n"
            "\n"
            "> Inflation reached 2.4 % in December\n"
            "> 2024 ([Eurostat](https://ec.example.eu/eurostat/hicp-2024-12)).\n")
    assert got(text) == [(1, "https://www.legis.example.gov/deposit", ["€2,400", "two months"]),
                         (4, "https://ec.example.eu/eurostat/hicp-2024-12", ["2.4 %", "December 2024"])]


def test_sentences_end_where_a_reader_ends_them_in_six_languages():
    from claims_pipeline.corpus.sentences import sentences

    text = ("Die Quote lag z. B. bei 5,3 % (vgl. Nr. 4). Le taux est de 20 % env. pour la St. Jean. "
            "El tipo es del 21 % aprox. en Art. 90. Il tasso è del 22 %, ecc. per legge. "
            "Het tarief is bijv. 21 % sinds 1 jan. 2024. The rate is 5.5 % e.g. for food.")
    got_sentences = [text[a:b] for a, b in sentences(text)]
    assert got_sentences == ["Die Quote lag z. B. bei 5,3 % (vgl. Nr. 4).", "Le taux est de 20 % env. pour la St. Jean.",
                             "El tipo es del 21 % aprox. en Art. 90.", "Il tasso è del 22 %, ecc. per legge.",
                             "Het tarief is bijv. 21 % sinds 1 jan. 2024.", "The rate is 5.5 % e.g. for food."]


# ---- footnotes ---------------------------------------------------------------------------------------------
def test_a_footnote_after_a_semicolon_clause_and_in_the_next_sentence_cites_the_figure():
    text = ("The reduced rate is 5.5 %; it applies to food and books.[^a]\n\n"
            "Rents rose 9.4 % in 2024. This is the largest rise on record.[^b]\n\n"
            "[^a]: [Tax code](https://www.tax.example.gov/reduced)\n"
            "[^b]: [Statistics office](https://www.stats.example.gov/rents-2024)\n")
    assert got(text) == [(1, "https://www.tax.example.gov/reduced", ["5.5 %"]),
                         (3, "https://www.stats.example.gov/rents-2024", ["9.4 %"])]
    assert reasons(text)["https://www.stats.example.gov/rents-2024"] == "next-sentence"


# ---- several links in a sentence ---------------------------------------------------------------------------
def test_the_evidence_wins_over_a_link_that_defines_a_word():
    text = ("The [unemployment rate](https://en.wikipedia.org/wiki/Unemployment) fell to 5.1 % in 2024 "
            "([ONS bulletin](https://www.ons.example.gov.uk/labour/bulletin-2024)).\n")
    assert got(text) == [(1, "https://www.ons.example.gov.uk/labour/bulletin-2024", ["5.1 %"])]
    assert reasons(text) == {"https://www.ons.example.gov.uk/labour/bulletin-2024": "evidence"}


def test_a_link_in_another_sentence_of_the_line_takes_no_figure():
    text = ("[The ministry](https://www.finance.example.gov/report-2025) reported that the rate reached 5 %. "
            "[Tickets](https://tickets.example.com/buy) are sold online.\n")
    assert got(text) == [(1, "https://www.finance.example.gov/report-2025", ["5 %"])]


def test_a_sentence_that_is_only_a_citation_cites_the_sentence_before_it():
    text = ("The fee is €45 for an adult.\n"
            "See [the fee schedule](https://www.city.example.gov/fees).\n")
    assert got(text) == [(1, "https://www.city.example.gov/fees", ["€45"])]
    assert reasons(text) == {"https://www.city.example.gov/fees": "next-sentence"}
    # a home page cites nothing in particular: a figure on the line above does not go to it
    assert got("A figure without a source: 12 %.\n[a link without a figure](https://x.example.gov/)\n") == []


# ---- lead-ins, bibliographies, slash-less schemes ----------------------------------------------------------
def test_a_lead_in_ending_in_a_colon_gives_its_source_to_the_list_under_it():
    text = ("The [2018 summary](https://www.agency.example.gov/summary-2018) lists, notably:\n"
            "- a 12 % rise in rents,\n"
            "- 3,400 new homes (€1.2 billion),\n"
            "\n"
            "Next paragraph with 7 % and no source.\n")
    assert got(text) == [(2, "https://www.agency.example.gov/summary-2018", ["12 %"]),
                         (3, "https://www.agency.example.gov/summary-2018", ["€1.2 billion"])]
    assert set(reasons(text).values()) == {"lead-in"}


def test_bibliography_entries_and_reading_lists_are_not_claims():
    text = ("Growth was 2.1 % in 2023 ([OECD](https://www.oecd.example.org/outlook-2023)).\n\n"
            "- Smith, J., & Doe, A. (2019). Rates of 5 % and more. *Journal*, 12(3). https://doi.example.org/10.1/x\n"
            "- OECD (2021). Taxing wages 2021: 34.6 % on average. https://www.oecd.example.org/taxing-wages-2021\n\n"
            "## Further reading\n\n"
            "- [Report on the 4 % rule, March 2020](https://www.example.org/four-percent)\n")
    assert got(text) == [(1, "https://www.oecd.example.org/outlook-2023", ["2.1 %"])]


def test_a_scheme_written_without_slashes_is_a_citation():
    text = "Response rates fell to 43 % (http:dx.doi.example.org/10.1000/182).\n"
    assert got(text) == [(1, "http://dx.doi.example.org/10.1000/182", ["43 %"])]


# ---- extract --explain, init ---------------------------------------------------------------------------------
def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=env)


def test_explain_shows_the_block_sentences_figures_links_and_claims(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "notes.md").write_text(
        "# Work\n\n"
        "The [unemployment rate](https://en.wikipedia.org/wiki/Unemployment) fell to 5.1 % in\n"
        "2024 ([ONS bulletin](https://www.ons.example.gov.uk/bulletin)). It is published monthly.\n", encoding="utf-8")
    r = _cli(tmp_path, "extract", "--corpus", str(kb), "--explain", "notes.md:4")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "notes.md:4: a paragraph over lines 3-4, read as one text"
    assert out[2].startswith("  line 3: The [unemployment rate]") and out[3] == "  line 4: It is published monthly."
    assert "5.1 % (pct, salient)" in out[4]
    assert any(line.startswith("  [markdown] https://en.wikipedia.org/wiki/Unemployment: takes no figure") for line in out)
    assert any(line.startswith("  [markdown] https://www.ons.example.gov.uk/bulletin: takes 5.1 %") for line in out)
    assert out[-1] == "  line 3: https://www.ons.example.gov.uk/bulletin ← 5.1 % (evidence)"
    bad = _cli(tmp_path, "extract", "--corpus", str(kb), "--explain", "notes.md")
    assert bad.returncode == 2 and "--explain wants FILE:LINE" in bad.stderr


def test_init_says_how_many_lines_with_a_figure_and_a_link_gave_no_claim(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    # a digit that is no figure (a version number) beside a link: lines a claim was looked for in, not taken
    lines = [f"Version {n} of [the app](https://app.example.org/v{n}) is out." for n in range(12)]
    (kb / "guide.md").write_text("\n\n".join(lines) + "\n\nVAT is 20 % ([tax](https://tax.example.gov/vat)).\n",
                                 encoding="utf-8")
    r = _cli(tmp_path, "init", str(kb), "--config", str(tmp_path / "c.yaml"))
    assert r.returncode == 0, r.stderr
    shown = [line for line in r.stdout.splitlines() if "not taken" in line]
    assert shown == ["  not taken: 12 of 13 lines holding a figure and a link gave no claim; to see why for one: "
                     "claims-pipeline extract --explain guide.md:1"]
    assert "claims: 1 " in r.stdout


def test_a_source_line_in_dutch_spanish_and_italian_gives_its_source():
    for word in ("Bron", "Fuente", "Fonti"):
        text = f"De heffing bedraagt 21 % voor iedereen.\n{word}: [wet](https://wetten.example.nl/heffing)\n"
        assert got(text) == [(1, "https://wetten.example.nl/heffing", ["21 %"])], word


def test_a_sources_section_in_another_language_gives_no_claim():
    text = ("De heffing bedraagt 21 % ([wet](https://wetten.example.nl/heffing)).\n\n## Bronnen\n\n"
            "- [Besluit van 3 maart 2024, nr. 12](https://wetten.example.nl/besluit-2024)\n")
    assert [c[1] for c in got(text)] == ["https://wetten.example.nl/heffing"]


def test_a_documents_file_note_is_no_figure():
    text = "- [Annual report (PDF, 1.1 MB, 36 pages)](https://www.agency.example.gov/report.pdf) shows 4 % growth.\n"
    assert got(text) == [(1, "https://www.agency.example.gov/report.pdf", ["4 %"])]
    assert got("- [User guide (PDF, 550 KB, 85 pages, July 2016)](https://www.agency.example.gov/guide.pdf)\n") == []


def test_sentences_end_at_a_cjk_full_stop():
    from claims_pipeline.corpus.sentences import sentences

    text = "税率は10%です。しかし[調査](https://example.jp/a)では40%でした。"
    assert [text[a:b] for a, b in sentences(text)] == ["税率は10%です。", "しかし[調査](https://example.jp/a)では40%でした。"]


def test_mdx_files_are_read(corpus):
    from claims_pipeline_tests.corpus.conftest import extract_corpus, make_corpus

    root = corpus("insights/rates.mdx", "import Chart from '../Chart'\n\nRates rose 4.2 % in 2024 "
                                        "([report](https://stats.example.org/rates-2024)).\n\n<Chart />\n")
    claims = extract_corpus(make_corpus(root, layout={})).claims
    assert [(c.file, c.line_no, c.source_url) for c in claims] == [
        ("insights/rates.mdx", 3, "https://stats.example.org/rates-2024")]


def test_a_figure_written_with_a_character_reference_is_read():
    text = ("Gemäß [§&nbsp;13](https://gesetze.example.de/egovg-13) gilt ein Satz von 7&nbsp;% bzw. 1.000&nbsp;&euro;.\n"
            "Next line 2 &lt;b&gt; stays as written &#10; on line 2 ([x](https://x.example.gov/a?b=1&amp;c=2)).\n")
    ex = extract_lines(text, include_secondary=True)
    assert [(c.line_no, c.source_url, [v.raw for v in c.values if v.salient]) for c in ex.claims][0] == (
        1, "https://gesetze.example.de/egovg-13", ["1.000\u00a0€", "7\u00a0%", "§\u00a013"])
    assert [c.line_no for c in ex.claims] == [1]


def test_a_quoted_linked_title_with_its_publisher_and_date_is_a_reading_list_entry():
    text = ('- "[Rapport sur les algorithmes](https://www.agence.example.fr/rapport.pdf)", Agence, décembre 2017\n'
            '🇪🇺 “[Guidelines for AI](https://ec.example.eu/guidelines)”, European Commission, March 2019\n')
    assert got(text) == []


def test_a_company_named_by_its_home_page_is_not_the_source_of_its_figures():
    text = ("1. **Carpooling in France**: trips rose 60% ([Klaxit](https://www.klaxit.example.com/)).\n"
            "2. **Shipping**: emissions fell 20% ([CMA CGM](https://www.cma-cgm.example/)).\n"
            "3. Loans reach 100% of the price ([FNBB home-loans page](https://www.fnbb.example.bw/)).\n")
    assert [c[1] for c in got(text)] == ["https://www.fnbb.example.bw/"]  # a page described, not a name
