"""The synthetic corpus generator (claims_pipeline_tests/support/synthetic_corpus.py) writes what it says: the asked numbers of
claims, files, scopes, URLs and hosts, as the extractor reads them, and sites the fixture web serves with each
kind of URL behaving as its kind (a page that changes at epoch 2, 404, 410, a bot wall, a figure absent)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from types import ModuleType

from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import load_settings
from claims_pipeline.corpus.extract import extract_corpus, list_scopes
from claims_pipeline.priors import TOKENS_ABSENT, TOKENS_PRESENT, PriorRules, build_prior
from claims_pipeline.web.html_text import html_to_text
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.report.factories import page
from claims_pipeline_tests.support import synthetic_corpus

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only, whatever the environment


def generator() -> ModuleType:
    return synthetic_corpus


def get(web: FixtureWeb, url: str) -> tuple[int, str]:
    """GET a cited URL from the fixture web (its host in the Host header, as the fetcher sends it)."""
    host, path = url.split("/", 3)[2], "/" + url.split("/", 3)[3]
    req = urllib.request.Request(f"http://127.0.0.1:{web.port}{path}", headers={"Host": host})
    try:
        with NO_PROXY.open(req, timeout=10) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")


def test_the_corpus_has_the_asked_shape_and_its_pages_behave_by_kind(tmp_path: Path) -> None:
    gen = generator()
    out = tmp_path / "synth"
    manifest = gen.generate(out, claims=600, files=60, urls=150, hosts=30, scopes=20, changed=0.1, dead=0.1,
                            walled=0.05, absent=0.05)
    assert json.loads((out / "manifest.json").read_text()) == manifest
    settings = load_settings(out / "synthetic.yaml")
    corpus, rules = corpus_source(settings), PriorRules.of(settings.priors, settings.fetch)
    extraction = extract_corpus(corpus)
    assert len(extraction.claims) == manifest["claims"] == 600 and not extraction.warnings
    assert len({c.source_url for c in extraction.claims}) == manifest["urls"] == 150
    assert len(list_scopes(corpus)) == 20 and sum(1 for _ in (out / "corpus").rglob("*.md")) == 60
    assert {c.source_host for c in extraction.claims} <= set(manifest["all_hosts"])
    assert len(manifest["all_hosts"]) == 30
    hosts_of = [set(r["hosts"]) for r in manifest["regions"]]  # regions share no host
    assert sum(len(h) for h in hosts_of) == len(set().union(*hosts_of)) == 30
    kinds = manifest["urls_by_kind"]
    assert set(kinds) == {"ok", "changed", "dead", "walled", "absent"}

    claims_of = {}
    for c in extraction.claims:
        claims_of.setdefault(c.source_url, []).append(c)
    with FixtureWeb(out / "sites") as web:
        for url in kinds["ok"][:5]:  # a plain page carries every figure of the claims citing it
            status, body = get(web, url)
            text = html_to_text(body)
            assert status == 200
            assert all(build_prior(c, page(url, text), rules).prior == TOKENS_PRESENT for c in claims_of[url])
        changed = kinds["changed"][0]
        before = get(web, changed)[1]
        web.set_epoch(2)
        after = get(web, changed)[1]
        assert before != after and get(web, kinds["ok"][0])[1] == get(web, kinds["ok"][0])[1]
        assert {get(web, u)[0] for u in kinds["dead"]} == {404, 410}
        status, body = get(web, kinds["walled"][0])
        assert status == 403 and "Just a moment" in body
        absent = kinds["absent"][0]
        text = html_to_text(get(web, absent)[1])
        priors = [build_prior(c, page(absent, text), rules).prior for c in claims_of[absent]]
        assert TOKENS_ABSENT in priors
