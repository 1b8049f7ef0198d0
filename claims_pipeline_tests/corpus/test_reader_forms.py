"""Citation forms people write that the markdown parser does not know: HTML footnotes, and the links that name
a subject rather than give evidence (home pages, event pages). Sentences written for these tests."""

from __future__ import annotations

from .conftest import extract_lines

HTML_NOTES = (
    "Ferry traffic grew by 18% in the first quarter<sup><a href=\"#fn1\" id=\"ref1\">[1]</a></sup> and the\n"
    "harbour counted 2,400 sailings.<sup><a href=\"#fn2\" id=\"ref2\">[2]</a></sup>\n"
    "\n"
    "<ol>\n"
    "  <li id=\"fn1\">Port Authority, Quarterly traffic 2024, https://port.example.gov/traffic-q1.pdf"
    " <a href=\"#ref1\">back</a></li>\n"
    "  <li id=\"fn2\">Harbour log, vol. 3, 2024. https://harbour.example.org/log/2024 <a href=\"#ref2\">back</a></li>\n"
    "</ol>\n"
)


def test_html_footnote_marker_cites_its_list_item_url():
    ex = extract_lines(HTML_NOTES)
    got = {c.source_url: sorted(v.raw for v in c.values) for c in ex.claims}
    assert got == {"https://port.example.gov/traffic-q1.pdf": ["18%"],
                   "https://harbour.example.org/log/2024": ["2,400 sailings"]}
    assert all(c.line_no in (1, 2) and c.source_reason == "footnote" for c in ex.claims)  # the notes' list items are sources, not statements


def test_html_footnote_list_item_with_no_marker_is_read_as_before():
    text = "<ul>\n<li id=\"item3\">Toll rose to 12% in 2023 (https://port.example.gov/tolls)</li>\n</ul>\n"
    (c,) = extract_lines(text).claims
    assert c.source_url == "https://port.example.gov/tolls"


ADMONITION = (
    "## Examples\n"
    "\n"
    "!!! example \"City of Springfield: parking sensors\"\n"
    "\n"
    "\tThe city fitted sensors to 40% of its parking bays in a first phase.\n"
    "\n"
    "\tThe council then halved the fine for short overstays, to 15 euros.\n"
    "\n"
    "\n"
    "\tSource: [Council decision 2024-17](https://springfield.example.gov/decisions/2024-17)\n"
)


def test_source_line_closing_an_admonition_sources_every_paragraph_of_its_box():
    ex = extract_lines(ADMONITION)
    got = {c.line_no: [v.raw for v in c.values if v.salient] for c in ex.claims
           if c.source_url == "https://springfield.example.gov/decisions/2024-17" and c.source_reason == "source-line"}
    assert set(got) == {5, 7} and "40%" in got[5]


def test_source_line_under_plain_paragraphs_keeps_to_the_one_right_above():
    text = ("Sensors cover 40% of the parking bays.\n\nThe fine is now 15 euros.\n\n"
            "Source: [Council decision](https://springfield.example.gov/decisions/2024-17)\n")
    assert [c.line_no for c in extract_lines(text).claims if c.source_reason == "source-line"] == [3]


CITATIONS = (
    "The river authority measured a 7% drop in nitrate levels [@rivers2023, p. 12].\n"
    "\n"
    "Fishing permits rose by 9% in 2022 [@link(PERMITS22)].\n"
    "\n"
    "## Bibliography\n"
    "\n"
    "**[@linktarget(PERMITS22)]** County office. _Permit statistics_. 2022. <https://county.example.gov/permits-2022>.\n"
    "\n"
    "[@rivers2023] River Authority. Annual water report 2023. https://rivers.example.gov/report-2023.pdf\n"
)


def test_citation_keys_resolve_to_the_files_bibliography_entry():
    ex = extract_lines(CITATIONS)
    got = {c.line_no: (c.source_url, [v.raw for v in c.values if v.salient]) for c in ex.claims}
    assert got[1] == ("https://rivers.example.gov/report-2023.pdf", ["7%"])
    assert got[3][0] == "https://county.example.gov/permits-2022" and "9%" in got[3][1]
    assert set(got) == {1, 3}  # the entries name works: no claims of their own


def test_a_note_marker_closes_the_text_it_supports():
    text = ("The levy was set in June 2016[^1] and 4% has been its rate since the [2021 decree](https://laws.example.gov/d21).\n"
            "\n"
            "[^1]: Levy Act, https://laws.example.gov/act-2016\n")
    got = {c.source_url: [v.raw for v in c.values if v.salient] for c in extract_lines(text).claims}
    assert "4%" in got.get("https://laws.example.gov/d21", []) and "4%" not in got.get("https://laws.example.gov/act-2016", [])
    text = ("The levy was set in June 2016 [@act2016] and has been 4% since the [2021 decree](https://laws.example.gov/d21).\n"
            "\n"
            "[@act2016] Levy Act. 2016. https://laws.example.gov/act-2016\n")
    got = {c.source_url: [v.raw for v in c.values if v.salient] for c in extract_lines(text).claims}
    assert "4%" in got.get("https://laws.example.gov/d21", []) and "4%" not in got.get("https://laws.example.gov/act-2016", [])


