"""The common pool (common/work_pool.py) beside threads: extraction and the priors run with workers=2 from a
thread of a process that runs other threads, as the CLI runs its Dagster job, and both use worker processes
(the pids that computed the chunks are not only this one) and give exactly the serial output."""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import claims_pipeline.corpus.pool as extraction_pool
from claims_pipeline.common import work_pool
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import load_settings
from claims_pipeline.corpus.extract import extract_corpus, list_scopes
from claims_pipeline.priors import PriorRules
from claims_pipeline.steps.corpus import claims_by_scope
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import priors_by_scope
from claims_pipeline.store.cache import PageCache
from claims_pipeline.web.html_text import html_to_text
from claims_pipeline_tests.report.factories import page
from claims_pipeline_tests.scale.test_synthetic_corpus import generator


def _noting_pid(pids: str, fn: Any, chunk: Any, shared: Any) -> Any:
    """fn(chunk, shared), leaving the computing process's pid in the folder `pids`."""
    Path(pids, str(os.getpid())).touch()
    return fn(chunk, shared)


def _in_a_busy_process(work: Any) -> Any:
    """work() in a thread while another thread runs (a Dagster run's event threads): its result or error."""
    idle = threading.Event()
    other = threading.Thread(target=idle.wait, daemon=True)
    other.start()
    out: dict[str, Any] = {}

    def target() -> None:
        assert threading.active_count() >= 3
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    runner = threading.Thread(target=target)
    runner.start()
    runner.join(300)
    idle.set()
    other.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_extraction_and_priors_use_worker_processes_from_a_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "synth"
    generator().generate(out, claims=600, files=40, urls=100, hosts=20, scopes=12)
    base = load_settings(out / "synthetic.yaml").model_copy(update={"home": tmp_path / "home"})
    monkeypatch.setattr(extraction_pool, "MIN_BYTES", 1)  # a test-sized corpus through the real gate's other half
    pids = tmp_path / "pids"
    pids.mkdir()
    real = work_pool.map_chunks
    monkeypatch.setattr(work_pool, "map_chunks",
                        lambda fn, chunks, shared, workers, name="pool": real(partial(_noting_pid, str(pids), fn),
                                                                                chunks, shared, workers, name))

    def extracted(workers: int) -> Any:
        settings = base.model_copy(update={"extraction": base.extraction.model_copy(update={"workers": workers})})
        ex = extract_corpus(corpus_source(settings))
        return ex.workers, [c.to_dict() for c in ex.claims], [str(w) for w in ex.warnings], ex.files

    serial = extracted(1)
    assert not os.listdir(pids)  # serial: the pool was not used
    pooled = _in_a_busy_process(lambda: extracted(2))
    assert pooled[0] == 2 and serial[0] == 1
    assert pooled[1:] == serial[1:] and len(serial[1]) >= 500
    extraction_pids = set(os.listdir(pids))
    assert str(os.getpid()) in extraction_pids and len(extraction_pids) == 2  # this process and a worker

    corpus = corpus_source(base)
    claims = claims_by_scope(corpus, sorted(list_scopes(corpus))).values
    with PageCache.at(base.page_cache) as cache:
        fetched: dict[str, ScopePages] = {}
        for scope, v in claims.items():
            states = {}
            for url in sorted(v.urls()):
                html = out / "sites" / url.split("/", 3)[2] / url.split("/", 3)[3]
                if html.is_file():
                    text = html_to_text(html.read_text(encoding="utf-8"))
                    states[url] = replace(page(url, text), text_hash=cache.blobs.put_text(text), text=None)
            fetched[scope] = ScopePages(states)

        def priors(workers: int) -> Any:
            rules = PriorRules.of(base.priors.model_copy(update={"workers": workers}), base.fetch)
            return priors_by_scope(rules, claims, fetched, cache)

        for name in os.listdir(pids):
            (pids / name).unlink()
        serial_priors = priors(1)
        pooled_priors = _in_a_busy_process(lambda: priors(2))
    assert "pool" not in caplog.text  # neither pool fell back to its serial pass
    assert list(pooled_priors.values) == list(claims) and pooled_priors.values == serial_priors.values
    assert sum(len(v.rows) for v in pooled_priors.values.values()) == len(serial[1])
    priors_pids = set(os.listdir(pids))
    assert str(os.getpid()) in priors_pids and len(priors_pids) == 2
    assert priors_pids - {str(os.getpid())} != set()


def _pid_of(chunk: list[int], shared: None) -> list[tuple[int, int]]:
    return [(i, os.getpid()) for i in chunk]


def test_map_chunks_from_a_thread_keeps_order_and_shares_the_work() -> None:
    chunks = [list(range(i, i + 5)) for i in range(0, 200, 5)]
    parts = _in_a_busy_process(lambda: work_pool.map_chunks(_pid_of, chunks, None, 3))
    assert [i for part in parts for i, _ in part] == list(range(200))  # chunk order, every item once
    procs = {pid for part in parts for _, pid in part}
    assert os.getpid() in procs and len(procs) >= 2
