"""HTML → text: chrome dropped, tables/captions/footnotes kept, figures never glued or split."""

from __future__ import annotations

from pathlib import Path

import pytest

from claims_pipeline.web.html_text import json_to_text, plain_to_text, xml_to_text
from claims_pipeline.web.text import html_to_text, looks_like_js_shell

TEXT_SITE = Path(__file__).resolve().parents[2] / "claims_pipeline_demo" / "fixture_web" / "sites" / "text.fixture"


def page(name: str) -> bytes:
    return (TEXT_SITE / name).read_bytes()


def test_table_cells_stay_separate_tokens() -> None:
    text = html_to_text(page("table-figures.html"))
    lines = text.splitlines()
    assert "Rate | Year | Threshold (EUR)" in lines
    assert "6.32 % | 2025 | 12 570" in lines
    assert "6.10 % | 2024 | 12 300" in lines
    assert "5.95 % | 11 900" in lines  # <td><p>…</p></td> stays on its row; the empty cell is skipped
    assert "Table 1. Levy rates by year (source: Revenue Office)" in lines  # caption kept


def test_unicode_spaces_become_ascii_spaces_inside_numbers() -> None:
    text = html_to_text(page("table-figures.html"))
    assert "1 000 000 registered taxpayers" in text  # &nbsp;
    assert "2 500 000" in text  # thin space U+2009
    assert "3 750 000" in text  # narrow no-break space U+202F
    assert "11 900" in text  # &#x202F; inside a cell
    for ch in "\u00a0\u2009\u202f\u2007\u00ad\u200b":
        assert ch not in text


def test_sup_sub_are_set_off_and_inline_markup_does_not_split_numbers() -> None:
    text = html_to_text(page("table-figures.html"))
    assert "m 2 and CO 2 emissions" in text
    assert "in 2024 1 , or 1.9 % of GDP" in text  # footnote mark never glues onto the year (20241)
    assert "20241" not in text
    assert "12345" in text  # <span>12</span><b>345</b> is one number
    assert "soft" + "hyphen 67" in text  # soft hyphens removed


def test_scripts_styles_and_head_are_dropped() -> None:
    text = html_to_text(page("table-figures.html"))
    assert "7.77" not in text and "999 999" not in text and "dataLayer" not in text
    assert not text.startswith("Social levy rates 2025")  # <title> lives in <head>


def test_navigation_chrome_dropped_article_header_and_footer_kept() -> None:
    text = html_to_text(page("nav-chrome.html"))
    for decoy in ("Budget 2030", "Rates 2019", "Archive 1999", "2018 edition", "2017 reform", "Levy 2016",
                  "0800 123 456", "3 cookies", "Accept all", "8.88", "7.77"):
        assert decoy not in text, decoy
    for kept in ("Transfer duty on property", "Updated 14 May 2025", "4.5 % of the price above 250 000 EUR",
                 "0 % up to 300 000 EUR", "Act No. 32 of 2021"):
        assert kept in text, kept


def test_footnotes_and_figure_captions_kept() -> None:
    text = html_to_text(page("footnotes.html"))
    for kept in ("Average rent rose by 7.4 % 1 against 3.1 % for wages. 2",
                 "Figure 2: median rent 1 250 EUR per month (2024)",
                 "Index base 2015 = 100; rose to 131.6 in 2024.",
                 "Gross wages, 12 months to December 2024.",
                 "Note: figures exclude 12 overseas districts."):
        assert kept in text.splitlines(), kept
    assert "Menu 2011" not in text and "Site map 2010" not in text


def test_blocks_are_lines_and_entities_decoded() -> None:
    html = "<div>a &amp; b</div><p>cost 5&nbsp;&euro;<br>next line</p><ul><li>one</li><li>two</li></ul>"
    assert html_to_text(html) == "a & b\ncost 5 €\nnext line\none\ntwo"


def test_pre_keeps_its_lines_and_comments_vanish() -> None:
    html = "<p>x<!-- 2099 hidden --></p><pre>Year  Rate\n2025  6.32</pre>"
    assert html_to_text(html) == "x\nYear Rate\n2025 6.32"


def test_deeply_nested_markup_does_not_hit_the_recursion_limit() -> None:
    depth = 5000
    html = "<div>" * depth + "<p>deep figure 42 %</p>" + "</div>" * depth
    assert "deep figure 42 %" in html_to_text(html)


