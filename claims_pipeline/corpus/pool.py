"""Extracting the files of a big corpus in a small fork-based process pool.

Files are independent (per-file state only; the URL/tier caches are just caches), so contiguous chunks of the
sorted file list are extracted in worker processes and their results concatenated in chunk order: the claims
and warnings come out in exactly the serial order. The calling process is one of the `workers`: it forks one
process fewer and extracts chunks itself (its results need no pickling). Small inputs (one Dagster partition,
the CLI on a country) never fork: a pool costs tens of milliseconds to start, more than such inputs take to
extract.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from itertools import accumulate
from pathlib import Path
from typing import Any

from claims_pipeline.corpus.records import ClaimRecord, ExtractWarning

# Below these a pool does not pay for its start-up (measured with benchmarks/bench_extract.py).
MIN_FILES = 32
MIN_BYTES = 4_000_000
MAX_AUTO_WORKERS = 8
LOCK_TIMEOUT_S = 30.0
CHUNKS_PER_WORKER = 32  # many small chunks: a worker finishing early takes more, so all end within a chunk

FileJob = tuple[str, Path, str, str]  # (scope, path, corpus-relative path, the scope its claim ids name)
# claims, warnings, skipped pointer links, skipped template figures
ChunkResult = tuple[list[ClaimRecord], list[ExtractWarning], int, int]
ChunkFn = Callable[[Sequence[FileJob], Any], ChunkResult]


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(setting: int, jobs: Sequence[FileJob]) -> int:
    """Processes to use: 1 (serial) unless the corpus is big, forking is available and more than one CPU
    (auto) or an explicit count > 1 is set. Auto never forks a process that runs other threads (a Dagster
    run, the webserver): a child forked while another thread holds a lock (imports, logging) can hang."""
    if setting == 1 or len(jobs) < MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if setting == 0 and threading.active_count() > 1:
        return 1
    workers = min(usable_cpus(), MAX_AUTO_WORKERS) if setting == 0 else setting
    if workers <= 1:
        return 1
    size = 0
    for _, path, *_ in jobs:  # stop counting as soon as the corpus is known to be big
        try:
            size += path.stat().st_size
        except OSError:
            continue  # the serial reader reports it
        if size >= MIN_BYTES:
            return min(workers, len(jobs))
    return 1


def chunked(jobs: Sequence[FileJob], n_chunks: int, sizes: Sequence[int] | None = None) -> list[Sequence[FileJob]]:
    """Contiguous slices in order (concatenating them gives `jobs` back): near-equal in total `sizes` (file
    bytes, a fair guess at extraction cost) when given, else near-equal in length."""
    n_chunks = max(1, min(n_chunks, len(jobs)))
    if sizes is not None and sum(sizes) > 0:
        prefix = list(accumulate(sizes))
        out, lo = [], 0
        for k in range(1, n_chunks):
            # end after the first job where the running total reaches k/n of all bytes; every chunk non-empty
            end = bisect_left(prefix, prefix[-1] * k / n_chunks) + 1
            end = min(max(end, lo + 1), len(jobs) - (n_chunks - k))
            out.append(jobs[lo:end])
            lo = end
        out.append(jobs[lo:])
        return out
    step, extra = divmod(len(jobs), n_chunks)
    out, start = [], 0
    for i in range(n_chunks):
        end = start + step + (1 if i < extra else 0)
        out.append(jobs[start:end])
        start = end
    return out


def _sizes(jobs: Sequence[FileJob]) -> list[int]:
    out = []
    for _, path, *_ in jobs:
        try:
            out.append(path.stat().st_size)
        except OSError:
            out.append(0)  # the reader reports it
    return out


_worker_state: tuple[ChunkFn, Any, list[Sequence[FileJob]], Any] | None = None


def _init_worker(fn: ChunkFn, opts: Any, chunks: list[Sequence[FileJob]], next_chunk: Any) -> None:
    global _worker_state
    _worker_state = (fn, opts, chunks, next_chunk)  # inherited through fork: never pickled


def claim_chunk(next_chunk: Any, pool: str = "extraction pool") -> int:
    """The next chunk index (shared by all the processes; the priors' pool uses it too). The lock is held for
    microseconds: failing to get it in LOCK_TIMEOUT_S means a process died holding it, and raising sends the
    caller to the serial pass."""
    lock = next_chunk.get_lock()
    if not lock.acquire(timeout=LOCK_TIMEOUT_S):
        raise RuntimeError(f"{pool}: chunk counter lock never released")
    try:
        i = next_chunk.value
        next_chunk.value = i + 1
    finally:
        lock.release()
    return i


def _drain(fn: ChunkFn, opts: Any, chunks: list[Sequence[FileJob]], next_chunk: Any) -> list[tuple[int, ChunkResult]]:
    """Claim the next chunk not yet taken by any process and extract it, until none is left."""
    done = []
    while (i := claim_chunk(next_chunk)) < len(chunks):
        done.append((i, fn(chunks[i], opts)))
    return done


def _run_worker(_: int) -> list[tuple[int, ChunkResult]]:
    assert _worker_state is not None
    return _drain(*_worker_state)


def run_in_pool(fn: ChunkFn, jobs: Sequence[FileJob], opts: Any, workers: int) -> list[ChunkResult]:
    """fn over chunks of `jobs` in `workers` processes (this one and `workers - 1` forked ones), results in
    chunk order. Each process takes the next chunk nobody has taken (a shared counter), so all finish within
    about one small chunk of each other. Raises on any pool failure (a worker killed, a result that cannot be
    pickled); the caller then runs serially."""
    ctx = multiprocessing.get_context("fork")
    chunks = chunked(jobs, workers * CHUNKS_PER_WORKER, _sizes(jobs))
    next_chunk = ctx.Value("l", 0)
    results: list[ChunkResult | None] = [None] * len(chunks)
    with ProcessPoolExecutor(max_workers=max(1, workers - 1), mp_context=ctx, initializer=_init_worker,
                             initargs=(fn, opts, chunks, next_chunk)) as pool:
        futures = [pool.submit(_run_worker, k) for k in range(max(1, workers - 1))]
        for i, result in _drain(fn, opts, chunks, next_chunk):
            results[i] = result
        for future in futures:
            for i, result in future.result():
                results[i] = result
    if any(r is None for r in results):  # a chunk claimed by no one cannot happen; never return a partial run
        raise RuntimeError("extraction pool lost a chunk")
    return results  # type: ignore[return-value]