def test_a_reading_list_of_linked_titles_gives_no_claims():
    text = ("## Further documents\n\n"
            "- [Annex 4.2 Data Retention Rules](https://agency.example.gov/annex-4-2.pdf) — Data Agency\n"
            "* [Chapter 7 guidance for the 2025 filing season](https://agency.example.gov/ch7) (PDF)\n")
    assert extract_lines(text).claims == []


def test_linked_titles_under_a_sources_line_and_items_that_state_keep_their_claims():
    text = ("Retention is capped at 30 days.\nSources:\n"
            "- [Annex 4.2 Data Retention Rules](https://agency.example.gov/annex-4-2.pdf)\n\n"
            "- [Article 6](https://agency.example.gov/art6) sets the levy at 5%.\n")
    urls = {c.source_url for c in extract_lines(text).claims}
    assert {"https://agency.example.gov/annex-4-2.pdf", "https://agency.example.gov/art6"} <= urls


def test_a_report_goes_on_in_the_next_sentence_with_the_first_link_of_the_sentence_before():
    text = ("[A survey of commuters](https://transit.example.gov/survey-2024) found 64% ride daily, most on lines"
            " running every [10 minutes](https://transit.example.gov/glossary#headway). In detail, 31% ride twice a day.\n")
    got = {c.source_url: [v.raw for v in c.values if v.salient] for c in extract_lines(text).claims}
    assert "31%" in got["https://transit.example.gov/survey-2024"]


def test_figures_after_a_sentence_whose_link_gives_none_are_the_writers_own():
    text = ("[Other surveys](https://transit.example.gov/older-surveys) found that riders value punctuality."
            " Our own panel is young: 41% are under 30.\n")
    assert extract_lines(text).claims == []


def test_a_link_two_sentences_on_does_not_take_the_figure_of_a_report_going_on():
    text = ("The [2024 ridership report](https://transit.example.gov/ridership-2024) counts 64% daily riders."
            " By its count, weekend use grew 12%. Planning is slow work."
            " As [the planners put it](https://transit.example.gov/blog/plans), timetables take a year.\n")
    got = {c.source_url: [v.raw for v in c.values if v.salient] for c in extract_lines(text).claims}
    assert "12%" in got["https://transit.example.gov/ridership-2024"]


def test_a_topic_or_community_index_page_is_no_source():
    text = ("On 3 March 2025 the [Open Maps community](https://news.example.gov/communities/open-maps/) met for a"
            " 2-hour workshop.\n\n"
            "Since 2021 the [data topic](https://news.example.gov/topics/data/) counts 40% more posts.\n\n"
            "Fees rose 4% in 2024 ([fee schedule](https://agency.example.gov/topics/fees/schedule-2024.pdf)).\n")
    assert [c.source_url for c in extract_lines(text).claims] == ["https://agency.example.gov/topics/fees/schedule-2024.pdf"]


def test_a_step_of_several_sentences_reads_like_a_paragraph_while_a_topic_entry_stays_one_statement():
    """A numbered step whose later sentence names where a package comes from: that link is no source of the
    earlier sentence's duration. An item opening with its topic and a colon is one entry: its link sources every
    sentence of it."""
    step = ("1. Build the container image first.\n"
            "Building it takes about 25 minutes on a laptop. Then fetch the client library from "
            "[the package index](https://packages.example.org/project/client/).\n")
    assert extract_lines(step).claims == []
    entry = ("- **Harbour dues**: levied under the Ports Act, No. 12 of 1988. Dues are set each year by "
             "[the port authority](https://port.example.gov/dues).\n")
    (c,) = extract_lines(entry).claims
    assert c.source_url == "https://port.example.gov/dues"
    assert {"No. 12", "1988"} <= {v.raw for v in c.values}


def test_a_source_line_sources_the_unlinked_sentences_of_a_one_line_paragraph_as_of_a_wrapped_one():
    """One paragraph a line (how many knowledge bases are written) is read as the same paragraph wrapped: its
    sentences citing nothing take the "Source:" line under it, even when another sentence has a link of its own."""
    body = ("The harbour levy is 4 % of the cargo value. Read the [port office notes](https://port.example.gov/notes) "
            "for the procedure.")
    source = "\n\nSource: [Port office register](https://port.example.gov/levy)\n"
    wrapped = body.replace(" Read", "\nRead")
    for text in (body + source, wrapped + source):
        got = {(c.line_no, c.source_url, c.source_reason): [v.raw for v in c.values] for c in extract_lines(text).claims}
        assert got == {(1, "https://port.example.gov/levy", "source-line"): ["4 %"]}, text


def test_a_shortcode_citing_a_document_is_the_link_it_stands_for():
    """A Hugo card (`{{< card src="…" title="…" >}}`) links its src with its title as the label: a section
    number in the title is that page's figure. A shortcode with no http src, or no title, stays a template."""
    card = ('{{< card-rule src="https://rules.example.gov/hr/12.204" kicker="Rule" '
            'title="**§ 12.204 Harbour Regulation**: pilotage." >}}Every ship must take a pilot.\n')
    (c,) = extract_lines(card).claims
    assert c.source_url == "https://rules.example.gov/hr/12.204"
    assert [v.raw for v in c.values if v.salient] == ["§ 12.204"]
    assert extract_lines('{{< card-rule src="/local/hr-12" title="**§ 12.204**: pilotage." >}}\n').claims == []
    assert extract_lines('{{< figure src="https://img.example.gov/chart.png" >}} Under § 12.204 a pilot is due.\n').claims == []
