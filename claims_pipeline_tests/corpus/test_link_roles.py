"""What a link does in its sentence: give the evidence for a figure, or name a site, an event, a form to fill in,
a page of another sentence. And the blocks no claim comes from: front matter, fences inside list items, lists of
resources and their subsections. Sentences written for these tests."""

from __future__ import annotations

from .conftest import extract_lines


def _claims(text: str) -> dict[str, list[str]]:
    return {c.source_url: sorted(v.raw for v in c.values) for c in extract_lines(text).claims}


# --- a link in a later sentence of a paragraph -------------------------------------------------------------------

def test_link_in_the_running_text_of_a_later_sentence_does_not_cite_the_figure():
    text = ("The harbour treaty of 2015 caps dredging at 40 cm a year. Keeping to it protects "
            "[the oldest reefs of the bay](https://news.example.com/2021/reefs-at-risk).\n")
    assert _claims(text) == {}


def test_invitation_after_a_dated_sentence_does_not_cite_it():
    text = ("The helpdesk has answered questions since March 2019. Read the story of its first year in our "
            "[earlier post](https://blog.example.gov/2020/03/helpdesk-first-year/).\n")
    assert _claims(text) == {}


def test_a_later_sentence_that_is_only_a_citation_still_cites():
    text = "The harbour levy is 1.1 % of the value. See [the tariff](https://port.example.gov/tariff).\n"
    assert _claims(text) == {"https://port.example.gov/tariff": ["1.1 %"]}


def test_a_link_in_parentheses_later_on_the_line_still_cites():
    text = ("The harbour levy is 1.1 % of the value. It is billed each spring. "
            "([tariff](https://port.example.gov/tariff))\n")
    assert _claims(text) == {"https://port.example.gov/tariff": ["1.1 %"]}


def test_a_list_item_stays_one_statement():
    text = "- **Levy**: 1.1 % of the value. Billed by the [port office](https://port.example.gov/tariff) each spring.\n"
    assert _claims(text) == {"https://port.example.gov/tariff": ["1.1 %"]}


# --- a home page named in the running text -------------------------------------------------------------------------

def test_home_page_named_as_the_subject_of_its_sentence_is_no_source():
    text = "Launched in August 2021, the [Harbour Fellows](https://fellows.example.gov/) is the newest programme.\n"
    assert _claims(text) == {}


def test_home_page_of_our_own_site_is_no_source():
    text = "We take ideas around the clock, 24 hours, seven days a week, through [our website](https://ideas.example.gov).\n"
    assert _claims(text) == {}


def test_a_projects_home_on_a_pages_host_is_a_home_page():
    """owner.github.io/project/ is the project's home: named as the subject, it is no source; given after a source
    word, it still is one; a page deeper in the project is a page like any other."""
    assert _claims("Since 2019 the [online edition of the manual](https://harbour-team.github.io/manual/) has been "
                   "extended.\n") == {}
    assert _claims("The levy is 1.1 % of the value, according to the [manual](https://harbour-team.github.io/manual/).\n") == {
        "https://harbour-team.github.io/manual/": ["1.1 %"]}
    assert _claims("The [tariff table](https://harbour-team.gitlab.io/manual/tariffs/) has stood at 1.1 % since 2017.\n") == {
        "https://harbour-team.gitlab.io/manual/tariffs/": ["1.1 %", "2017"]}


def test_home_page_given_as_a_source_still_cites():
    assert _claims("The levy is 1.1 % of the value ([Port Office](https://port.example.gov/)).\n") == {
        "https://port.example.gov/": ["1.1 %"]}
    assert _claims("The band of 2.5 % around the peg is administered by the **[Island Bank](https://bank.example.org/)**.\n") == {
        "https://bank.example.org/": ["2.5 %"]}
    assert _claims("Rates are 5 %, 10 % and 15 %. Authoritative source: [Tax Office](https://tax.example.gov/).\n") == {
        "https://tax.example.gov/": ["10 %", "15 %", "5 %"]}


def test_named_sites_give_way_to_the_dataset_beside_them():
    text = ("As the first outside providers, the [Cycling Club](https://club.example.org/) and the "
            "[Space Lab](https://lab.example.org/the-lab/sites/city) on 3 March 2023 published the dataset "
            "[City counts](https://data.example.org/datasets/city-counts).\n")
    assert _claims(text) == {"https://data.example.org/datasets/city-counts": ["3 March 2023"]}


