"""Edge cases of real servers, played by the fixture web's /_/fault/<name> rows (fixture_web/faults.py) and
fetched in one run through the real fetcher: each gets the status and note a person can act on."""

from __future__ import annotations

import pytest

from claims_pipeline.web.records import FetchStatus
from claims_pipeline_tests.web.conftest import fast_fetch, run_fetch

ROWS = {
    # (fault path, host): a PDF served as application/octet-stream was settled BINARY unread unless its URL
    # path ended in .pdf
    "octet-query": ("/_/fault/octet-pdf?file=loi-2024.pdf", "octet1.fixture"),
    "octet-disposition": ("/_/fault/octet-pdf-disposition", "octet2.fixture"),
    "octet-zip": ("/_/fault/octet-zip", "octet3.fixture"),
    "octet-disposition-junk": ("/_/fault/octet-pdf-disposition-junk", "octet4.fixture"),
    "text-disposition": ("/_/fault/text-pdf-disposition", "octet5.fixture"),
    # empty and partial 2xx bodies were recorded OK (text "", or the first 200 bytes as the page)
    "empty-200": ("/_/fault/empty-200", "empty1.fixture"),
    "s204": ("/_/fault/s204", "empty2.fixture"),
    "s205": ("/_/fault/s205", "empty3.fixture"),
    "s206": ("/_/fault/s206", "partial.fixture"),
    # gzip faults fell to the fetcher's generic handler: "fetcher error error: Error -3 …", no http status
    "gzip-trailing-zeros": ("/_/fault/gzip-trailing-zeros", "gzip1.fixture"),
    "gzip-not-compressed": ("/_/fault/gzip-not-compressed", "gzip2.fixture"),
    # XHTML served as XML was read node by node ("6.⏎32⏎%"), scripts and title included
    "xhtml-as-xml": ("/_/fault/xhtml-as-xml", "xml1.fixture"),
    "xhtml-as-app-xml": ("/_/fault/xhtml-as-app-xml", "xml2.fixture"),
    # a real page whose title starts with a challenge phrase was BLOCKED (the titles matched as substrings)
    "levy-one-more-step": ("/_/fault/levy-one-more-step", "title.fixture"),
    # redirect stubs came back OK with "Redirecting…" as the page's text
    "meta-refresh": ("/_/fault/meta-refresh?to=/_/page/moved", "refresh1.fixture"),
    "meta-refresh-limit": ("/_/fault/meta-refresh?to=/_/chain/5", "refresh2.fixture"),
    "meta-refresh-slow": ("/_/fault/meta-refresh-slow?to=/_/page/moved", "refresh3.fixture"),
    "js-redirect": ("/_/fault/js-redirect?to=/_/page/moved", "refresh4.fixture"),
    "meta-refresh-robots": ("/_/fault/meta-refresh?to=/private/secret.html", "polite.fixture"),
    # 401 / 407 / 451 were DEAD, as if the page were gone
    "s401": ("/_/status/401", "auth.fixture"),
    "s407": ("/_/status/407", "proxy.fixture"),
    "s451": ("/_/status/451", "legal.fixture"),
    "s404": ("/_/status/404", "gone.fixture"),
}


@pytest.fixture(scope="module")
def edge_run(web):
    settings = fast_fetch(web)
    settings = settings.model_copy(update={"fetch": settings.fetch.model_copy(update={
        "address_map": {**settings.fetch.address_map, **web.address_map([h for _, h in ROWS.values()])}})})
    results = run_fetch(settings, [web.url(h, p) for p, h in ROWS.values()])
    by_url = {r.url: r for r in results}
    return {name: by_url[web.url(h, p)] for name, (p, h) in ROWS.items()}


@pytest.mark.parametrize("name", ["octet-query", "octet-disposition"])
def test_pdf_served_as_octet_stream_is_read(edge_run, name):
    r = edge_run[name]
    assert r.status == FetchStatus.OK, (r.status, r.note)
    assert r.content_kind.startswith("pdf") and "Stamp duty schedule 2026" in r.text
    assert "served as application/octet-stream but is a PDF" in r.note


def test_octet_stream_that_is_no_pdf_stays_binary(edge_run):
    r = edge_run["octet-zip"]
    assert r.status == FetchStatus.BINARY and r.text is None
    assert "no %PDF- in its first 1024 bytes, rest not downloaded" in r.note


@pytest.mark.parametrize(("name", "http", "note"), [
    ("empty-200", 200, "http 200: empty body"),
    ("s204", 204, "http 204: empty body"),
    ("s205", 205, "http 205: empty body"),
    ("s206", 206, "http 206 partial content not requested"),
])
def test_empty_or_partial_2xx_is_never_the_pages_text(edge_run, name, http, note):
    r = edge_run[name]
    assert (r.status, r.http_status, r.note) == (FetchStatus.UNAVAILABLE, http, note)
    assert r.text is None


def test_gzip_with_trailing_padding_is_read_like_a_browser(edge_run):
    r = edge_run["gzip-trailing-zeros"]
    assert r.status == FetchStatus.OK, r.note
    assert "duties" in r.text and "%" in r.text


def test_body_labelled_gzip_but_not_compressed_names_the_cause(edge_run, web):
    r = edge_run["gzip-not-compressed"]
    assert r.status == FetchStatus.UNAVAILABLE
    assert r.note.startswith("undecodable gzip body: ") and "fetcher error" not in r.note
    assert r.http_status == 200 and r.final_url == web.url("gzip2.fixture", "/_/fault/gzip-not-compressed")


