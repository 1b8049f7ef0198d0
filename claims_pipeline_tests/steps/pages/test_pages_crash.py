"""Crash test: a fetch run over 40 fixture pages is SIGKILLed midway (twice, at different points) in a
subprocess; after each kill the cache must be consistent, and the resumed run must not request again any page
that was already stored (proved from the fixture server's request log)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claims_pipeline.config.settings import load_settings
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.consistency import verify_cache
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import write_config
from claims_pipeline_tests.time_scale import scaled

WORKER = Path(__file__).resolve().parents[2] / "store" / "refresh_worker.py"
RUN_ID = "crash-run"
N_URLS, N_HOSTS = 40, 4
KILL_AFTER = (6, 22)  # stored pages at which the two runs are killed


def _start(cfg: Path, urls_file: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    return subprocess.Popen([sys.executable, str(WORKER), str(cfg), RUN_ID, str(urls_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def _page_keys(entries):
    return {(e["host"], e["path"]) for e in entries if e["path"] != "/robots.txt"}


def _key(url: str) -> tuple[str, str]:
    rest = url.split("://", 1)[1]
    host, _, path = rest.partition("/")
    return host, "/" + path


@pytest.mark.slow
def test_killed_run_leaves_a_consistent_cache_and_resume_refetches_nothing_stored(tmp_path):
    with FixtureWeb() as web:
        urls = [web.url(f"h{i % N_HOSTS}.fixture", f"/_/page/p{i}?size=60000") for i in range(N_URLS)]
        urls_file = tmp_path / "urls.txt"
        urls_file.write_text("\n".join(urls), encoding="utf-8")
        cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml", interval_ms=120, concurrency=1)
        cache = PageCache.at(load_settings(cfg).page_cache)

        for threshold in KILL_AFTER:
            stored_before = cache.urls_done_in_run(RUN_ID, urls)
            mark = len(web.requests())
            proc = _start(cfg, urls_file)
            deadline = time.monotonic() + 60
            while len(cache.urls_done_in_run(RUN_ID, urls)) < threshold and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read().decode()
                time.sleep(0.005)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=scaled(10))
            assert proc.returncode == -signal.SIGKILL

            stored = cache.urls_done_in_run(RUN_ID, urls)
            assert threshold <= len(stored) < N_URLS, "the kill should land midway"
            report = verify_cache(cache)  # blobs exist and hash-verify, integrity_check ok, pointers valid
            assert report.ok, report.problems
            assert report.rows_checked == len(stored)  # exactly one row per stored page, none half-written
            refetched = _page_keys(web.requests()[mark:]) & {_key(u) for u in stored_before}
            assert refetched == set(), f"already stored pages fetched again: {sorted(refetched)}"

        stored_before = cache.urls_done_in_run(RUN_ID, urls)
        mark = len(web.requests())
        proc = _start(cfg, urls_file)
        _, err = proc.communicate(timeout=scaled(60))
        assert proc.returncode == 0, err.decode()

        requested = _page_keys(web.requests()[mark:])
        assert requested & {_key(u) for u in stored_before} == set()
        assert requested == {_key(u) for u in urls if u not in stored_before}
        states = cache.states(urls)
        assert len(states) == N_URLS and all(s.fetch_status == "OK" and s.text for s in states.values())
        final = verify_cache(cache)
        assert final.ok and final.rows_checked == N_URLS  # each page stored exactly once across the three runs
        cache.close()
