"""The one process pool of the core: extraction's files and the priors' scopes, split in contiguous chunks,
computed by this process and `workers - 1` worker processes, results put back in chunk order (exactly the
serial output).

Safe beside threads: workers start from multiprocessing's forkserver (spawn where there is none), never by
forking the calling process, so a Dagster run (its event threads), the CLI (its run in a worker thread) or the
webserver can use it: a child forked while another thread held a lock (imports, logging) could hang. A worker
imports only what unpickling the chunk function needs (the pure core; the forkserver preloads the function's
module once), gets `shared` once at its start and each chunk's data with the chunk.

The calling process is one of the workers: it keeps each worker process a few chunks ahead and computes the
others itself (its results need no pickling). Many small chunks, so all end within about one chunk.

A stop (common/stopping.py) reaches the workers: a pipe they watch (closed on a stop, or when this process dies)
asks the same stop in each of them (the priors check it per scope), no chunk is handed out any more, and a
worker still busy after STOP_GRACE_S is ended. Workers ignore SIGINT (Ctrl-C reaches the whole process group; the calling process decides). Any pool
failure raises; the callers then compute serially.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import accumulate
from typing import Any, TypeVar

from claims_pipeline.common import stopping

MAX_AUTO_WORKERS = 8
AHEAD_PER_WORKER = 2  # chunks queued per worker process: one running, one ready when it ends
STOP_GRACE_S = 2.0  # a worker still at a chunk this long after a stop is ended
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"

C = TypeVar("C")
S = TypeVar("S")
R = TypeVar("R")


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(setting: int, big: bool, most: int) -> int:
    """Processes to use: `setting` when > 1 (the user's call), serial when 1, and for auto (0) the CPUs when
    the batch is `big` enough to pay for starting workers; never more than `most` (one item a process)."""
    if setting == 1 or (setting == 0 and not big):
        return 1
    workers = min(usable_cpus(), MAX_AUTO_WORKERS) if setting == 0 else setting
    return max(1, min(workers, most))


def chunked(items: Sequence[C], n_chunks: int, sizes: Sequence[int] | None = None) -> list[Sequence[C]]:
    """Contiguous slices in order (concatenating them gives `items` back): near-equal in total `sizes` (a fair
    guess at each item's cost) when given, else near-equal in length."""
    n_chunks = max(1, min(n_chunks, len(items)))
    out: list[Sequence[C]] = []
    if sizes is not None and sum(sizes) > 0:
        prefix = list(accumulate(sizes))
        lo = 0
        for k in range(1, n_chunks):
            # end after the first item where the running total reaches k/n of the whole; every chunk non-empty
            end = bisect_left(prefix, prefix[-1] * k / n_chunks) + 1
            end = min(max(end, lo + 1), len(items) - (n_chunks - k))
            out.append(items[lo:end])
            lo = end
        out.append(items[lo:])
        return out
    step, extra = divmod(len(items), n_chunks)
    start = 0
    for i in range(n_chunks):
        end = start + step + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


_worker: tuple[Callable[[Any, Any], Any], Any, Any] | None = None


def _init_worker(fn: Callable[[Any, Any], Any], shared: Any, stop: Any) -> None:
    global _worker
    _worker = (fn, shared, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def relay() -> None:  # the calling process's stop (or its end), asked here too: the core's checks hear it
        try:
            stop.recv_bytes()
        except (EOFError, OSError):
            pass
        stopping.request("stopped by the calling process")

    threading.Thread(target=relay, name="pool-stop", daemon=True).start()


def _run_chunk(chunk: Any) -> Any:
    assert _worker is not None
    fn, shared, _ = _worker
    stopping.check()
    return fn(chunk, shared)


def map_chunks(fn: Callable[[C, S], R], chunks: Sequence[C], shared: S, workers: int,
               name: str = "pool") -> list[R]:
    """[fn(chunk, shared) for chunk in chunks], computed by this process and `workers - 1` worker processes.
    `fn` must be a module-level function (workers import it by name); `shared` and each chunk are pickled."""
    global _users
    with _helpers_lock:
        if _users == 0:
            _started.clear()
            _started.update(h for h in ("forkserver", "tracker") if not _helper_running(h))
        _users += 1
    try:
        return _map_chunks(fn, chunks, shared, workers, name)
    finally:
        with _helpers_lock:
            _users -= 1
            if _users == 0:
                _stop_helpers()


def _map_chunks(fn: Callable[[C, S], R], chunks: Sequence[C], shared: S, workers: int, name: str) -> list[R]:
    ctx = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        ctx.set_forkserver_preload([getattr(fn, "__module__", None) or __name__])  # used when the server starts
    n_procs = max(1, workers - 1)
    # the stop reaches the workers as the end of a pipe only this process writes to (not an Event: setting one
    # waits for every process waiting on it, for ever if one of them died)
    stop, stop_writer = ctx.Pipe(duplex=False)
    results: list[Any] = [None] * len(chunks)
    done = [False] * len(chunks)
    futures: dict[Future[Any], int] = {}
    pool = ProcessPoolExecutor(max_workers=n_procs, mp_context=ctx, initializer=_init_worker,
                               initargs=(fn, shared, stop))
    try:
        with stopping.on_request(stop_writer.close):
            i = 0
            while i < len(chunks):
                stopping.check()
                while i < len(chunks) and sum(not f.done() for f in futures) < n_procs * AHEAD_PER_WORKER:
                    futures[pool.submit(_run_chunk, chunks[i])] = i
                    i += 1
                if i < len(chunks):  # the workers have enough: this process takes the next chunk
                    results[i], done[i] = fn(chunks[i], shared), True
                    i += 1
            for future in futures:
                j = futures[future]
                results[j], done[j] = future.result(), True
    except BaseException:  # a stop, an interrupt, a failure: no chunk more, workers told and ended
        stop_writer.close()
        _end(pool)
        del pool  # its queues gone before the resource tracker stops (not kept by the traceback)
        raise
    finally:
        stop.close()
    pool.shutdown(wait=True)
    stop_writer.close()
    if not all(done):  # never return a partial batch
        raise RuntimeError(f"{name} lost a chunk")
    return results


# The forkserver and the resource tracker (it removes the pool's named semaphores should this process die)
# are processes of their own that would outlive the pool: the ones a pool started are stopped once no pool
# runs, after its queues and events are gone (nothing left for the tracker to clean up).
_helpers_lock = threading.Lock()
_users = 0
_started: set[str] = set()


def _helper_running(helper: str) -> bool:
    from multiprocessing import forkserver, resource_tracker

    if helper == "forkserver":
        return getattr(forkserver._forkserver, "_forkserver_pid", None) is not None
    return getattr(resource_tracker._resource_tracker, "_pid", None) is not None


def _stop_helpers() -> None:
    from multiprocessing import forkserver, resource_tracker

    if "forkserver" in _started and START_METHOD == "forkserver":
        forkserver._forkserver._stop()  # type: ignore[attr-defined]  # private: no public way to end it
    if "tracker" in _started:
        resource_tracker._resource_tracker._stop()  # type: ignore[attr-defined]
    _started.clear()


def _end(pool: ProcessPoolExecutor) -> None:
    """Cancel what no worker started, give the running chunks STOP_GRACE_S to see the stop, then end them."""
    processes = list(getattr(pool, "_processes", {}).values())  # no public handle before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.join(STOP_GRACE_S / max(1, len(processes)))
        if proc.is_alive():
            proc.terminate()
    pool.shutdown(wait=True)  # the workers are gone: this only joins the pool's own thread
