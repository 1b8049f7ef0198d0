"""Two-column pages of pdftotext -layout output read column by column (web/pdf_columns.py), and everything
else left exactly as it was: tables, justified prose, pages without a gutter."""

from __future__ import annotations

from claims_pipeline.web.pdf_columns import read_columns

LEFT = ["Transfer duty is due on every sale of a", "dwelling at 6.32 % of the declared price,", "payable within one month of the deed."]
RIGHT = ["Buyers of a first home pay a reduced rate", "of 2.5 % on the first €300,000 of the", "price, under Law 2024-1039 of 2 May."]


def side_by_side(left: list[str], right: list[str], at: int = 50) -> list[str]:
    return [f"{a:<{at}}{b}".rstrip() for a, b in zip(left, right)]


def test_two_columns_of_prose_are_read_left_then_right_under_a_title_that_stays_first():
    page = "\n".join(["            Official Journal of the Republic, 3 May 2024", ""] + side_by_side(LEFT, RIGHT))
    lines = [line for line in read_columns(page).splitlines() if line.strip()]
    assert lines == ["            Official Journal of the Republic, 3 May 2024"] + LEFT + RIGHT


def test_each_page_is_judged_on_its_own():
    two = "\n".join(side_by_side(LEFT, RIGHT))
    one = "\n".join(LEFT + RIGHT)
    pages = read_columns(two + "\f" + one).split("\f")
    assert [line for line in pages[0].splitlines() if line] == LEFT + RIGHT
    assert pages[1] == one


def test_a_table_of_labels_and_figures_keeps_its_rows():
    rows = side_by_side(["Residential", "Commercial", "Agricultural land", "Vacant dwellings"],
                        ["0.8 %", "1.2 %", "0.3 %", "€1,500 a year"], at=40)
    page = "\n".join(rows)
    assert read_columns(page) == page


def test_a_table_straddling_the_gutter_between_columns_keeps_its_rows_and_its_place():
    table = side_by_side(["Standard rate", "Reduced rate", "Band A"], ["6.32 %", "2.5 %", "0 %"], at=60)
    page = "\n".join(side_by_side(LEFT, RIGHT) + [""] + table + [""] + side_by_side(RIGHT, LEFT))
    lines = [line for line in read_columns(page).splitlines() if line.strip()]
    assert lines == LEFT + RIGHT + table + RIGHT + LEFT


def test_justified_prose_with_a_few_wide_spaces_is_left_alone():
    prose = [
        "The  annual  levy  is  charged  on  the  cadastral  value  of  each  dwelling  and  is",
        "payable in two instalments. The rate is 0.8 % from 1 January 2025,   replacing the",
        "earlier rate of 0.65 % set by Law 2019-114. Owners who let the dwelling for more than",
        "six months of the year may deduct   the rental tax already paid,   up to €1,200 a year.",
        "Appeals go to the regional tribunal within sixty days of the notice of assessment.",
    ]
    page = "\n".join(prose)
    assert read_columns(page) == page


def test_a_two_column_index_with_short_blocks_is_read_column_wise():
    def entry(name: str, page: int) -> str:  # leaders fill the column, as an index prints them
        return f"{name} " + ". " * ((34 - len(name)) // 2) + str(page)

    left = ["A", entry("Assessment, appeal", 14), entry("Annual levy", 3), "", "B", entry("Buyers, foreign", 7)]
    right = ["L", entry("Licence fee", 9), entry("Levy, annual", 3), "", "T", entry("Transfer duty", 2)]
    page = "\n".join(side_by_side(left, right, at=44))
    lines = [line for line in read_columns(page).splitlines() if line.strip()]
    assert lines == [line for line in left if line] + [r for r in right if r]


def test_text_without_any_wide_gap_is_returned_as_it_is():
    text = "one line\ftwo  lines\nno gutter"
    assert read_columns(text) is text
