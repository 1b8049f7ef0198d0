"""The extraction pool: same claims, warnings and counts as the serial pass; bad files still warn; small inputs
never fork; a broken pool falls back to serial."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import claims_pipeline.corpus.extract as extract_mod
import claims_pipeline.corpus.pool as pool
from claims_pipeline.corpus.extract import extract_corpus

from .conftest import make_corpus


def _playbook(i: int) -> str:
    """A file with primary, secondary, pointer and multi-link lines; figures vary per file."""
    return (
        f"# Country {i}\n"
        f"## Tax\n"
        f"- VAT **{10 + i % 15} %** since 1 Jan {2000 + i % 25} ([VAT Act](https://tax.gov.xx/vat/{i}))\n"
        f"- Fee €{i},500 under Law No. {i}/2019 (2026-05-27 verified; https://portal.gov.xx/fees?{i})\n"
        f"- Rent cap {i % 9}.5% — verify at [portal](https://rent.gov.xx/{i}) and [news](https://news.example.com/{i})\n"
        f"- Threshold USD {i * 1000:,} [a](https://a.gov.xx/{i}) [b](https://blog.example.org/{i}) see `https://b.gov.xx/{i}`\n"
        f"```\nfenced 5 % https://x.gov.xx/{i}\n```\n"
        f"## Sources\n- 2024 list https://src.gov.xx/{i}\n"
        f"**Last verified**: 2026-0{1 + i % 9}-1{i % 10}\n"
    )


def _write_corpus(root: Path, n: int) -> Path:
    for i in range(n):
        d = root / ("countries" if i % 3 else "shared") / f"c{i:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "playbook.md").write_text(_playbook(i), encoding="utf-8")
    return root


def _dump(ex):
    return [c.to_dict() for c in ex.claims], [str(w) for w in ex.warnings], ex.skipped_pointer_links, ex.files


@pytest.fixture
def small_pool_gate(monkeypatch):
    """Let test-sized corpora use the pool (the real gate only opens for many files and MB)."""
    monkeypatch.setattr(pool, "MIN_FILES", 4)
    monkeypatch.setattr(pool, "MIN_BYTES", 1)


@pytest.mark.parametrize("include_secondary", [False, True])
def test_pool_gives_the_serial_output(tmp_path, small_pool_gate, include_secondary):
    root = _write_corpus(tmp_path, 40)
    serial = extract_corpus(make_corpus(root, workers=1), include_secondary=include_secondary)
    pooled = extract_corpus(make_corpus(root, workers=2), include_secondary=include_secondary)
    assert (serial.workers, pooled.workers) == (1, 2)
    assert len(serial.claims) > 40 and serial.skipped_pointer_links == 40
    assert _dump(pooled) == _dump(serial)
    assert pooled.scopes == serial.scopes


def test_bad_files_in_workers_warn_and_the_others_give_claims(tmp_path, small_pool_gate):
    root = _write_corpus(tmp_path, 12)
    (root / "countries" / "c004" / "playbook.md").write_bytes(b"# x\n\x00binary")
    (root / "countries" / "c008" / "playbook.md").write_bytes(_playbook(8).encode("utf-8").replace(b"Tax", b"T\xe9x"))
    pooled = extract_corpus(make_corpus(root, workers=3))
    assert pooled.workers == 3
    assert [str(w) for w in pooled.warnings] == [
        "countries/c004/playbook.md:2: binary content (NUL byte) in a .md file; file skipped",
        "countries/c008/playbook.md:2: not valid UTF-8 (byte 0xe9); decoded with replacement characters",
    ]
    scopes = {c.scope for c in pooled.claims}
    assert "c004" not in scopes and "c008" in scopes and len(scopes) == 11
    assert _dump(pooled) == _dump(extract_corpus(make_corpus(root, workers=1)))


def test_small_inputs_and_workers_1_never_fork(tmp_path):
    root = _write_corpus(tmp_path, 40)  # 40 files but a few kB: below the real byte gate
    assert extract_corpus(make_corpus(root, workers=0)).workers == 1
    jobs = [("s", p, str(p)) for p in sorted(root.rglob("*.md"))]
    assert pool.pool_size(0, jobs[:3]) == 1 and pool.pool_size(1, jobs) == 1


def _big_jobs(tmp_path):
    root = _write_corpus(tmp_path, pool.MIN_FILES)
    (root / "countries" / "c001" / "playbook.md").write_text(_playbook(1) + "x\n" * (pool.MIN_BYTES // 2))
    return [("s", p, str(p)) for p in sorted(root.rglob("*.md"))]


def test_big_corpus_gate_opens(tmp_path, monkeypatch):
    monkeypatch.setattr(pool.work_pool, "usable_cpus", lambda: 4)  # the gate's decision, whatever this machine has
    jobs = _big_jobs(tmp_path)
    assert pool.pool_size(0, jobs) == 4 and pool.pool_size(2, jobs) == 2 and pool.pool_size(1, jobs) == 1


def test_auto_uses_workers_in_a_process_running_other_threads(tmp_path, monkeypatch):
    """The pool never forks this process (common/work_pool.py), so other threads (a Dagster run's log or event
    threads, the CLI's run thread) no longer force the serial pass."""
    monkeypatch.setattr(pool, "usable_cpus", lambda: 4)
    monkeypatch.setattr(pool.work_pool, "usable_cpus", lambda: 4)
    jobs = _big_jobs(tmp_path)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert threading.active_count() > 1
        assert pool.pool_size(0, jobs) == 4 and pool.pool_size(2, jobs) == 2
    finally:
        stop.set()
        other.join()


def test_chunks_keep_order():
    jobs = [(str(i), Path(f"{i}.md"), f"{i}.md") for i in range(23)]
    chunks = pool.chunked(jobs, 8)
    assert len(chunks) == 8 and [j for c in chunks for j in c] == jobs
    assert max(map(len, chunks)) - min(map(len, chunks)) <= 1


def test_chunks_by_size_keep_order_and_balance_bytes():
    jobs = [(str(i), Path(f"{i}.md"), f"{i}.md") for i in range(40)]
    sizes = [100 if i < 10 else 10 for i in range(40)]  # a few big files first, as a sorted corpus may have
    chunks = pool.chunked(jobs, 4, sizes)
    assert len(chunks) == 4 and [j for c in chunks for j in c] == jobs
    weights = [sum(sizes[int(j[0])] for j in c) for c in chunks]
    assert weights == [400, 300, 300, 300] and [len(c) for c in chunks] == [4, 3, 3, 30]
    for n in (1, 3, 39, 40, 41, 100):  # never an empty chunk, never more chunks than jobs
        chunks = pool.chunked(jobs, n, sizes)
        assert [j for c in chunks for j in c] == jobs and all(chunks) and len(chunks) == min(n, 40)
    assert [j for c in pool.chunked(jobs[:3], 8, [0, 5, 0]) for j in c] == jobs[:3]
    assert pool.chunked(jobs[:5], 2, [0] * 5) == pool.chunked(jobs[:5], 2)  # no sizes known: by count


def test_pool_shares_the_work_with_the_calling_process(tmp_path, small_pool_gate):
    root = _write_corpus(tmp_path, 40)
    jobs = [("s", p, str(p)) for p in sorted(root.rglob("*.md"))]
    parts = pool.run_in_pool(_pids, jobs, None, 2)
    assert [j for part in parts for j in part[0][0][1:]] == [j[2] for j in jobs]  # every file once, in order
    pids = {part[0][0][0] for part in parts}
    assert os.getpid() in pids and len(pids) == 2  # this process and one worker process


def _pids(chunk, opts):
    time.sleep(0.01)
    return [(os.getpid(), *(rel for _, _, rel in chunk))], [], 0


def _die(chunk, caller_pid):
    if os.getpid() != caller_pid:
        os._exit(3)  # a worker killed mid-run
    time.sleep(0.05)  # the calling process extracts chunks too: leave some to the worker
    return [], [], 0


def test_broken_pool_raises_and_extraction_falls_back_to_serial(tmp_path, small_pool_gate, monkeypatch):
    root = _write_corpus(tmp_path, 8)
    jobs = [("s", p, str(p)) for p in sorted(root.rglob("*.md"))]
    with pytest.raises(RuntimeError, match="a worker failed"):
        pool.run_in_pool(_die, jobs, os.getpid(), 2)
    real = pool.run_in_pool
    monkeypatch.setattr(extract_mod, "run_in_pool", lambda fn, jobs, opts, n: real(_die, jobs, os.getpid(), n))
    fallback = extract_corpus(make_corpus(root, workers=2))
    assert fallback.workers == 1
    assert _dump(fallback) == _dump(extract_corpus(make_corpus(root, workers=1)))


def test_records_pickle_round_trip(tmp_path):
    """What a worker sends back: every record type rebuilt equal (fields in __reduce__ order)."""
    import pickle

    ex = extract_corpus(make_corpus(_write_corpus(tmp_path, 3), workers=1), include_secondary=True)
    (tmp_path / "countries" / "c001" / "playbook.md").write_bytes(b"\x00")
    ex.warnings += extract_corpus(make_corpus(tmp_path, workers=1)).warnings
    assert any(c.inline_stamp for c in ex.claims) and any(v.number for c in ex.claims for v in c.values) and ex.warnings
    back = pickle.loads(pickle.dumps((ex.claims, ex.warnings)))
    assert back == (ex.claims, ex.warnings)
    assert [c.to_dict() for c in back[0]] == [c.to_dict() for c in ex.claims]
