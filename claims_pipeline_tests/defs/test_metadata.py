"""UI metadata built from page text and corpus text cannot carry markup into the Dagster UI."""

from __future__ import annotations

import re

from claims_pipeline.defs.metadata import md_list, md_table
from claims_pipeline.report.md_tables import MAX_TABLE_ROWS, md_cell, md_code_block

HOSTILE = "![pixel](http://203.0.113.9/t.png) [click](javascript:alert(1)) <img src=x onerror=alert(1)> **x** | y"


def _unescaped(text: str, token: str) -> bool:
    """True when `token` occurs in text without a backslash before its first character."""
    return re.search(r"(?<!\\)" + re.escape(token), text) is not None


def test_table_cells_escape_links_images_html_and_pipes():
    value = md_table(["claim", "note"], [[HOSTILE, "ok"]]).value
    row = value.splitlines()[2]
    for token in ("![", "[click]", "<img", "**", "](", "| y"):
        assert not _unescaped(row, token), (token, row)
    assert row.count(" | ") == 1  # exactly the one separator between the two cells


def test_cells_are_one_line_and_cut_with_an_ellipsis():
    cell = md_cell("a\nb\tc " + "d" * 200, limit=20)
    assert "\n" not in cell and cell.endswith("…") and len(cell) == 20


def test_long_tables_say_how_many_rows_were_left_out():
    value = md_table(["n"], [[i] for i in range(MAX_TABLE_ROWS + 7)]).value
    assert value.count("\n| ") == MAX_TABLE_ROWS and "and 7 more" in value


def test_a_diff_cannot_close_its_code_block():
    diff = "- old 5 %\n+ ```\n+ ![pixel](http://203.0.113.9/t.png)\n+ ````` five"
    block = md_code_block(diff, "diff")
    fence = block.splitlines()[0][: -len("diff")]
    assert set(fence) == {"`"} and len(fence) == 6  # longer than the longest backtick run (5)
    assert block.endswith("\n" + fence) and block.count(fence) == 2  # the diff's own runs are all shorter
    assert md_code_block("plain").startswith("```\n")


def test_a_diff_shows_terminal_and_bidi_controls_as_replacement_characters():
    block = md_code_block("- 5 %\n+ \x1b]0;PWNED\x07\x1b[2J 6 % \u202egnp.exe", "diff")
    assert "\x1b" not in block and "\x07" not in block and "\u202e" not in block
    assert "\ufffd]0;PWNED\ufffd\ufffd[2J 6 %" in block


def test_list_items_are_code_spans_unless_they_could_break_out():
    value = md_list(["countries/fr/playbook.md", "x`](javascript:alert(1))"]).value
    first, second = value.splitlines()
    assert first == "- `countries/fr/playbook.md`"
    assert not _unescaped(second, "`") and not _unescaped(second, "](")
    assert md_list([]).value == "_(none)_"


def test_url_cells_are_links_and_claims_read_as_prose():
    from claims_pipeline.report.md_tables import Link, prose, where

    value = md_table(["where", "claim", "url"], [[where("countries/zz/sub/b.md", 5),
                                                 prose("Levy **0.8 %** ([source](https://x.gouv.zz/a_b))"),
                                                 Link("https://x.gouv.zz/a_b?q=1|2")],
                                                [where(None, 7), "x", Link("javascript:alert(1)")]]).value
    rows = value.splitlines()
    # the link's label may wrap between the URL's segments (zero-width spaces), never its target
    assert rows[2].replace("\u200b", "") == ("| countries/zz/sub/b.md:5 | Levy 0.8 % \\(source\\) | "
                                            "[https://x.gouv.zz/a\\_b?q=1\\|2](<https://x.gouv.zz/a_b?q=1%7C2>) |")
    assert "\u200b" in rows[2].split("](<")[0] and "\u200b" not in rows[2].split("](<")[1]
    assert rows[3] == "| 7 | x | javascript:alert\\(1\\) |"
