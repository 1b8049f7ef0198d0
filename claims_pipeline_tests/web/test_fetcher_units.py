"""Conditional re-fetches, TLS verification against a real self-signed server, and the small helpers."""

from __future__ import annotations

import gzip
import http.server
import ssl
import subprocess
import threading
import time
import zlib
from email.utils import formatdate

import pytest

from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.web.body import _Inflater
from claims_pipeline.web.fetcher import parse_retry_after
from claims_pipeline.web.politeness import domain_matcher, host_matches, policy_for
from claims_pipeline.web.records import FetchStatus
from claims_pipeline_tests.time_scale import scaled
from claims_pipeline_tests.web.conftest import run_fetch


def test_validators_give_not_modified_and_changes_give_ok(web, settings_for):
    settings = settings_for()
    url = web.url("cond.fixture", "/_/page/c?changes=1")
    [first] = run_fetch(settings, [url])
    assert first.status == FetchStatus.OK and first.etag and first.last_modified
    web.clear_log()
    [again] = run_fetch(settings, [url], validators={url: (first.etag, first.last_modified)})
    assert again.status == FetchStatus.NOT_MODIFIED and again.raw is None and again.etag == first.etag
    page_hits = [e for e in web.requests() if e["path"].startswith("/_/page")]
    assert page_hits[0]["if_none_match"] == first.etag and page_hits[0]["bytes_sent"] == 0
    web.set_epoch(2)
    try:
        [changed] = run_fetch(settings, [url], validators={url: (first.etag, first.last_modified)})
    finally:
        web.set_epoch(1)
    assert changed.status == FetchStatus.OK and changed.etag != first.etag and changed.text != first.text


def test_one_bad_url_never_stops_the_others(web, settings_for):
    urls = ["not a url", "http://", web.url("good.fixture", "/_/page/g"), "mailto:x@y"]
    results = {r.url: r for r in run_fetch(settings_for(), urls)}
    assert len(results) == 4
    assert results[web.url("good.fixture", "/_/page/g")].status == FetchStatus.OK
    assert results["not a url"].status == FetchStatus.DEAD and "not an http(s) URL" in results["not a url"].note


def test_unmapped_host_fails_as_a_connection_error_naming_it(settings_for):
    [r] = run_fetch(settings_for(max_retries=1, robots_enabled=False), ["http://nowhere.invalid/x"])
    assert r.status == FetchStatus.UNAVAILABLE and "DNS lookup failed for nowhere.invalid" in r.note


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """A real HTTPS server on 127.0.0.1 with a self-signed certificate for tls.fixture."""
    d = tmp_path_factory.mktemp("tls")
    key, cert = d / "key.pem", d / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=tls.fixture", "-addext", "subjectAltName=DNS:tls.fixture"],
                   check=True, capture_output=True, timeout=scaled(30))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html><body>" + b"secure page with 5.5 % figures. " * 20 + b"</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield server.server_address[1]
    server.shutdown()


def test_tls_certificates_are_verified(tls_server, settings_for):
    port = tls_server
    base = dict(address_map={"tls.fixture": f"127.0.0.1:{port}"}, robots_enabled=False, max_retries=1)
    [bad] = run_fetch(settings_for(**base), ["https://tls.fixture/"])
    assert bad.status == FetchStatus.UNAVAILABLE and "CERTIFICATE_VERIFY_FAILED" in bad.note
    [ok] = run_fetch(settings_for(**base, verify_tls=False), ["https://tls.fixture/"])
    assert ok.status == FetchStatus.OK  # the explicit opt-out works, and SNI/Host still name tls.fixture


