"""Chrome that is not chrome: a header/footer inside a section, and ids/classes that only look like a cookie
notice. All three readers (tree walk, streamed reader, bs4 reference) must keep them, and drop real notices."""

from __future__ import annotations

import pytest

from claims_pipeline.web.html_text import _assemble, _streamed_pieces, html_to_text, normalise_text
from claims_pipeline_tests.support.html_text_bs4 import html_to_text_bs4

FILL = "<p>" + "The authority publishes its decisions and the guidance for controllers. " * 3 + "</p>"


def readers(markup: str) -> list[str]:
    """The tree walk's text, the streamed reader's (used past the tree limit), the bs4 reference's."""
    return [html_to_text(markup), normalise_text(_assemble(_streamed_pieces(markup))), html_to_text_bs4(markup)]


KEPT = {
    # the HTML spec: header/footer are the page banner only outside article, aside, main, nav, section
    "section-header": (f"<html><body><div id='content'><section><header><h2>Fine of €300,000 under Law "
                       f"2024-1039</h2></header>{FILL}</section></div></body></html>", "Fine of €300,000"),
    "section-footer": (f"<html><body><div><section>{FILL}<footer><p>Decision adopted on 3 March 2025</p></footer>"
                       "</section></div></body></html>", "adopted on 3 March 2025"),
    # consent words inside content names, not whole banner names
    "gdpr-fines": (f"<html><body><div id='gdpr-fines'><h2>GDPR fines</h2><p>Maximum fine: 4 % of turnover.</p>"
                   f"</div>{FILL}</body></html>", "4 % of turnover"),
    "consentement": (f"<html><body><main><section class='consentement'><p>Amende de 300 000 €.</p></section>"
                     f"{FILL}</main></body></html>", "Amende de 300 000 €"),
    "no-cookie-needed": (f"<html><body><div class='no-cookie-needed'><p>Rate 6.32 %</p></div>{FILL}</body></html>",
                         "Rate 6.32 %"),
    "consent-rules": (f"<html><body><section class='consent-rules'><p>Fine €300,000</p></section>{FILL}"
                      "</body></html>", "Fine €300,000"),
    # a real notice name, but wrapped around the page's <main>: a wrapper, not a notice
    "wrapper-with-main": (f"<html><body><div id='cookie-law-wrapper' class='page'><main><p>Rate 6.32 % since 2025"
                          f"</p>{FILL}</main></div></body></html>", "Rate 6.32 % since 2025"),
    "wrapper-with-table": ("<html><body><div class='cookie-consent'><table><tr><td>Rate</td><td>6.32 %</td></tr>"
                           f"</table>{FILL}</div></body></html>", "Rate | 6.32 %"),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_content_that_looks_like_chrome_is_kept_by_every_reader(name: str) -> None:
    # Cause: header/footer were dropped outside article/main, and /cookie|consent|gdpr|onetrust/ matched any
    # substring of id/class, so sections, "gdpr-fines", "consentement" and page wrappers vanished.
    markup, figure = KEPT[name]
    tree, streamed, bs4 = readers(markup)
    assert figure in tree
    assert tree == streamed == bs4


@pytest.mark.parametrize("attrs", ["id='cookie-law-info-bar'", "class='cookie-banner fixed'", "id='CybotCookiebotDialog'",
                                   "id='onetrust-banner-sdk'", "class='js-cookie-consent'", "id='cookie-notice'",
                                   "class='cookie-policy-banner'"])
def test_real_cookie_notices_and_page_banners_still_dropped(attrs: str) -> None:
    markup = (f"<html><body><header>SITE BANNER</header><div {attrs}><p>We use cookies. Accept?</p>"
              f"<div><p>nested</p></div></div><main>{FILL}<p>Levy 6.32 %</p></main><footer>FOOT</footer></body></html>")
    tree, streamed, bs4 = readers(markup)
    assert "Levy 6.32 %" in tree and "cookies" not in tree and "nested" not in tree
    assert "SITE BANNER" not in tree and "FOOT" not in tree
    assert tree == streamed == bs4
