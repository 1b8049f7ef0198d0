"""Two real processes fetching overlapping URLs from the fixture web into one SQLite cache at the same time."""

import os
import subprocess
import sys
from pathlib import Path

from claims_pipeline.config.settings import load_settings
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.consistency import verify_cache
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import write_config
from claims_pipeline_tests.time_scale import scaled

WORKER = Path(__file__).resolve().parents[2] / "store" / "refresh_worker.py"


def test_two_fetching_processes_with_overlapping_urls_corrupt_nothing(tmp_path):
    with FixtureWeb() as web:
        urls = [web.url(f"h{i % 3}.fixture", f"/_/page/q{i}?size=20000") for i in range(30)]
        sets = {"p1": urls[:20], "p2": urls[10:]}  # 10 URLs fetched by both
        cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml", interval_ms=10, concurrency=2)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
        procs = []
        for run_id, subset in sets.items():
            f = tmp_path / f"{run_id}.txt"
            f.write_text("\n".join(subset), encoding="utf-8")
            procs.append(subprocess.Popen([sys.executable, str(WORKER), str(cfg), run_id, str(f)], stderr=subprocess.PIPE, env=env))
        for p in procs:
            _, err = p.communicate(timeout=scaled(60))
            assert p.returncode == 0, err.decode()

        with PageCache.at(load_settings(cfg).page_cache) as cache:
            report = verify_cache(cache)
            assert report.ok, report.problems
            assert report.rows_checked == 40 and report.temp_files == []
            for run_id, subset in sets.items():
                assert cache.urls_done_in_run(run_id, urls) == set(subset)
            states = cache.states(urls)
            assert len(states) == 30 and all(s.fetch_status == "OK" and s.text for s in states.values())
            for url in urls[10:20]:  # fetched by both: two history rows, same text, no phantom change
                hist = cache.history(url)
                assert {h.run_id for h in hist} == {"p1", "p2"} and len({h.text_hash for h in hist}) == 1
                assert not states[url].content_changed and states[url].changed_at is None