def test_policy_resolution():
    s = settings_from_dict({"fetch": {"per_host_overrides": {"europa.eu": {"concurrency": 1, "interval_ms": 9000},
                                                             "eur-lex.europa.eu": {"concurrency": 1, "interval_ms": 10000}}}})
    assert policy_for("eur-lex.europa.eu", s.fetch).interval_ms == 10000  # longest match wins
    assert policy_for("ec.europa.eu", s.fetch).interval_ms == 9000
    assert policy_for("www.impots.gouv.fr", s.fetch) == s.fetch.gov_host
    # one rule with primary-source gating (urls.is_gov_host): a bare gov.ky is government (the earlier verifier missed
    # it), irs.gov.com is not (anyone can register it)
    assert policy_for("gov.ky", s.fetch) == s.fetch.gov_host
    assert policy_for("irs.gov.com", s.fetch) == s.fetch.default_host
    assert policy_for("example.com", s.fetch) == s.fetch.default_host
    assert host_matches("www.linkedin.com", ["linkedin.com"]) and not host_matches("notlinkedin.com", ["linkedin.com"])
    # the precompiled form the fetcher uses on every hop (host_matches is built on it): written forms of a
    # domain are normalised, matches are whole labels
    matches = domain_matcher(["linkedin.com", "*.Example.ORG.", "", ".gov.xx"])
    expected = {"www.linkedin.com": True, "linkedin.com": True, "notlinkedin.com": False, "a.example.org": True,
                "example.org.": True, "EXAMPLE.org": True, "xexample.org": False, "tax.gov.xx": True,
                "gov.xx": True, "gov.xxx": False, "": False, "com": False}
    assert {host: matches(host) for host in expected} == expected
    assert not domain_matcher([])("anything.com")


def test_retry_after_forms():
    assert parse_retry_after("7") == 7.0
    future = formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after(future) <= 31
    assert parse_retry_after(formatdate(time.time() - 30, usegmt=True)) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


@pytest.mark.parametrize("encode,encoding", [(gzip.compress, "gzip"), (zlib.compress, "deflate"),
                                             (lambda b: zlib.compress(b)[2:-4], "deflate")])
def test_inflater_caps_output(encode, encoding):
    data = encode(b"a" * 100_000)
    out = _Inflater(encoding).feed(data, 1000)
    assert len(out) == 1001  # room + 1: the caller can tell "over the cap" without inflating the rest
    assert _Inflater(encoding).feed(data, 200_000) == b"a" * 100_000


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_the_fetcher_runs_on_either_event_loop(web, settings_for, loop):
    import asyncio

    seen = []
    settings = settings_for(event_loop=loop)
    url = web.url("loops.fixture", "/_/page/l")
    from claims_pipeline.web import fetcher as fetcher_mod

    [first] = fetcher_mod.fetch_urls(settings.fetch, settings.pdf, [url], on_result=lambda r: seen.append(type(asyncio.get_running_loop())))
    [again] = fetcher_mod.fetch_urls(settings.fetch, settings.pdf, [url], validators={url: (first.etag, first.last_modified)})
    assert first.status == FetchStatus.OK and again.status == FetchStatus.NOT_MODIFIED
    assert seen[0].__module__.split(".")[0] == ("uvloop" if loop == "uvloop" else "asyncio")


def test_event_loop_setting_is_validated_and_a_missing_uvloop_is_named(monkeypatch):
    import sys

    from claims_pipeline.config.settings import ConfigError
    from claims_pipeline.web.event_loop import loop_factory

    with pytest.raises(ConfigError, match="fetch.event_loop"):
        settings_from_dict({"fetch": {"event_loop": "trio"}})
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    with pytest.raises(RuntimeError, match="uvloop is not installed"):
        loop_factory("uvloop")
    import asyncio

    assert loop_factory("auto") is asyncio.new_event_loop


def test_a_cookie_set_on_a_redirect_is_sent_back(web, settings_for):
    """Sites that set a cookie and redirect to check it would otherwise read as a redirect loop."""
    [r] = run_fetch(settings_for(robots_enabled=False), [web.url("cookies.fixture", "/_/cookie-gate")])
    assert r.status == FetchStatus.OK and r.http_status == 200, r.note
    hits = [e["status"] for e in web.requests() if e["path"] == "/_/cookie-gate" and e["host"] == "cookies.fixture"]
    assert hits == [302, 200]
    # a gate that never opens is still a loop, after one visit with the cookie
    [loop] = run_fetch(settings_for(robots_enabled=False), [web.url("cookies.fixture", "/_/cookie-gate?never=1")])
    assert loop.status == FetchStatus.UNAVAILABLE and "redirect loop" in loop.note
    assert sum(e["path"] == "/_/cookie-gate?never=1" for e in web.requests()) == 2  # first visit + one with the cookie
