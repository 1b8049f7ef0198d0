"""Blob store benchmark: the file:// store now (opened from a URL, as the page cache opens it) against the
previous implementation (blobs.py at --base, loaded from git), in this one run; then the s3:// store against a
moto server on 127.0.0.1, for information only (moto is a test double, not a measure of S3's speed).

Workload: N pages, each a raw body (realistic HTML-ish bytes, ~24 kB) and its text (~6 kB): put both (cold:
new files, each fsynced: the disk's fsync rate dominates), get both, exists both (one by one, then in one
exists_many batch, as the page cache now asks at a run's end), put both again (warm: already stored intact), the last three five times per round, old and new interleaved. Rounds alternate which store
goes first, each on fresh folders; medians are printed, and
new ÷ old per phase (above 1.05 = more than 5 % slower; on a busy machine the sub-second phases vary by more).

Usage: .venv/bin/python benchmarks/bench_blobs.py [--pages 300] [--rounds 7] [--base REV] [--s3-pages 200]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claims_pipeline.store.blob_stores import open_blob_store  # noqa: E402

PHASES = ("put cold", "get", "exists", "exists_many", "put warm")


def old_module(rev: str) -> ModuleType:
    """blobs.py as it was at rev, loaded under its own name (it imports only the standard library)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:claims_pipeline/store/blobs.py"],
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="bench-blobs-old-")) / "old_blobs.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_blobs", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_blobs"] = module
    spec.loader.exec_module(module)
    return module


def pages(n: int) -> list[tuple[bytes, str]]:
    out = []
    for i in range(n):
        text = " ".join(f"Article {i}.{j}: the standard rate is {(i * 7 + j) % 30}.{j % 10} % from {2000 + j % 25}."
                        for j in range(90))
        raw = (f"<html><head><title>page {i}</title></head><body>"
               + "".join(f"<div class='c{j % 9}'><p>{s}</p></div>\n" for j, s in enumerate(text.split(". ")))
               + "</body></html>").encode() * 2
        out.append((raw, text))
    return out


def put_cold(store: Any, data: list[tuple[bytes, str]]) -> tuple[float, list[tuple[str, str]]]:
    t = time.perf_counter()
    hashes = [(store.put(raw, "raw"), store.put_text(text)) for raw, text in data]
    return time.perf_counter() - t, hashes


def read_phases(store: Any, data: list[tuple[bytes, str]], hashes: list[tuple[str, str]]) -> dict[str, float]:
    times: dict[str, float] = {}
    t = time.perf_counter()
    for h_raw, h_text in hashes:
        assert store.get(h_raw, "raw") is not None and store.get_text(h_text) is not None
    times["get"] = time.perf_counter() - t
    t = time.perf_counter()
    for h_raw, h_text in hashes:
        assert store.exists(h_raw, "raw") and store.exists(h_text, "text")
    times["exists"] = time.perf_counter() - t
    t = time.perf_counter()
    asked = [(h, "raw") for h, _ in hashes] + [(h, "text") for _, h in hashes]
    if hasattr(store, "exists_many"):  # the old store has none: its figure is the one-by-one loop's
        assert len(store.exists_many(asked)) == len(asked)
    else:
        assert all(store.exists(h, kind) for h, kind in asked)
    times["exists_many"] = time.perf_counter() - t
    t = time.perf_counter()
    for raw, text in data:
        store.put(raw, "raw")
        store.put_text(text)
    times["put warm"] = time.perf_counter() - t
    return times


def timed(store: Any, data: list[tuple[bytes, str]]) -> dict[str, float]:
    cold, hashes = put_cold(store, data)
    return {"put cold": cold, **read_phases(store, data, hashes)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--base", default="2ae3844^", help="git revision of the previous blobs.py (the baseline)")
    parser.add_argument("--s3-pages", type=int, default=200, help="0: skip the moto figures")
    args = parser.parse_args()

    data = pages(args.pages)
    mb = sum(len(r) + len(t.encode()) for r, t in data) / 1e6
    old = old_module(args.base)
    print(f"{args.pages} pages ({mb:.1f} MB uncompressed, raw + text), {args.rounds} rounds, baseline blobs.py at {args.base}")
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    makers: dict[str, Callable[[Path], Any]] = {"old": old.BlobStore, "new": lambda p: open_blob_store(p.as_uri())}
    with tempfile.TemporaryDirectory(prefix="bench-blobs-") as tmp:
        for r in range(args.rounds):
            stores = {tag: makers[tag](Path(tmp) / f"{tag}-{r}") for tag in makers}
            filled = {}
            for tag in (("old", "new") if r % 2 == 0 else ("new", "old")):  # neither always goes first
                cold, hashes = put_cold(stores[tag], data)
                filled[tag] = hashes
                results[tag].append({"put cold": cold})
            # the fast phases, old and new interleaved several times per round: one busy moment hits both
            for rep in range(5):
                for tag in (("old", "new") if rep % 2 == 0 else ("new", "old")):
                    results[tag].append(read_phases(stores[tag], data, filled[tag]))
    print(f"{'phase':12} {'old s':>8} {'new s':>8} {'new MB/s':>9} {'new/old':>8}")
    for phase in PHASES:
        o = statistics.median(x[phase] for x in results["old"] if phase in x)
        n = statistics.median(x[phase] for x in results["new"] if phase in x)
        print(f"{phase:12} {o:8.3f} {n:8.3f} {mb / n:9.1f} {n / o:8.3f}")

    if args.s3_pages:
        sys.path.insert(0, str(ROOT))
        from claims_pipeline_tests.support.s3_server import s3_server

        small = data[: args.s3_pages]
        small_mb = sum(len(r) + len(t.encode()) for r, t in small) / 1e6
        with s3_server() as s3:
            figures = timed(open_blob_store(f"s3://{s3.new_bucket()}/bench"), small)
        print(f"\ns3:// on moto (127.0.0.1, in this process; information only): {args.s3_pages} pages, {small_mb:.1f} MB")
        for phase in PHASES:
            per = figures[phase] / (2 * args.s3_pages) * 1000
            print(f"{phase:12} {figures[phase]:8.3f} s  {per:6.2f} ms/blob  {small_mb / figures[phase]:7.1f} MB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
