"""Two real processes recording overlapping URLs into one cache at the same time (a SQLite file here; the same
check runs on PostgreSQL in test_postgres)."""

import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from claims_pipeline.store import schema
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.change_confirmation import ChangeState, settle
from claims_pipeline.store.consistency import verify_cache
from claims_pipeline_tests.time_scale import scaled

WORKER = Path(__file__).with_name("record_worker.py")
N_URLS, ROUNDS = 30, 4


def test_two_processes_on_one_cache_corrupt_nothing(tmp_path):
    two_writers_corrupt_nothing(tmp_path, f"sqlite:///{tmp_path / 'index.sqlite'}")


def two_writers_corrupt_nothing(tmp_path: Path, db_url: str) -> None:
    procs = [
        subprocess.Popen([sys.executable, str(WORKER), str(tmp_path), name, str(N_URLS), str(ROUNDS), db_url],
                         stderr=subprocess.PIPE)
        for name in ("w1", "w2")
    ]
    for p in procs:
        _, err = p.communicate(timeout=scaled(90))
        assert p.returncode == 0, err.decode()

    cache = PageCache(db_url, tmp_path / "blobs")
    report = verify_cache(cache)
    assert report.ok, report.problems
    assert report.rows_checked == 2 * N_URLS * ROUNDS  # no lost writes
    assert report.orphan_blobs == [] and report.temp_files == []

    # the two writers really interleaved (not one after the other)
    all_rows = sorted((h.id, h.run_id) for u in range(N_URLS) for h in cache.history(f"https://h{u % 5}.example/p{u}"))
    switches = sum(1 for a, b in zip(all_rows, all_rows[1:]) if a[1] != b[1])
    assert len(all_rows) == 2 * N_URLS * ROUNDS and switches >= 4

    urls = [f"https://h{i % 5}.example/p{i}" for i in range(N_URLS)]
    states = cache.states(urls)
    assert set(states) == set(urls)
    for url in urls:
        history = cache.history(url)
        assert len(history) == 2 * ROUNDS and {h.run_id for h in history} == {"w1", "w2"}
        if int(url.rsplit("p", 1)[1]) % 2 == 0:  # stable pages were also re-recorded as 304s (fast path)
            assert sum(h.fetch_status == "NOT_MODIFIED" and h.reused_text for h in history) >= ROUNDS // 2
        # the stored change state equals a replay of the interleaved history: no read-modify-write was lost
        replay = ChangeState()
        for h in history:
            replay = settle(replay, h.text_hash, None).state  # type: ignore[arg-type]
        with cache.engine.connect() as conn:
            stable = conn.execute(select(schema.urls.c.stable_hash).where(schema.urls.c.url == url)).scalar_one()
        assert stable == replay.stable_hash
        # the state carries the latest fetch's text, marked unconfirmed while it is not the stable one
        latest = next(h.text_hash for h in reversed(history) if h.text_hash)
        assert states[url].text_hash == latest and states[url].text == cache.text(latest)
        assert (states[url].unconfirmed_since is None) == (latest == replay.stable_hash)
        assert states[url].fetched_at == history[-1].fetched_at
