"""Fewer garbage-collector passes while the priors of a batch are computed.

The priors allocate millions of small objects (tokens, hits, dicts) and keep few: with the default threshold
(a pass over the young objects every 700 allocations, a full pass over the whole heap as it grows) the collector
takes a share of the priors' CPU that grows with the heap (benchmarks/README.md), which at 100k claims holds every claim. Collecting the
young objects every 50,000 allocations instead leaves the garbage the same (nothing is leaked: the passes are
fewer, not off) and the threshold goes back when the batch ends. Process-wide, as the collector is: threads
running meanwhile see fewer passes too, which only delays their collection of reference cycles.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_gc_passes(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Raise the collector's young-generation threshold to `young` (never lower it) for the block; nested or
    concurrent blocks restore the threshold once, when the last one ends."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(young, _saved[0]), _saved[1], _saved[2])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
