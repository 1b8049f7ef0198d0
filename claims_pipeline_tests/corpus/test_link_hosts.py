"""A citation whose host is an IPv6 literal is a claim like any other (issue 35: silently none): whether the page
may be fetched is the fetcher's guard's decision, made later and said in the report."""

from __future__ import annotations

import pytest

from claims_pipeline.corpus.links import find_links
from claims_pipeline_tests.corpus.conftest import extract_lines


@pytest.mark.parametrize(("line", "url", "kind"), [
    ("- VAT **18 %** ([t](http://[2001:db8::1]/x))", "http://[2001:db8::1]/x", "markdown"),
    ("- VAT **18 %** http://[2001:db8::1]:8080/x.", "http://[2001:db8::1]:8080/x", "bare"),
    ("- VAT **18 %** see `https://[::ffff:10.0.0.5]/a`", "https://[::ffff:10.0.0.5]/a", "backticked"),
    ("- VAT **18 %** ([t](http://[fe80::1%25eth0]/))", "http://[fe80::1%25eth0]/", "markdown"),
])
def test_an_ipv6_literal_citation_is_a_claim(line, url, kind):
    out = extract_lines(line)
    assert [(c.source_url, c.link_kind) for c in out.claims] == [(url, kind)] and out.warnings == []


def test_brackets_around_anything_else_are_still_no_host():
    assert extract_lines("- VAT **18 %** ([t](http://[link]/x))").claims == []
    assert [link.url for link in find_links("see [x](https://tax.gov.xx/a) and http://[::1]")[0]] == [
        "https://tax.gov.xx/a", "http://[::1]"]
