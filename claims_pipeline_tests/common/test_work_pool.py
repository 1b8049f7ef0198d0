"""The common pool (common/work_pool.py) beside threads: extraction and the priors run with workers=2 from a
thread of a process that runs other threads, as the CLI runs its Dagster job, and both use worker processes
(the pids that computed the chunks are not only this one) and give exactly the serial output. No process
outlives a pool, and a signal to a run's process group ends it and its busy workers within seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import psutil
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
from claims_pipeline_tests.support import synthetic_corpus
from claims_pipeline_tests.time_scale import scaled


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
    synthetic_corpus.generate(out, claims=600, files=40, urls=100, hosts=20, scopes=12)
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


def _running_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True)
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_no_process_outlives_the_pool() -> None:
    """Neither the workers nor any helper process (multiprocessing's forkserver and resource tracker were)."""
    chunks = [list(range(i, i + 5)) for i in range(0, 100, 5)]
    parts = _in_a_busy_process(lambda: work_pool.map_chunks(_pid_of, chunks, None, 3))
    assert len({pid for part in parts for _, pid in part}) >= 2
    assert _running_children() == []


def _touch_slowly(chunk: list[int], folder: str) -> list[int]:
    for i in chunk:
        time.sleep(0.2)
        Path(folder, f"{os.getpid()}-{i}").touch()
    return chunk


# A run's process (its own session): the pool in the main thread, a stop by signal as the CLI or a Dagster run
# worker hears it (stopping.signals_heard).
_STOPPED_RUN = """
import sys
from claims_pipeline.common import stopping
from claims_pipeline.common.work_pool import map_chunks
from claims_pipeline_tests.common.test_work_pool import _touch_slowly

with stopping.signals_heard():
    map_chunks(_touch_slowly, [list(range(i, i + 10)) for i in range(0, 600, 10)], sys.argv[1], 3)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_run_ends_it_and_its_busy_workers_within_seconds(tmp_path: Path, sig: int) -> None:
    done = tmp_path / "done"
    done.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.Popen([sys.executable, "-c", _STOPPED_RUN, str(done)], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + scaled(60)
        while len({name.split("-")[0] for name in os.listdir(done)}) < 3:  # this process and both workers at work
            assert run.poll() is None and time.monotonic() < deadline, run.returncode
            time.sleep(0.05)
        os.killpg(run.pid, sig)
        t0 = time.monotonic()
        run.wait(scaled(10))
        took = time.monotonic() - t0
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode in (-sig, 128 + sig), run.returncode
    assert took < scaled(5), took
    after = len(os.listdir(done))
    time.sleep(1.0)  # a worker left at work would go on writing
    assert len(os.listdir(done)) == after < 600
    left = [p.pid for p in psutil.process_iter() if _session(p.pid) == run.pid]
    assert left == []  # nothing of the run's session: no worker, no helper


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None
