"""The priors of many scopes computed by the common pool (common/work_pool.py) are the serial ones, in the same order:
on a small synthetic corpus, its page texts read from a real page cache's blobs, some pages missing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from claims_pipeline.common.work_pool import map_chunks
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import load_settings
from claims_pipeline.corpus.extract import list_scopes
from claims_pipeline.priors import PriorRules
from claims_pipeline.steps.corpus import claims_by_scope
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import pool_size, priors_by_scope
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState
from claims_pipeline.web.html_text import html_to_text
from claims_pipeline_tests.report.factories import page
from claims_pipeline_tests.support import synthetic_corpus


def test_pool_gives_the_serial_priors_in_scope_order(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "synth"
    synthetic_corpus.generate(out, claims=400, files=40, urls=100, hosts=20, scopes=12)
    base = load_settings(out / "synthetic.yaml")
    base = base.model_copy(update={"home": tmp_path / "home"})
    corpus = corpus_source(base)
    claims = claims_by_scope(corpus, sorted(list_scopes(corpus))).values
    with PageCache.at(base.page_cache) as cache:
        fetched: dict[str, dict[str, PageState]] = {}
        for scope, v in claims.items():
            for url in sorted(v.urls()):
                html = out / "sites" / url.split("/", 3)[2] / url.split("/", 3)[3]
                if not html.is_file():
                    continue  # a dead or walled URL: no state, as a page not fetched
                text = html_to_text(html.read_text(encoding="utf-8"))
                state = replace(page(url, text), text_hash=cache.blobs.put_text(text))
                fetched.setdefault(scope, {})[url] = replace(state, text=None)  # as stored: the text in the blobs
        results = {}
        for workers in (1, 2):
            rules = PriorRules.of(base.priors.model_copy(update={"workers": workers}), base.fetch)
            results[workers] = priors_by_scope(rules, claims, {s: ScopePages(p) for s, p in fetched.items()}, cache)
    assert "priors pool" not in caplog.text  # the pool ran: it did not fall back to the serial loop
    serial, pooled = results[1], results[2]
    assert list(serial.values) == list(pooled.values) == list(claims)
    assert serial.values == pooled.values
    assert all(serial.claim_rows(s) == pooled.claim_rows(s) for s in claims)  # what the asset's metadata reads
    assert sum(len(v.rows) for v in pooled.values.values()) == 400
    priors = {p["prior"] for v in pooled.values.values() for p in v.rows}
    assert "TOKENS_PRESENT" in priors and "SOURCE_UNAVAILABLE" in priors  # pages read, and pages missing


def _upper(chunk: list[str], suffix: str) -> list[str]:
    return [s.upper() + suffix for s in chunk]


def test_pool_size_and_map_chunks() -> None:
    assert pool_size(1, 50, 100_000) == 1  # serial asked
    assert pool_size(0, 50, 100) == 1  # too small for auto
    assert pool_size(3, 2, 100) == 2  # an explicit count, at most one process a scope
    scopes = [f"s{i:02d}" for i in range(40)]
    chunks = [scopes[i:i + 3] for i in range(0, 40, 3)]
    assert map_chunks(_upper, chunks, "!", 2) == [[s.upper() + "!" for s in c] for c in chunks]


def test_fewer_gc_passes_raises_the_threshold_for_the_block_only() -> None:
    import gc

    from claims_pipeline.priors.gc_passes import YOUNG_THRESHOLD, fewer_gc_passes

    before = gc.get_threshold()
    with fewer_gc_passes():
        assert gc.get_threshold() == (max(YOUNG_THRESHOLD, before[0]), before[1], before[2])
        with fewer_gc_passes(10):  # nested: never lowered, restored once by the outer block
            assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])
        assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_gc_passes():
        raise RuntimeError("a failed batch")
    assert gc.get_threshold() == before
