"""report.html in a browser: at a 1,280 px window its verdict tables keep to the page, and no column of model or
page text shrinks to a few characters (the quote column wrapped at 6–10 characters in a table 1,858 px wide).
Debian's chromium headless, driven by Playwright, on a file written here: no server, no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from claims_pipeline.judge.report import append_verdict_section
from claims_pipeline_tests.judge.test_verdict_report import RUN, _audit_report, suite_verdicts
from claims_pipeline_tests.ui.test_dagster_ui import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser  # drives chromium headless through Playwright

MEASURE = """() => {
  const main = document.querySelector('main').getBoundingClientRect();
  return {main: main.width, page: document.documentElement.scrollWidth,
          tables: [...document.querySelectorAll('section#claim-verdicts table')].map(t => ({
            width: t.getBoundingClientRect().width, right: t.getBoundingClientRect().right - main.right,
            heads: [...t.rows[0].cells].map(c => [c.textContent, c.getBoundingClientRect().width])}))};
}"""


def test_the_verdict_tables_fit_a_1280_px_window_with_readable_columns(tmp_path: Path):
    from playwright.sync_api import sync_playwright

    report = _audit_report(tmp_path)
    assert append_verdict_section(report, suite_verdicts(), RUN) is True
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(report.as_uri())
            seen = page.evaluate(MEASURE)
        finally:
            browser.close()
    assert seen["page"] <= 1280, seen  # no horizontal scrolling of the whole page
    assert len(seen["tables"]) >= 2, seen
    for table in seen["tables"]:
        assert table["width"] <= seen["main"] + 1 and table["right"] <= 1, table  # inside the page's column
    claims = next(t for t in seen["tables"] if t["heads"][0][0] == "verdict")
    widths = dict(claims["heads"])
    # a quote is read at 25 characters a line or more (about 7 px a character at 14 px), the claim likewise
    assert widths["quote"] >= 180 and widths["claim"] >= 160, widths