def test_js_shell_detected_but_short_static_page_is_a_real_page() -> None:
    shell = page("js-shell.html")
    note = looks_like_js_shell(shell, html_to_text(shell), 200)
    assert note is not None and note.startswith("JS-only shell")
    short = page("short-static.html")
    assert looks_like_js_shell(short, html_to_text(short), 200) is None
    big = page("table-figures.html")  # has a script tag but plenty of text
    assert looks_like_js_shell(big, html_to_text(big), 200) is None


def test_json_becomes_key_value_lines() -> None:
    text = json_to_text(page("rates.json"))
    assert text.splitlines() == ["dataset: levy", "updated: 2025-03-03", "year: 2025", "rate: 6.32",
                                 "label: Social levy", "year: 2024", "rate: 6.1"]


def test_broken_json_falls_back_to_plain_text() -> None:
    assert json_to_text(b'{"rate": 6.32,') == '{"rate": 6.32,'


def test_xml_gives_text_nodes_not_markup() -> None:
    text = xml_to_text(page("rates.xml"))
    assert text.splitlines() == ["6.32 %", "Social levy", "6.10 %"]
    assert "<" not in text and "generated 2019" not in text


def test_xml_entities_are_not_expanded() -> None:
    bomb = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
            b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><l><v>7 %</v><w>&c;</w></l>')
    text = xml_to_text(bomb)
    assert "7 %" in text and "aaaaaaaaaa" not in text


def test_plain_text_normalised() -> None:
    assert plain_to_text(page("rates.txt")) == "Levy rates\n2025: 6.32 %\n2024: 6.10 %"


@pytest.mark.parametrize("junk", [b"", b"<", b"<<<>>>", b"<html><body><table><td>1<td>2", b"\x00\x01<p>x"])
def test_junk_never_raises(junk: bytes) -> None:
    assert isinstance(html_to_text(junk), str)


def test_layout_table_cells_keep_their_paragraph_lines() -> None:
    html = "<table><tr><td><h1>Title</h1><p>Rate 6.32 %</p><p>Year 2025</p></td><td><div>side</div></td></tr></table>"
    assert html_to_text(html).splitlines() == ["Title", "Rate 6.32 %", "Year 2025", "side"]


# ---- hostile nesting: linear work, no tree beyond libxml2's depth limit ---------------------------------------
def test_pages_nested_past_the_tree_limit_are_read_by_the_streamed_reader() -> None:
    from claims_pipeline.web.html_text import _top_level_nodes

    deep = "<div>" * 200_000 + "<p>deep figure 42 %</p>" + "</div>" * 200_000 + "<p>after 6.32 %</p>"
    assert _top_level_nodes(deep) is None  # past the tree builder: the streamed reader
    assert html_to_text(deep).splitlines() == ["deep figure 42 %", "after 6.32 %"]


def test_the_streamed_reader_keeps_the_rules() -> None:
    body = ("<header>DECOY-HEADER</header><nav>DECOY-NAV</nav><script>var x = 1;</script><style>p{}</style>"
            "<aside class='footnotes'><p>note 1: 7 % since 2024</p></aside>"
            "<main><header>Published 3 May 2025</header><article><p>Levy 6.32 %</p>"
            "<table><tr><td>VAT</td><td></td><td>20 %</td></tr></table><pre>a\n  b</pre>x<sup>2</sup></article></main>"
            "<div id='cookie-consent'>DECOY-COOKIE</div>")
    deep = "<div>" * 3000 + body + "</div>" * 3000
    text = html_to_text(deep)
    assert text.splitlines() == ["note 1: 7 % since 2024", "Published 3 May 2025", "Levy 6.32 %", "VAT | 20 %",
                                 "a", "b", "x 2"]
    shallow = html_to_text(body)  # the tree walk: the same text
    assert shallow == text


@pytest.mark.parametrize("opener,n", [("<td><div>", 12_000), ("<header>", 20_000), ("<td><div>", 900),
                                      ("<header>", 1_500)])
def test_hostile_nesting_is_read_whole(opener: str, n: int) -> None:
    """The shapes that made the old ancestor and subtree scans quadratic (minutes of CPU for a 100 kB page),
    past the tree limit (streamed) and within it (the tree walk)."""
    text = html_to_text("<html><body><main><table><tr>" + opener * n + "x 6.32 %")
    assert text.split() == ["x", "6.32", "%"]



def test_control_and_bidi_characters_stay_in_the_stored_text() -> None:
    """Page text keeps them (its hash must not move when a reader rule changes); the reports and the fetch CLI
    neutralise them where a person reads the text (claims_pipeline/common/text_safety.py)."""
    text = html_to_text("<p>Rate \x1b[2J 6.32 % \u202eevil</p>")
    assert text == "Rate \x1b[2J 6.32 % \u202eevil"
