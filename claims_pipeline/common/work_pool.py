"""The one process pool of the core: extraction's files and the priors' scopes, split in contiguous chunks,
computed by this process and `workers - 1` worker processes, results put back in chunk order (exactly the
serial output).

Safe beside threads: a worker is a fresh interpreter (`python -c`, the subprocess module), never a fork of the
calling process, so a Dagster run (its event threads), the CLI (its run in a worker thread) or the webserver can
use it: a child forked while another thread held a lock (imports, logging) could hang. A worker gets this
process's sys.path, then the chunk function and `shared` once (pickled: unpickling the function imports only its
module, the pure core), then one chunk at a time, and answers each with its result.

Why not multiprocessing's spawn or forkserver pools: they start helper processes of their own (the resource
tracker, the forkserver) that outlive the pool until this process ends, and there is no public call to end them
or, before Python 3.14, a pool's busy workers. Here every worker is a Popen this module owns: the calling process
is one of the workers (it computes the chunks no worker has taken; its results need no pickling), one thread per
worker process hands it the next chunk when it answered the last, and when the map returns or raises every
worker has exited and been waited for.

A stop (common/stopping.py) hands out no chunk more and kills the workers at once (pure computation: nothing of
theirs is half written; their chunks would be thrown away). Workers ignore SIGINT (Ctrl-C reaches the whole
process group; the calling process decides) and end by themselves when the calling process is gone. Any pool
failure raises; the callers then compute serially.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import IO, Any, TypeVar

from claims_pipeline.common import stopping

MAX_AUTO_WORKERS = 8
PARENT_POLL_S = 0.5  # how often a worker looks whether the calling process is still there

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


# A worker's whole program: this process's sys.path first (as multiprocessing's spawn does), then serve().
_BOOT = ("import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
         "from claims_pipeline.common.work_pool import serve; serve()")


def serve() -> None:
    """A worker process: (fn, shared) from stdin, then chunks until stdin ends; each answered on stdout with
    (True, fn(chunk, shared)) or (False, the exception)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(os.getppid(),), name="pool-parent", daemon=True).start()
    src, dst = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a print in the core must not corrupt the answers
    fn, shared = pickle.load(src)
    while True:
        try:
            chunk = pickle.load(src)
        except EOFError:
            return
        try:
            reply: tuple[bool, Any] = (True, fn(chunk, shared))
        except Exception as exc:  # handed to the calling process, which raises it
            reply = (False, exc)
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a result or an error that cannot be pickled
            data = pickle.dumps((False, RuntimeError(f"cannot send the chunk's {'result' if reply[0] else 'error'}: "
                                                     f"{exc!r}")))
        dst.write(data)
        dst.flush()


def _end_with(parent: int) -> None:
    """End this worker once the process that started it is gone (a chunk it computes would be for no one)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def map_chunks(fn: Callable[[C, S], R], chunks: Sequence[C], shared: S, workers: int,
               name: str = "pool") -> list[R]:
    """[fn(chunk, shared) for chunk in chunks], computed by this process and `workers - 1` worker processes.
    `fn` must be a module-level function (workers import it by name); `shared` and each chunk are pickled.
    When it returns or raises, its worker processes have exited."""
    head = pickle.dumps(sys.path) + pickle.dumps((fn, shared), protocol=pickle.HIGHEST_PROTOCOL)
    results: list[Any] = [None] * len(chunks)
    done = [False] * len(chunks)
    failures: list[BaseException] = []
    halt = threading.Event()  # no chunk more: a stop, a failure
    lock = threading.Lock()
    upcoming = iter(range(len(chunks)))

    def take() -> int | None:
        with lock:
            return None if halt.is_set() else next(upcoming, None)

    def feed(proc: subprocess.Popen[bytes]) -> None:
        stdin, stdout = _pipes(proc)
        try:
            stdin.write(head)
            stdin.flush()
            while (i := take()) is not None:
                pickle.dump(chunks[i], stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
                ok, value = pickle.load(stdout)
                if not ok:
                    raise value
                results[i], done[i] = value, True
        except BaseException as exc:  # noqa: BLE001 - a worker gone or failed: raised by the calling thread
            failures.append(exc)
            halt.set()
        finally:
            try:
                stdin.close()  # the worker's end of input: it exits
            except OSError:
                pass

    def stop_workers() -> None:  # from whichever thread asks the stop: quick, and safe twice
        halt.set()
        for proc in procs:
            proc.kill()

    procs: list[subprocess.Popen[bytes]] = []
    feeders: list[threading.Thread] = []
    try:
        for _ in range(max(1, min(workers - 1, len(chunks) - 1))):
            procs.append(subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE))
            feeders.append(threading.Thread(target=feed, args=(procs[-1],), name=f"{name}-feed", daemon=True))
            feeders[-1].start()
        with stopping.on_request(stop_workers):
            while (i := take()) is not None:
                stopping.check()
                results[i], done[i] = fn(chunks[i], shared), True
            for feeder in feeders:
                feeder.join()
            stopping.check()
    except BaseException:  # a stop, an interrupt, a failure here: no chunk more, the workers ended
        halt.set()
        for proc in procs:
            proc.kill()
        raise
    finally:
        for proc in procs:
            proc.wait()
            _pipes(proc)[1].close()
    if failures:
        raise RuntimeError(f"{name}: a worker failed: {failures[0]!r}") from failures[0]
    if not all(done):  # never return a partial batch
        raise RuntimeError(f"{name} lost a chunk")
    return results


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert proc.stdin is not None and proc.stdout is not None
    return proc.stdin, proc.stdout
