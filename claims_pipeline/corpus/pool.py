"""Extraction's use of the common pool (common/work_pool.py): when a corpus is big enough to pay for workers,
and its files cut in chunks of near-equal bytes.

Files are independent (per-file state only; the URL/tier caches are just caches), so contiguous chunks of the
sorted file list are extracted in worker processes and their results concatenated in chunk order: the claims
and warnings come out in exactly the serial order. Small inputs (one Dagster partition, the CLI on a country)
never start workers: a pool costs tens of milliseconds to start, more than such inputs take to extract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from claims_pipeline.common import work_pool
from claims_pipeline.common.work_pool import chunked, usable_cpus
from claims_pipeline.corpus.records import ClaimRecord, ExtractWarning

__all__ = ["ChunkResult", "FileJob", "chunked", "pool_size", "run_in_pool", "usable_cpus"]

# Below these a pool does not pay for its start-up (measured with benchmarks/bench_extract.py).
MIN_FILES = 32
MIN_BYTES = 4_000_000
CHUNKS_PER_WORKER = 32  # many small chunks: a worker finishing early takes more, so all end within a chunk

FileJob = tuple[str, Path, str, str]  # (scope, path, corpus-relative path, the scope its claim ids name)
# claims, warnings, skipped pointer links, skipped template figures
ChunkResult = tuple[list[ClaimRecord], list[ExtractWarning], int, int]
ChunkFn = Callable[[Sequence[FileJob], Any], ChunkResult]


def pool_size(setting: int, jobs: Sequence[FileJob]) -> int:
    """Processes to use: 1 (serial) unless the corpus is big (many files and MB) and more than one CPU (auto)
    or an explicit count > 1 is set. Safe in a process running other threads (the pool never forks it)."""
    if setting == 1 or len(jobs) < MIN_FILES:
        return 1
    size = 0
    for _, path, *_ in jobs:  # stop counting as soon as the corpus is known to be big
        try:
            size += path.stat().st_size
        except OSError:
            continue  # the serial reader reports it
        if size >= MIN_BYTES:
            return work_pool.pool_size(setting, True, len(jobs))
    return 1


def _sizes(jobs: Sequence[FileJob]) -> list[int]:
    out = []
    for _, path, *_ in jobs:
        try:
            out.append(path.stat().st_size)
        except OSError:
            out.append(0)  # the reader reports it
    return out


def run_in_pool(fn: ChunkFn, jobs: Sequence[FileJob], opts: Any, workers: int) -> list[ChunkResult]:
    """fn over chunks of `jobs` (near-equal in bytes) in `workers` processes, results in chunk order. `fn` is
    a module-level function (the workers import it). Raises on any pool failure; the caller then runs
    serially."""
    chunks = chunked(jobs, workers * CHUNKS_PER_WORKER, _sizes(jobs))
    return work_pool.map_chunks(fn, chunks, opts, workers, "extraction pool")
