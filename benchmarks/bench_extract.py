"""Extraction benchmark: synthetic corpora ×1, ×10, ×100 the size of the sample corpus, built from its real files.

For each size, in fresh subprocesses (so peak RSS is that run's own): the floor (walk, read every file, run one
markdown-link regex over it) and the full extraction twice: serial (extraction.workers=1) and auto (workers=0:
the fork pool on big corpora, serial on small ones). --repeat rounds of the three, interleaved so each sees the
same machine load; best of the rounds. Not a test: numbers, no asserts.

Columns: `import s` is importing the package and building the settings (pydantic, yaml), which the floor does
not pay; `extract s` is extract_corpus alone. `ratio` = extract / floor, `+import` = (import + extract) / floor,
`wall` = whole subprocess wall time (interpreter start included) / the floor subprocess's wall time. `RSS MB`
is the peak of the main process; `wRSS` the largest worker's peak (0 when serial).

    .venv/bin/python benchmarks/bench_extract.py [--source ../shared/corpus] [--sizes 1 10 100] [--repeat 3]

--against TREE: serial extraction of this checkout and of another one (a checkout of main, say), in alternate
subprocesses each round (each imports its own tree: PYTHONPATH, run from a neutral folder), and the ratio of the
best times; the floor and the pool are not run.

    .venv/bin/python benchmarks/bench_extract.py --against ../main --sizes 30 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[2] / "shared" / "corpus"

CHILD = r"""
import json, re, resource, sys, time
from pathlib import Path
mode, root = sys.argv[1], Path(sys.argv[2])
t0 = time.perf_counter()
c0 = time.process_time()
import_s, workers = 0.0, 1
if mode == "floor":
    link_re = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
    n = 0
    for d in ("countries", "shared"):
        for p in sorted((root / d).rglob("*.md")):
            n += sum(1 for _ in link_re.finditer(p.read_text(encoding="utf-8", errors="replace")))
    claims = n
else:
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.corpus.extract import extract_corpus
    from claims_pipeline.config.settings import settings_from_dict
    from claims_pipeline.config.settings import COUNTRIES_PRESET_DIRS, COUNTRIES_PRESET_RULES
    # the countries layout, official sources only: the same claims as the figures measured before any-layout scopes
    settings = settings_from_dict({"extraction": {"corpus_dir": str(root), "primary_allowlist_file": sys.argv[3],
                                                  "workers": int(sys.argv[4]), "scope_dirs": COUNTRIES_PRESET_DIRS,
                                                  "scope_rules": COUNTRIES_PRESET_RULES, "primary_only": True}})
    t1 = time.perf_counter()
    import_s = t1 - t0
    c0 = time.process_time()
    ex = extract_corpus(corpus_source(settings))
    claims, workers = len(ex.claims), ex.workers
    t0 = t1
