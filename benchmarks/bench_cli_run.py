"""`claims-pipeline audit` on a synthetic corpus for one or more checkouts, arms interleaved round by round (issue 32,
"no work twice"): per run the wall, the CPU and the peak RSS of the CLI's process tree (os.wait4 of the CLI: its
own usage and that of every descendant it reaped, e.g. pool workers), the seconds from the run's last event
(RUN_SUCCESS) to the process's exit, and the step times of citation_lint and of audit_tables' four checks, from the run's event
log. A fresh home each run (the fetch, extraction, priors, audit and report all run), the fixture web serving the
corpus's sites. The corpus is bench_audit_pools.py's (make_synthetic_corpus.py, bench_scale.py's shape).

Run: .venv/bin/python benchmarks/bench_cli_run.py --claims 10000 --rounds 2 --tree main=../main --tree branch=.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

STEPS = ("claims", "citation_lint", "priors", "audit_tables")  # reported as they are
# the checks on audit_tables (op names end with the check's name), summed
TABLE_CHECKS = ("recount_matches_headline", "no_tokens_absent", "no_stale_changed", "no_cited_page_changed")


def step_times(dagster_home: Path) -> dict[str, float]:
    """Seconds per step of the home's one run (STEP_START to STEP_SUCCESS), audit_tables' four checks summed under
    'checks', and the run's last event time under 'end'."""
    import dagster as dg

    os.environ["DAGSTER_HOME"] = str(dagster_home)  # the instance's event log storage reads it
    with dg.DagsterInstance.get() as instance:
        run = instance.get_runs(limit=1)[0]
        starts: dict[str, float] = {}
        out: dict[str, float] = {"checks": 0.0}
        last = 0.0
        for rec in instance.get_records_for_run(run.run_id, limit=1_000_000).records:
            ev = rec.event_log_entry
            last = max(last, ev.timestamp)
            if ev.dagster_event is None or ev.step_key is None:
                continue
            kind = ev.dagster_event.event_type_value
            if kind == "STEP_START":
                starts[ev.step_key] = ev.timestamp
            elif kind == "STEP_SUCCESS" and ev.step_key in starts:
                took = ev.timestamp - starts[ev.step_key]
                if ev.step_key in STEPS:
                    out[ev.step_key] = took
                elif ev.step_key.endswith(TABLE_CHECKS):
                    out["checks"] += took
        out["end"] = last
    return out


def run_audit(tree: Path, work: Path, workers: int | None) -> dict[str, float]:
    conf = yaml.safe_load((work / "synthetic.yaml").read_text(encoding="utf-8"))
    home = Path(tempfile.mkdtemp(prefix="home-", dir=work))
    conf["home"] = str(home)
    if workers is not None:
        conf["extraction"]["workers"] = workers
        conf.setdefault("priors", {})["workers"] = workers
    config = home / "config.yaml"
    config.write_text(yaml.safe_dump(conf), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["PYTHONPATH"] = str(tree.resolve())
    cli = Path(sys.executable).with_name("claims-pipeline")
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(cli), "audit", "--config", str(config), "--json"], env=env, cwd=home,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.time()
    proc.returncode = os.waitstatus_to_exitcode(status)
    figures = {"wall": time.perf_counter() - t0, "cpu": usage.ru_utime + usage.ru_stime,
               "rss_mb": usage.ru_maxrss / 1024, "exit": float(proc.returncode)}
    try:
        steps = step_times(home / "dagster")
        figures["after_last_event"] = ended - steps.pop("end")
        figures.update(steps)
    except Exception as exc:  # noqa: BLE001 - the figures above still count
        print(f"  (no step times: {exc!r})", file=sys.stderr)
    shutil.rmtree(home, ignore_errors=True)
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench_cli_run")
    ap.add_argument("--workers", type=int, default=None, help="extraction.workers and priors.workers (default: as set)")
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH of a checkout (default: this one)")
    a = ap.parse_args()
    from bench_audit_pools import free_port
    from bench_scale import shape
    from make_synthetic_corpus import generate

    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    trees = [(t.split("=", 1)[0], Path(t.split("=", 1)[1])) for t in a.tree] or [("this", HERE.parent)]
    port = free_port()
    work = a.work / str(a.claims)
    m = generate(work, **shape(a.claims), address=f"127.0.0.1:{port}")
    print(f"{m['claims']} claims, {m['files']} files, {m['scopes']} scopes, {m['urls']} URLs; "
          f"load average at start {os.getloadavg()}", flush=True)
    keys = ("wall", "cpu", "rss_mb", "after_last_event", *STEPS, "checks")
    figures: dict[str, list[dict[str, float]]] = {}
    with FixtureWeb(work / "sites", port=port):
        for r in range(a.rounds):
            for name, tree in trees:
                f = run_audit(tree, work, a.workers)
                figures.setdefault(name, []).append(f)
                print(f"round {r + 1} {name:8} " + "  ".join(f"{k} {f[k]:.1f}" for k in (*keys, "exit") if k in f)
                      + f"  load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    print("| checkout | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name, _ in trees:
        runs = figures[name]
        print(f"| {name} | " + " | ".join(f"{statistics.median(f[k] for f in runs if k in f):.1f}"
                                         if any(k in f for f in runs) else "—" for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