# --- event pages, forms, recordings --------------------------------------------------------------------------------

def test_event_page_is_no_source():
    text = ("The community hosted an event on <a href=\"https://site.example.gov/event/2021/11/03/remote-work/\">remote "
            "work</a> with more than 1,000 people attending.\n")
    assert _claims(text) == {}


def test_page_to_act_on_is_no_source():
    text = "In October 2021 the portal began to offer the [aid form](https://aid.example.gov/h/apply-for-aid/form).\n"
    assert _claims(text) == {}


def test_length_of_a_recording_in_a_link_label_is_no_figure():
    text = "You can also [watch the 28-minute, 13-second video](https://video.example.com/watch?v=abc).\n"
    assert _claims(text) == {}


# --- sentences -----------------------------------------------------------------------------------------------------

def test_an_initialism_in_a_link_label_ends_no_sentence():
    # the date's sentence cites nothing; the label "U.S. Harbour Corps" is not split into two sentences
    text = ("If you want to join, check out the [U.S. Harbour Corps](https://corps.example.gov/jobs) for openings. "
            "Applications are open until **November 30, 2022**.\n")
    assert _claims(text) == {}


def test_a_line_ending_in_a_colon_over_a_capital_ends_its_sentence():
    text = ("Since the act of 2016 and its § 13 the situation has changed:\n"
            "All agencies under [§ 2 of the Organisation Act](https://laws.example.de/org-act#p2) must publish.\n")
    (c,) = extract_lines(text).claims
    assert (c.line_no, [v.raw for v in c.values]) == (2, ["§ 2"])


# --- blocks no claim comes from ------------------------------------------------------------------------------------

def test_front_matter_gives_no_claim_and_no_heading():
    text = ("---\n"
            "source_url: https://blog.example.gov/posts/105/\n"
            "date: 2022-07-06 20:06:00 -0500\n"
            "# Sources listed at https://blog.example.gov/sources\n"
            "---\n"
            "\n"
            "The levy is 1.1 % of the value ([tariff](https://port.example.gov/tariff)).\n")
    ex = extract_lines(text)
    assert [(c.line_no, c.source_url, c.section) for c in ex.claims] == [
        (7, "https://port.example.gov/tariff", "(none)")]


def test_a_fence_inside_a_list_item_is_not_read_as_paragraph_text():
    text = ("1. Prepare the machine.\n"
            "\n"
            "   b. Download everything:\n"
            "    ```\n"
            "    tool fetch --all\n"
            "    ```\n"
            "   The full suite takes close to 24 hours. See [the notes](https://tracker.example.com/notes).\n")
    (c,) = extract_lines(text).claims
    assert c.line_no == 7 and "```" not in c.claim_text and [v.raw for v in c.values] == ["24 hours"]


def test_entries_under_a_resources_heading_and_its_subsections_are_no_claims():
    text = ("# Reading list\n"
            "\n"
            "## Studies\n"
            "\n"
            "Study day \"[Algorithms in schools](https://news.example.org/2017/07/28/algorithms/)\", Paris, 28 June 2017\n"
            "\n"
            "# Findings\n"
            "\n"
            "The levy is 1.1 % of the value ([tariff](https://port.example.gov/tariff)).\n"
            "\n"
            "### Resources:\n"
            "\n"
            "* Agency, [Guidance on translation](https://rules.example.gov/d/02-15207/p-96), 67 Reg. 41455 (June 12, 2002)\n")
    ex = extract_lines(text)
    assert [(c.line_no, c.source_url) for c in ex.claims] == [(9, "https://port.example.gov/tariff")]


def test_page_named_after_its_label_right_under_the_root_is_a_name():
    text = ("In 2023 and 2024 the university and the [City Guild (CG)](https://gov.example.nl/city-guild) coached a "
            "number of assessments.\n")
    assert _claims(text) == {}
    report = "In 2024 the guild coached 15 assessments ([City Guild report](https://gov.example.nl/reports/2024/guild)).\n"
    assert _claims(report) == {"https://gov.example.nl/reports/2024/guild": ["15 assessments", "2024"]}


def test_a_document_whose_path_only_starts_like_an_action_is_a_source():
    text = "The register counts 1,200 firms ([register of firms](https://stats.example.gov/pub/register-of-firms-2023)).\n"
    assert _claims(text) == {"https://stats.example.gov/pub/register-of-firms-2023": ["1,200 firms"]}
