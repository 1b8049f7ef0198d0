import os
import time

from claims_pipeline.store.consistency import gc, verify_cache
from claims_pipeline_tests.store.helpers import day, make_cache, ok

URL = "https://a.example/p"


def test_healthy_cache_verifies_clean(tmp_path):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, "one"), now=day(1))
    cache.record(ok(URL, "two"), now=day(2))
    report = verify_cache(cache)
    assert report.ok and report.rows_checked == 2 and report.blobs_checked == 4
    assert report.orphan_blobs == [] and report.temp_files == []


def test_missing_blob_is_a_problem_naming_the_url(tmp_path):
    cache = make_cache(tmp_path)
    state = cache.record(ok(URL, "one"), now=day(1))
    cache.blobs.path(state.raw_hash, "raw").unlink()
    report = verify_cache(cache)
    assert not report.ok and URL in report.problems[0] and "missing raw blob" in report.problems[0]


def test_crash_leftovers_are_listed_and_gc_removes_only_them(tmp_path):
    cache = make_cache(tmp_path)
    state = cache.record(ok(URL, "kept"), now=day(1))
    orphan = cache.blobs.put(b"blob whose row never committed", "raw")  # as if killed before the transaction
    tmp = cache.blobs.path(orphan, "raw").with_name(f".{orphan}.raw.gz.99.beef.tmp")
    tmp.write_bytes(b"half-written")
    report = verify_cache(cache)
    assert report.ok  # leftovers are harmless
    assert report.orphan_blobs == [cache.blobs.path(orphan, "raw")] and report.temp_files == [tmp]

    assert gc(cache) == []  # too young: might belong to a writer that is about to commit
    old = time.time() - 7200
    for p in (cache.blobs.path(orphan, "raw"), tmp):
        os.utime(p, (old, old))
    assert sorted(gc(cache)) == sorted([cache.blobs.path(orphan, "raw"), tmp])
    after = verify_cache(cache)
    assert after.ok and after.orphan_blobs == [] and after.temp_files == []
    assert cache.state(URL).text == "kept" and cache.blobs.exists(state.raw_hash, "raw")


def test_command_reports_and_cleans(tmp_path, capsys):
    from claims_pipeline.store.consistency import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"home: {tmp_path / 'home'}\n", encoding="utf-8")
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.store.cache import PageCache

    with PageCache.at(load_settings(cfg).page_cache) as cache:
        state = cache.record(ok(URL, "kept"), now=day(1))
        cache.blobs.put(b"orphan", "raw")
    assert main(["--config", str(cfg), "--gc", "--min-age", "0"]) == 0
    out = capsys.readouterr().out
    assert "1 fetch rows, 2 blobs verified; 1 orphan blobs" in out and "removed 1 leftover files" in out
    with PageCache.at(load_settings(cfg).page_cache) as cache:
        cache.blobs.path(state.text_hash, "text").unlink()
    assert main(["--config", str(cfg)]) == 1
    assert "PROBLEM:" in capsys.readouterr().out