@pytest.mark.parametrize(("name", "media"), [("xhtml-as-xml", "text/xml"), ("xhtml-as-app-xml", "application/xml")])
def test_xhtml_served_as_xml_is_read_as_a_page(edge_run, name, media):
    r = edge_run[name]
    assert r.status == FetchStatus.OK and r.content_kind == "html"
    lines = r.text.splitlines()
    assert lines[0] == "The reduced rate is 6.32 % from 2025."  # one line: not one per text node
    assert len(lines) == 2 and "var x" not in r.text and "Rates" not in r.text  # no script, style or title
    assert r.note == f"served as {media} but is XHTML"


def test_real_page_titled_like_a_challenge_is_read(edge_run):
    r = edge_run["levy-one-more-step"]
    assert r.status == FetchStatus.OK, r.note
    assert "levy-one-more-step" in r.text


@pytest.mark.parametrize(("title", "wall"), [
    ("Just a moment...", True), ("Attention Required! | Cloudflare", True), ("One more step", True),
    ("just a moment… – Ministry of Finance", True),
    ("One more step: confirm your 2025 levy before 31 March", False),
    ("Just a moment of history: the 1848 tax", False), ("Attention required for 2025 filings", False),
    ("Levy rates | One more step", False),
])
def test_challenge_title_is_the_phrase_plus_at_most_a_site_name(title, wall):
    from claims_pipeline.config.settings import settings_from_dict
    from claims_pipeline.web.botwall import challenge_title

    titles = settings_from_dict({}).fetch.challenge_titles
    assert (challenge_title(f"<title>{title}</title>".encode(), titles) is not None) is wall


def test_meta_refresh_stub_is_followed_like_a_redirect(edge_run, web):
    r = edge_run["meta-refresh"]
    assert r.status == FetchStatus.OK, r.note
    assert r.final_url == web.url("refresh1.fixture", "/_/page/moved")
    assert "The transfer duty on moved" in r.text and "Redirecting" not in r.text
    assert r.note == f"via meta refresh from {web.url('refresh1.fixture', '/_/fault/meta-refresh?to=/_/page/moved')}"


def test_meta_refresh_hops_pass_robots_and_count_against_the_redirect_limit(edge_run):
    r = edge_run["meta-refresh-robots"]
    assert r.status == FetchStatus.ROBOTS and "robots.txt Disallow" in r.note
    r = edge_run["meta-refresh-limit"]  # the refresh, then 5 redirects (alone, 5 are allowed)
    assert r.status == FetchStatus.UNAVAILABLE and r.note.startswith("more than 5 redirects")


def test_slow_meta_refresh_is_a_page_not_a_move(edge_run):
    r = edge_run["meta-refresh-slow"]  # 60 s: an auto-reload, the page stays (thin static page: OK)
    assert r.status == FetchStatus.OK and "Redirecting" in r.text


def test_script_redirect_stub_is_unreadable_naming_the_target(edge_run, web):
    r = edge_run["js-redirect"]
    assert r.status == FetchStatus.UNREADABLE and r.text is None
    assert r.note == f"redirect stub: its script sends the browser to {web.url('refresh4.fixture', '/_/page/moved')}; " \
                     "not followed"


@pytest.mark.parametrize(("meta", "target"), [
    ("<meta http-equiv='refresh' content='0; url=/new'>", "/new"),
    ('<meta content="0;URL=\'https://x.test/new\'" http-equiv="Refresh">', "https://x.test/new"),
    ("<meta http-equiv=refresh content='5, url=/new'>", "/new"),
    ("<meta http-equiv='refresh' content='0; /new'>", "/new"),
    ("<meta http-equiv='refresh' content='11; url=/new'>", None),  # over 10 s: an auto-reload
    ("<meta http-equiv='refresh' content='30'>", None),  # reload in place
    ("<meta name='refresh' content='0; url=/new'>", None),
])
def test_meta_refresh_forms(meta, target):
    from claims_pipeline.web.stub import refresh_target

    assert refresh_target(f"<html><head>{meta}</head><body>Moved.</body></html>".encode(), "Moved.") == target
    assert refresh_target(f"<html><head>{meta}</head></html>".encode(), "x" * 1000) is None  # not thin: a page


@pytest.mark.parametrize("name, status, note", [
    ("s401", FetchStatus.BLOCKED, "http 401: login required"),
    ("s407", FetchStatus.UNAVAILABLE, "http 407: proxy authentication required"),
    ("s451", FetchStatus.BLOCKED, "http 451: unavailable for legal reasons"),
    ("s404", FetchStatus.DEAD, "http 404"),
])
def test_4xx_that_do_not_say_gone_are_not_dead(edge_run, name, status, note):
    r = edge_run[name]
    assert (r.status, r.http_status) == (status, int(name[1:])) and r.note.startswith(note), (r.status, r.note)


def test_a_pdf_named_by_content_disposition_is_read_past_junk_before_its_header(edge_run):
    r = edge_run["octet-disposition-junk"]
    assert r.status == FetchStatus.OK and r.content_kind.startswith("pdf"), (r.status, r.note)
    assert "Stamp duty schedule 2026" in r.text and "bytes before the %PDF- header" in r.note


def test_a_text_body_named_pdf_stays_text(edge_run):
    r = edge_run["text-disposition"]
    assert r.status == FetchStatus.OK and "5.8 %" in r.text, (r.status, r.note)
