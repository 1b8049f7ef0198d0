"""The priors of a big audit in a small fork-based process pool.

A claim's prior depends only on the claim, its page and the settings, so the scopes are split in contiguous
chunks, computed in forked processes and put back in scope order: the same values as the serial loop. The rules
are extraction's (corpus/pool.py): the calling process is one of the workers, each process takes the next chunk
nobody has taken, a small batch (one Dagster partition, the CLI on a country) never forks, and auto never forks
a process that runs other threads (a Dagster run, the webserver): a child forked while another thread holds a
lock can hang. Any pool failure raises; the caller then computes serially.

A stop (claims_pipeline/common/stopping.py) ends the batch within a chunk: the calling process stops at its next scope
(the caller's scope function checks), no worker takes another chunk, and the chunks in flight are waited for
(a forked worker ignores SIGINT: Ctrl-C at a terminal reaches the whole process group, and the calling process
decides).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, cast

from claims_pipeline.corpus.pool import MAX_AUTO_WORKERS, chunked, claim_chunk, usable_cpus

MIN_CLAIMS = 2_000  # below this a pool does not pay for its start-up and the results' pickling
CHUNKS_PER_WORKER = 16

ScopeFn = Callable[[str], Any]  # one scope's result (picklable)

_worker_state: tuple[ScopeFn, list[Sequence[str]], Any] | None = None


def pool_size(setting: int, scopes: int, claims: int) -> int:
    """Processes to use: 1 (serial) unless forking is available and either auto finds a big batch, more than
    one CPU and no other thread in this process, or an explicit count > 1 is set (whatever the batch)."""
    if setting == 1 or scopes < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if setting == 0 and (claims < MIN_CLAIMS or threading.active_count() > 1):
        return 1
    workers = min(usable_cpus(), MAX_AUTO_WORKERS) if setting == 0 else setting
    return max(1, min(workers, scopes))


def _init_worker(fn: ScopeFn, chunks: list[Sequence[str]], next_chunk: Any) -> None:
    global _worker_state
    _worker_state = (fn, chunks, next_chunk)  # inherited through fork: never pickled
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's (Dagster's raises in the middle of a chunk)


def _drain(fn: ScopeFn, chunks: list[Sequence[str]], next_chunk: Any) -> list[tuple[int, list[Any]]]:
    done = []
    while (i := claim_chunk(next_chunk, "priors pool")) < len(chunks):
        done.append((i, [fn(scope) for scope in chunks[i]]))
    return done


def _run_one(_: int) -> tuple[int, list[Any]] | None:
    """One chunk in a forked worker (None once every chunk is taken). One task a chunk, not one a worker, so
    each chunk's priors travel back as soon as they are done and the calling process unpickles them while it
    computes its own chunks (taking fewer of them), instead of all of them after the last chunk, a tail
    of unpickling that grows with the batch (benchmarks/README.md)."""
    assert _worker_state is not None
    fn, chunks, next_chunk = _worker_state
    i = claim_chunk(next_chunk, "priors pool")
    return (i, [fn(scope) for scope in chunks[i]]) if i < len(chunks) else None


def map_scopes(fn: ScopeFn, scopes: Sequence[str], workers: int) -> list[Any]:
    """[fn(scope) for scope in scopes], computed by `workers` processes (this one and `workers - 1` forked)."""
    ctx = multiprocessing.get_context("fork")
    # extraction's chunking, typed for its file jobs: any sequence is cut the same way
    chunks = cast(list[Sequence[str]], chunked(cast(Any, list(scopes)), workers * CHUNKS_PER_WORKER))
    next_chunk = ctx.Value("l", 0)
    results: list[list[Any] | None] = [None] * len(chunks)
    with ProcessPoolExecutor(max_workers=max(1, workers - 1), mp_context=ctx, initializer=_init_worker,
                             initargs=(fn, chunks, next_chunk)) as pool:
        futures = [pool.submit(_run_one, k) for k in range(len(chunks))]
        try:
            for i, result in _drain(fn, chunks, next_chunk):
                results[i] = result
            for future in futures:
                if (done := future.result()) is not None:
                    results[done[0]] = done[1]
        except BaseException:  # a stop, an interrupt, a failure: no worker starts another chunk
            lock = next_chunk.get_lock()
            if lock.acquire(timeout=1.0):  # not held for ever by a worker that died holding it
                next_chunk.value = len(chunks)
                lock.release()
            for future in futures:
                future.cancel()
            raise
    if any(r is None for r in results):  # never return a partial batch
        raise RuntimeError("priors pool lost a chunk")
    return [value for chunk in results for value in chunk]  # type: ignore[union-attr]
