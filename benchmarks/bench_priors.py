"""The priors step alone (steps.priors.priors_by_scope) on a corpus prepared by bench_scale.py, in CPU seconds:
what the machine's load does not change much, unlike wall time on a shared 2-core machine.

Each arm runs in its own child process, on the same claims and page states (read from the prepared cache as
bench_scale's child does), arms alternating over the repetitions:
  serial, every gc pass   priors.workers 1, the collector at its default threshold (as before priors/gc_passes.py)
  serial                  priors.workers 1 (the step as it runs inside a Dagster run)
  pool of 2               priors.workers 2 (the step outside Dagster: bench_scale, the CLI); wall, and the CPU of
                          the calling process and of its forked worker
and, in the serial arm, the same batch again with every page index already built: the per-claim CPU alone (the
rest of the first pass is building the page indexes). It prints the median of each and the ratios to the first
arm. The values of every arm are compared: the benchmark fails if they differ.

Run: .venv/bin/python benchmarks/bench_priors.py [--size 10000] [--reps 3] [--work /tmp/bench_scale]
(the corpus must be prepared first: .venv/bin/python benchmarks/bench_scale.py --sizes 10000 --reps 1)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ARMS = ("serial, every gc pass", "serial", "pool of 2")


def child(work: Path, arm: str) -> dict[str, Any]:
    from bench_scale import bench_settings

    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.corpus.extract import list_scopes
    from claims_pipeline.priors import PriorRules, gc_passes, page_index
    from claims_pipeline.steps.corpus import claims_by_scope
    from claims_pipeline.steps.pages.fetched import refresh_scope_pages
    from claims_pipeline.steps.priors import priors_by_scope
    from claims_pipeline.store.cache import PageCache

    home = work / f"priors-bench-home-{os.getpid()}"
    s = bench_settings(work, home)
    s = s.model_copy(update={"priors": s.priors.model_copy(update={"workers": 2 if arm == "pool of 2" else 1})})
    rules = PriorRules.of(s.priors, s.fetch)
    if arm == "serial, every gc pass":
        gc_passes.fewer_gc_passes = contextlib.nullcontext  # type: ignore[assignment]
    page_index.INDEX_CACHE._size = 10**7  # the warm pass finds every page's index
    out: dict[str, Any] = {}
    try:
        corpus = corpus_source(s)
        claims = claims_by_scope(corpus, sorted(list_scopes(corpus))).values
        with PageCache.at(s.page_cache) as cache:
            pages = refresh_scope_pages(s.home_dir, claims, cache, lambda urls: cache.states(urls, with_text=False)).values
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t, c = time.perf_counter(), time.process_time()
            priors = priors_by_scope(rules, claims, pages, cache)
            out["wall"], out["cpu"] = time.perf_counter() - t, time.process_time() - c
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            out["worker_cpu"] = max(0.0, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            out["builds"] = page_index.INDEX_CACHE.builds
            if arm == "serial":
                c = time.process_time()
                priors_by_scope(rules, claims, pages, cache)
                out["warm_cpu"] = time.process_time() - c
        out["claims"] = sum(len(v.rows) for v in priors.values.values())
        out["digest"] = hashlib.sha256(json.dumps({s: v.to_json() for s, v in priors.values.items()}).encode()).hexdigest()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return out


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]), sys.argv[3])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_scale"))
    args = ap.parse_args()
    work = args.work / f"synth-{args.size}"
    if not (work / "prepared").is_file():
        print(f"{work} is not prepared: run benchmarks/bench_scale.py --sizes {args.size} --reps 1 first")
        return 2
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; corpus {work}")
    runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    for rep in range(args.reps):
        for arm in ARMS:
            out = subprocess.run([sys.executable, __file__, "--child", str(work), arm], check=True,
                                 capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            r = json.loads(out.stdout.strip().splitlines()[-1])
            runs[arm].append(r)
            print(f"  rep {rep + 1} {arm}: CPU {r['cpu']:.2f} s (pool worker {r['worker_cpu']:.2f} s), wall {r['wall']:.2f} s"
                  + (f", again with every page index built {r['warm_cpu']:.2f} s" if "warm_cpu" in r else ""), flush=True)
    digests = {r["digest"] for rs in runs.values() for r in rs}
    if len(digests) != 1:
        print(f"the arms' priors differ: {len(digests)} digests")
        return 1
    med = {arm: {k: statistics.median(r[k] for r in rs) for k in ("cpu", "worker_cpu", "wall")} for arm, rs in runs.items()}
    base = med[ARMS[0]]["cpu"]
    claims, builds = runs["serial"][0]["claims"], runs["serial"][0]["builds"]
    warm = statistics.median(r["warm_cpu"] for r in runs["serial"])
    print(f"\n{claims:,} claims, {builds:,} page indexes built; medians of {args.reps}, the same priors in every arm")
    print("| arm | CPU (calling process) | CPU (pool worker) | wall | CPU ÷ first arm |")
    print("|---|---|---|---|---|")
    for arm, m in med.items():
        print(f"| {arm} | {m['cpu']:.2f} s | {m['worker_cpu']:.2f} s | {m['wall']:.2f} s | "
              f"{(m['cpu'] + m['worker_cpu']) / base:.2f} |")
    serial = med["serial"]["cpu"]
    print(f"serial: page indexes {serial - warm:.2f} s CPU ({1000 * (serial - warm) / builds:.2f} ms a page), "
          f"the claims' matching {warm:.2f} s ({1e6 * warm / claims:.0f} us a claim)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