elapsed = time.perf_counter() - t0
print(json.dumps({"seconds": elapsed, "cpu_s": time.process_time() - c0, "import_s": import_s, "claims": claims, "workers": workers,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def build(source: Path, dest: Path, copies: int) -> int:
    """`copies` copies of every corpus file, each copy under distinct scope names; returns total bytes."""
    total = 0
    for src in sorted(source.rglob("*.md")):
        rel = src.relative_to(source)
        if rel.parts[0] not in ("countries", "shared"):
            continue
        for i in range(copies):
            if rel.parts[0] == "countries":  # countries/ag/playbook.md -> countries/ag_007/playbook.md
                target = dest / "countries" / f"{rel.parts[1]}_{i:03d}" / Path(*rel.parts[2:])
            else:  # shared/exit/x.md -> shared/c007/exit/x.md
                target = dest / "shared" / f"c{i:03d}" / Path(*rel.parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
            total += target.stat().st_size
    return total


REPO = Path(__file__).resolve().parents[1]


def run_once(mode: str, root: Path, allowlist: Path, workers: int = 1, tree: Path = REPO) -> dict:
    """One child run importing the package from `tree` (from the corpus's folder: `python -c` puts the current
    folder first on the path)."""
    t = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(root), str(allowlist), str(workers)],
                         capture_output=True, text=True, check=True, env=env, cwd=root.parent)
    return {**json.loads(out.stdout), "wall": time.perf_counter() - t}


def compare(source: Path, allowlist: Path, other: Path, sizes: list[int], repeat: int) -> None:
    """Serial extraction here and in `other`, interleaved round by round: best times and their ratio."""
    with tempfile.TemporaryDirectory(prefix="bench_extract_") as tmp:
        for size in sizes:
            root = Path(tmp) / f"x{size}"
            build(source, root, size)
            run_once("floor", root, allowlist)  # warm the page cache
            runs: dict[str, list[dict]] = {"this": [], "other": []}
            for _ in range(repeat):
                runs["other"].append(run_once("extract", root, allowlist, 1, other))
                runs["this"].append(run_once("extract", root, allowlist, 1, REPO))
            this, them = best_of(runs["this"]), best_of(runs["other"])
            cpu = {k: min(r["cpu_s"] for r in v) for k, v in runs.items()}  # CPU time: less moved by other load
            every = {k: ", ".join(f"{r['seconds']:.2f}/{r['cpu_s']:.2f}" for r in v) for k, v in runs.items()}
            print(f"×{size}: this tree {this['seconds']:.3f} s wall, {cpu['this']:.3f} s CPU ({this['claims']} claims); "
                  f"{other}: {them['seconds']:.3f} s wall, {cpu['other']:.3f} s CPU ({them['claims']} claims); "
                  f"ratio {this['seconds'] / them['seconds']:.3f} wall, {cpu['this'] / cpu['other']:.3f} CPU "
                  f"(every run wall/CPU, this: {every['this']}; other: {every['other']})")
            shutil.rmtree(root)


def best_of(runs: list[dict]) -> dict:
    """The fastest run; each time figure is its own minimum, RSS the maximum."""
    best = dict(min(runs, key=lambda r: r["seconds"]))
    for key in ("import_s", "wall"):
        best[key] = min(r[key] for r in runs)
    for key in ("rss_mb", "worker_rss_mb"):
        best[key] = max(r[key] for r in runs)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--allowlist", type=Path, default=Path(__file__).resolve().parents[1] / "config" / "primary_allowlist.txt")
    ap.add_argument("--against", type=Path, help="another checkout to compare serial extraction with")
    args = ap.parse_args()
    if not args.source.is_dir():
        sys.exit(f"source corpus not found: {args.source}")
    if args.against is not None:
        compare(args.source, args.allowlist, args.against.resolve(), args.sizes, args.repeat)
        return
    print(f"{'size':>5} {'MB':>6} {'mode':>6} {'proc':>4} {'claims':>6} {'floor s':>7} {'import s':>8} {'extract s':>9} "
          f"{'ratio':>6} {'+import':>7} {'wall':>6} {'claims/s':>9} {'MB/s':>6} {'RSS MB':>6} {'wRSS':>5}")
    times: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_extract_") as tmp:
        for size in args.sizes:
            root = Path(tmp) / f"x{size}"
            mb = build(args.source, root, size) / 1e6
            run_once("floor", root, args.allowlist)  # warm the page cache
            # Rounds of floor, serial, auto: on a shared machine the load drifts, and a floor measured minutes
            # before the extraction moved the ratio by a third (0.194 s vs 0.122 s in two runs of one hour).
            runs: dict[str, list[dict]] = {"floor": [], "serial": [], "auto": []}
            for _ in range(args.repeat):
                runs["floor"].append(run_once("floor", root, args.allowlist))
                for mode, workers in (("serial", 1), ("auto", 0)):
                    runs[mode].append(run_once("extract", root, args.allowlist, workers))
            floor = best_of(runs["floor"])
            f = floor["seconds"]
            for mode in ("serial", "auto"):
                ext = best_of(runs[mode])
                s = ext["seconds"]
                times[mode, size] = s
                print(f"×{size:<4} {mb:6.1f} {mode:>6} {ext['workers']:4d} {ext['claims']:6d} {f:7.3f} "
                      f"{ext['import_s']:8.3f} {s:9.3f} {s / f:6.2f} {(s + ext['import_s']) / f:7.2f} "
                      f"{ext['wall'] / floor['wall']:6.2f} {ext['claims'] / s:9.0f} {mb / s:6.1f} "
                      f"{ext['rss_mb']:6.1f} {ext['worker_rss_mb']:5.0f}")
            shutil.rmtree(root)
    for mode in ("serial", "auto"):
        if (mode, 10) in times and (mode, 100) in times:
            print(f"growth ×10 → ×100 ({mode}): {times[mode, 100] / times[mode, 10]:.1f}× in time (target ≤ 11×)")
    print("targets at ×100: ratio ≤ 5 (extract s / floor s, both measured above), peak RSS < 300 MB")


if __name__ == "__main__":
    main()
