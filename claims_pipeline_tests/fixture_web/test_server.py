"""The fixture web itself: virtual hosts, static files, validators and 304s, epochs, robots, faults, the log."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest

from claims_pipeline_demo.fixture_web.server import DEFAULT_SITES_DIR, FixtureWeb


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    root = tmp_path / "sites"
    (root / "a.test" / "docs").mkdir(parents=True)
    (root / "a.test" / "index.html").write_text("<html><body>home of a</body></html>")
    (root / "a.test" / "docs" / "rate.html").write_text("<html><body>rate 5 %</body></html>")
    (root / "a.test" / "docs" / "rate.html.v2").write_text("<html><body>rate 6 %</body></html>")
    (root / "a.test" / "docs" / "rate.html.v4").write_text("<html><body>rate 7 %</body></html>")
    (root / "a.test" / "data.json").write_text('{"rate": 5}')
    (root / "a.test" / "robots.txt").write_text("User-agent: *\nDisallow: /docs/\n")
    (root / "b.test").mkdir()
    (root / "b.test" / "index.html").write_text("<html><body>home of b</body></html>")
    return root


@pytest.fixture()
def served(site: Path, tmp_path: Path):
    log = tmp_path / "requests.jsonl"
    with FixtureWeb(site, log_path=log) as web:
        with httpx.Client(base_url=f"http://127.0.0.1:{web.port}", trust_env=False, timeout=5) as client:
            yield web, client, log


def get(client: httpx.Client, host: str, path: str, **headers: str) -> httpx.Response:
    return client.get(path, headers={"Host": host, **headers})


def test_virtual_hosts_and_index(served):
    _, client, _ = served
    assert "home of a" in get(client, "a.test", "/").text
    assert "home of b" in get(client, "b.test:8080", "/").text  # port in Host is ignored
    assert get(client, "c.test", "/").status_code == 404
    assert get(client, "a.test", "/../b.test/index.html").status_code == 404


def test_content_types_by_extension(served):
    _, client, _ = served
    assert get(client, "a.test", "/data.json").headers["content-type"].startswith("application/json")
    assert get(client, "a.test", "/docs/rate.html").headers["content-type"] == "text/html; charset=utf-8"


def test_conditional_requests_get_real_304s(served):
    _, client, _ = served
    first = get(client, "a.test", "/docs/rate.html")
    etag, lm = first.headers["etag"], first.headers["last-modified"]
    assert get(client, "a.test", "/docs/rate.html", **{"If-None-Match": etag}).status_code == 304
    assert get(client, "a.test", "/docs/rate.html", **{"If-Modified-Since": lm}).status_code == 304
    assert get(client, "a.test", "/docs/rate.html", **{"If-None-Match": '"other"'}).status_code == 200
    # If-None-Match wins over a matching If-Modified-Since
    assert get(client, "a.test", "/docs/rate.html", **{"If-None-Match": '"other"', "If-Modified-Since": lm}).status_code == 200


def test_epoch_variants_change_content_and_validators(served):
    web, client, _ = served
    v1 = get(client, "a.test", "/docs/rate.html")
    web.set_epoch(2)
    v2 = get(client, "a.test", "/docs/rate.html", **{"If-None-Match": v1.headers["etag"]})
    assert v2.status_code == 200 and "rate 6 %" in v2.text and v2.headers["etag"] != v1.headers["etag"]
    web.set_epoch(3)
    assert "rate 6 %" in get(client, "a.test", "/docs/rate.html").text  # highest variant <= epoch
    web.set_epoch(5)
    assert "rate 7 %" in get(client, "a.test", "/docs/rate.html").text
    assert "home of a" in get(client, "a.test", "/").text  # files without variants are unchanged


def test_generated_page_changes_only_when_asked(served):
    web, client, _ = served
    stable1 = get(client, "x.fixture", "/_/page/p").text
    moving1 = get(client, "x.fixture", "/_/page/p?changes=1").text
    web.set_epoch(2)
    assert get(client, "x.fixture", "/_/page/p").text == stable1
    assert get(client, "x.fixture", "/_/page/p?changes=1").text != moving1


def test_robots_from_site_folder_or_404(served):
    _, client, _ = served
    assert "Disallow: /docs/" in get(client, "a.test", "/robots.txt").text
    assert get(client, "b.test", "/robots.txt").status_code == 404


def test_fault_behaviours_on_the_wire(served):
    web, client, _ = served
    r = get(client, "f.fixture", "/_/redirect-refused")
    assert r.status_code == 302 and r.headers["location"].startswith(f"http://127.0.0.2:{web.port}/")
    r = get(client, "f.fixture", "/_/cf-challenge")
    assert r.status_code == 403 and r.headers["cf-mitigated"] == "challenge" and "Just a moment" in r.text
    r = get(client, "f.fixture", "/_/cf-ok")
    assert r.status_code == 200 and "cf-ray" in r.headers and "cf-mitigated" not in r.headers
    with client.stream("GET", "/_/gzip-bomb?mb=5", headers={"Host": "f.fixture"}) as r:
        wire = b"".join(r.iter_raw())
    assert r.headers["content-encoding"] == "gzip" and len(wire) < 50_000
    assert len(gzip.decompress(wire)) > 5_000_000
    assert [get(client, "f.fixture", "/_/flaky?fails=2&code=503").status_code for _ in range(3)] == [503, 503, 200]
    assert get(client, "f.fixture", "/_/flaky?fails=1&code=429&retry_after=7").headers["retry-after"] == "7"
    r = get(client, "f.fixture", "/_/charset/misstated")
    assert "charset=utf-8" in r.headers["content-type"] and b"\x80" in r.content  # cp1252 euro sign
    with pytest.raises(httpx.TransportError):
        get(client, "f.fixture", "/_/reset")
    assert get(client, "f.fixture", "/_/pdf/text").content.startswith(b"%PDF-1.4")
    assert get(client, "f.fixture", "/_/nope").status_code == 404


def test_request_log_in_memory_and_jsonl(served):
    web, client, log = served
    etag = get(client, "a.test", "/").headers["etag"]
    get(client, "a.test", "/", **{"If-None-Match": etag})
    entries = web.requests()
    assert [e["status"] for e in entries] == [200, 304]
    assert entries[1]["if_none_match"] == etag and entries[1]["bytes_sent"] == 0
    assert entries[0]["bytes_sent"] == len("<html><body>home of a</body></html>")
    assert all(e["end"] >= e["start"] and e["host"] == "a.test" for e in entries)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["status"] for x in lines] == [200, 304]


def test_address_map_and_url():
    with FixtureWeb() as web:
        mapping = web.address_map()
        assert mapping["*.fixture"] == f"127.0.0.1:{web.port}"
        assert all(h in mapping for h in web.site_hosts())
        assert web.address_map(["x.test"]) == {"x.test": f"127.0.0.1:{web.port}"}
        assert web.url("tax.gov.xa", "a/b") == "http://tax.gov.xa/a/b"
    assert DEFAULT_SITES_DIR.name == "sites"
