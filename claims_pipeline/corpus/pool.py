"""Extracting the files of a big corpus in a small fork-based process pool.

Files are independent (per-file state only; the URL/tier caches are just caches), so contiguous chunks of the
sorted file list are extracted in worker processes and their results concatenated in chunk order: the claims
and warnings come out in exactly the serial order. Small inputs (one Dagster partition, the CLI on a country)
never fork: a pool costs tens of milliseconds to start, more than such inputs take to extract.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from claims_pipeline.corpus.records import ClaimRecord, ExtractWarning

# Below these a pool does not pay for its start-up (measured with benchmarks/bench_extract.py).
MIN_FILES = 32
MIN_BYTES = 4_000_000
MAX_AUTO_WORKERS = 8
CHUNKS_PER_WORKER = 4  # several chunks each, so one slow chunk does not leave the other workers idle

FileJob = tuple[str, Path, str]  # (scope, path, corpus-relative path)
ChunkResult = tuple[list[ClaimRecord], list[ExtractWarning], int]  # claims, warnings, skipped pointer links
ChunkFn = Callable[[Sequence[FileJob], Any], ChunkResult]


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(setting: int, jobs: Sequence[FileJob]) -> int:
    """Processes to use: 1 (serial) unless the corpus is big, forking is available and more than one CPU
    (auto) or an explicit count > 1 is set."""
    if setting == 1 or len(jobs) < MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    workers = min(usable_cpus(), MAX_AUTO_WORKERS) if setting == 0 else setting
    if workers <= 1:
        return 1
    size = 0
    for _, path, _ in jobs:  # stop counting as soon as the corpus is known to be big
        try:
            size += path.stat().st_size
        except OSError:
            continue  # the serial reader reports it
        if size >= MIN_BYTES:
            return min(workers, len(jobs))
    return 1


def chunked(jobs: Sequence[FileJob], n_chunks: int) -> list[Sequence[FileJob]]:
    """Contiguous, near-equal slices in order (concatenating them gives `jobs` back)."""
    n_chunks = max(1, min(n_chunks, len(jobs)))
    step, extra = divmod(len(jobs), n_chunks)
    out, start = [], 0
    for i in range(n_chunks):
        end = start + step + (1 if i < extra else 0)
        out.append(jobs[start:end])
        start = end
    return out


_worker_state: tuple[ChunkFn, Any] | None = None


def _init_worker(fn: ChunkFn, opts: Any) -> None:
    global _worker_state
    _worker_state = (fn, opts)  # inherited through fork: never pickled


def _run_chunk(chunk: Sequence[FileJob]) -> ChunkResult:
    assert _worker_state is not None
    fn, opts = _worker_state
    return fn(chunk, opts)


def run_in_pool(fn: ChunkFn, jobs: Sequence[FileJob], opts: Any, workers: int) -> list[ChunkResult]:
    """fn over chunks of `jobs` in `workers` forked processes, results in chunk order. Raises on any pool
    failure (a worker killed, a result that cannot be pickled); the caller then runs serially."""
    ctx = multiprocessing.get_context("fork")
    chunks = chunked(jobs, workers * CHUNKS_PER_WORKER)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(fn, opts)) as pool:
        return list(pool.map(_run_chunk, chunks))
