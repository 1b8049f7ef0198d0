"""`claims-pipeline audit` (the command users run: its Dagster job in a worker thread) on a synthetic corpus, with
`extraction.workers` / `priors.workers` at 1 and at 2, for one or more checkouts of the code, arms interleaved
round by round (issue 32: the fork pools refused a process with threads, so the CLI ran both serially).

Prepares once under --work: the corpus and its sites (make_synthetic_corpus.py, the shape of bench_scale.py), a
fixture web serving them on a free port for the whole run. Each run has a fresh home (so the fetch, extraction,
priors, audit and report all run) and is one `claims-pipeline audit --config <file>` process with the checkout
first on PYTHONPATH. Prints per arm the wall and the CPU of the process tree (getrusage of the reaped children:
the CLI and its pool's workers) of every round, their medians, the CPU and wall ratios of workers 2
to workers 1 within each checkout, and the load average before and after.

Run: .venv/bin/python benchmarks/bench_audit_pools.py --claims 10000 --rounds 3 \
        --tree main=../main --tree branch=.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_audit(tree: Path, work: Path, workers: int) -> tuple[float, float, int, bool]:
    """(wall s, CPU s of the process tree, exit status, whether a pool fell back to serial) of one audit with a
    fresh home."""
    conf = yaml.safe_load((work / "synthetic.yaml").read_text(encoding="utf-8"))
    home = Path(tempfile.mkdtemp(prefix="home-", dir=work))
    conf["home"] = str(home)
    conf["extraction"]["workers"] = workers
    conf.setdefault("priors", {})["workers"] = workers
    config = home / "config.yaml"
    config.write_text(yaml.safe_dump(conf), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    cli = Path(sys.executable).with_name("claims-pipeline")
    c0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run([str(cli), "audit", "--config", str(config), "--json"], env=env, cwd=home,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    if done.returncode not in (0, 1):  # 1: the audit found problems (the synthetic corpus has some)
        print(done.stderr[-2000:], file=sys.stderr)
    shutil.rmtree(home, ignore_errors=True)
    return wall, cpu, done.returncode, "pool of" in done.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench_audit_pools")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="settings to compare (0: auto)")
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH of a checkout (default: this one)")
    a = ap.parse_args()
    from bench_scale import shape
    from make_synthetic_corpus import generate

    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    trees = [(t.split("=", 1)[0], Path(t.split("=", 1)[1])) for t in a.tree] or [("this", HERE.parent)]
    port = free_port()
    work = a.work / str(a.claims)
    t = time.perf_counter()
    m = generate(work, **shape(a.claims), address=f"127.0.0.1:{port}")
    print(f"generated {m['claims']} claims, {m['files']} files, {m['scopes']} scopes, {m['urls']} URLs "
          f"in {time.perf_counter() - t:.1f} s", flush=True)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    figures: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with FixtureWeb(work / "sites", port=port):
        for r in range(a.rounds):
            for name, tree in trees:
                for workers in a.workers:
                    wall, cpu, rc, fell_back = run_audit(tree, work, workers)
                    figures.setdefault((name, workers), []).append((wall, cpu))
                    print(f"round {r + 1} {name:8} workers={workers}: wall {wall:6.1f} s  CPU {cpu:6.1f} s  "
                          f"exit {rc}  load {os.getloadavg()[0]:.2f}{'  (a pool fell back to serial)' if fell_back else ''}",
                          flush=True)
    print(f"load average at end: {os.getloadavg()}")
    print(f"| checkout | workers | wall s (median [range]) | CPU s (median) | wall ÷ workers {a.workers[0]} | CPU ÷ it |")
    print("|---|---|---|---|---|---|")
    first = a.workers[0]
    for name, _ in trees:
        for workers in a.workers:
            walls = [w for w, _ in figures[(name, workers)]]
            cpus = [c for _, c in figures[(name, workers)]]
            ratios = ""
            if workers != first:
                w1 = statistics.median(w for w, _ in figures[(name, first)])
                c1 = statistics.median(c for _, c in figures[(name, first)])
                ratios = f"{statistics.median(walls) / w1:.2f} | {statistics.median(cpus) / c1:.2f}"
            else:
                ratios = "— | —"
            print(f"| {name} | {workers} | {statistics.median(walls):.1f} [{min(walls):.1f}–{max(walls):.1f}] | "
                  f"{statistics.median(cpus):.1f} | {ratios} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
