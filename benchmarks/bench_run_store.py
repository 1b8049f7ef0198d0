"""The per-scope values a run stores (steps/stored.py): their cost in time and bytes, and what a whole audit
run costs in wall, CPU, peak RSS and Dagster history.

  formats   the claims and priors of a synthetic corpus (benchmarks/make_synthetic_corpus.py; priors computed
            against the pages of the prepared cache) written and read back in each stored form: one JSON file per
            scope (the form before issue 32) and the columnar store (Arrow IPC and Parquet), printing seconds,
            bytes and each form's ratio to JSON from the same run (CPU time: the
            machine is shared).
  audit     `claims-pipeline audit` (commands.audit.audit, the CLI's in-process Dagster run) on a prepared synthetic
            corpus served by the fixture web, in a child process: wall, CPU and peak RSS of the process tree, the
            event log's rows and bytes and the size of the instance's history files.

Both prepare the corpus once under --work (bench_scale.prepare: generate, fetch three times).
Run: .venv/bin/python benchmarks/bench_run_store.py formats --claims 100000 --work /tmp/bench_scale/100000
     .venv/bin/python benchmarks/bench_run_store.py audit --claims 10000 --work /tmp/bench_scale/10000
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def history_figures(dagster_home: Path) -> dict[str, Any]:
    """The instance's history: its files' bytes, and the event log's rows and bytes of serialized events."""
    history = dagster_home / "history"
    rows = event_bytes = 0
    by_kind: dict[str, float] = {}
    for db in sorted(history.rglob("*.db")):
        with sqlite3.connect(db) as con:
            if con.execute("SELECT 1 FROM sqlite_master WHERE name='event_logs'").fetchone():
                for kind, asset, n, b in con.execute(
                        "SELECT dagster_event_type, asset_key, count(*), coalesce(sum(length(event)), 0) "
                        "FROM event_logs GROUP BY 1, 2"):
                    rows, event_bytes = rows + n, event_bytes + b
                    key = json.loads(asset) if asset else []  # AssetKey.to_string(): the path as a JSON list
                    name = f"{kind or 'log'} {key[-1] if isinstance(key, list) and key else ''}".strip()
                    by_kind[name] = by_kind.get(name, 0.0) + b / 1e6
    largest = dict(sorted(by_kind.items(), key=lambda kv: -kv[1])[:8])
    return {"history_files_mb": tree_bytes(history) / 1e6 if history.exists() else 0.0,
            "event_rows": rows, "event_mb": event_bytes / 1e6,
            "largest_mb": {k: round(v, 2) for k, v in largest.items()}}


def audit_child(work: Path, home: Path) -> dict[str, Any]:
    """One `claims-pipeline audit` of the prepared corpus in this process, against the fixture web."""
    from bench_scale import bench_settings

    from claims_pipeline.commands.audit import audit
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    with FixtureWeb(work / "sites") as web:
        web.set_epoch(2)
        settings = bench_settings(work, home, f"127.0.0.1:{web.port}")
        os.environ["DAGSTER_HOME"] = str(home / "dagster")
        t, c = time.perf_counter(), time.process_time()
        code = audit(settings, fixture_web=False, quiet=True)
        wall = time.perf_counter() - t
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"exit": code, "wall_s": wall, "cpu_s": time.process_time() - c + kids.ru_utime + kids.ru_stime,
            "rss_mb": own.ru_maxrss / 1024, "child_rss_mb": kids.ru_maxrss / 1024,
            "assets_mb": tree_bytes(home / "assets") / 1e6, **history_figures(home / "dagster")}


def run_audit(work: Path, reps: int) -> None:
    for rep in range(reps):
        home = Path(tempfile.mkdtemp(prefix="bench-run-store-"))
        try:
            out = subprocess.run([sys.executable, __file__, "--audit-child", str(work), str(home)],
                                 capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            if out.returncode != 0:
                raise SystemExit(f"the audit's process ended with {out.returncode}:\n{out.stderr[-3000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
        finally:
            shutil.rmtree(home, ignore_errors=True)
        print(f"audit rep {rep}: exit {r['exit']} · wall {r['wall_s']:.1f} s · CPU {r['cpu_s']:.1f} s · peak RSS "
              f"{r['rss_mb']:.0f} MB (largest child {r['child_rss_mb']:.0f} MB) · <home>/assets {r['assets_mb']:.1f} MB"
              f" · history {r['history_files_mb']:.1f} MB on disk, {r['event_rows']} events, {r['event_mb']:.1f} MB"
              f" of events · load {os.getloadavg()[0]:.2f}\n  largest events (MB): {r['largest_mb']}", flush=True)


def timed(fn: Any) -> tuple[float, Any]:
    """CPU seconds of this process (the machine is shared: another's work lengthens wall time, not these), the
    garbage collector held off: its full passes over the heap fell into one arm or another by chance (a read of
    the 10k claims took 0.08 s or 0.50 s by them), so each form's own cost is compared."""
    gc.collect()
    gc.disable()
    try:
        c = time.process_time()
        out = fn()
        return time.process_time() - c, out
    finally:
        gc.enable()


def parquet_write(step: Any, values: dict[str, Any], folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    scopes = list(values)
    pq.write_table(pa.table({"scope": pa.array(scopes, pa.string()),
                             "record": pa.array([step.encode(values[s]) for s in scopes], type=step.column_type)}),
                   folder / "values.parquet")


def parquet_read(step: Any, scopes: list[str], folder: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "values.parquet", filters=[("scope", "in", scopes)])
    return {s: step.decode(d) for s, d in zip(table["scope"].to_pylist(),
                                              table["record"].to_pylist(), strict=True)}


def run_formats(work: Path, reps: int) -> None:
    from bench_scale import bench_settings

    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.corpus.scopes import list_scopes
    from claims_pipeline.priors import PriorRules
    from claims_pipeline.steps import stored
    from claims_pipeline.steps.corpus import CLAIMS, claims_by_scope
    from claims_pipeline.steps.pages.fetched import refresh_scope_pages
    from claims_pipeline.steps.priors import PRIORS, priors_by_scope
    from claims_pipeline.store.cache import PageCache

    with tempfile.TemporaryDirectory(prefix="bench-run-store-") as tmp:
        s = bench_settings(work, Path(tmp) / "home")
        corpus = corpus_source(s)
        scopes = sorted(list_scopes(corpus))
        claims = claims_by_scope(corpus, scopes).values
        with PageCache.at(s.page_cache) as cache:
            pages = refresh_scope_pages(s.home_dir, claims, cache, lambda urls: cache.states(urls, with_text=False))
            priors = priors_by_scope(PriorRules.of(s.priors, s.fetch), claims, pages.values, cache).values
        n = sum(len(v.claims) for v in claims.values())
        print(f"{n} claims, {len(scopes)} scopes", flush=True)
        for step, values in ((CLAIMS, claims), (PRIORS, priors)):
            for rep in range(reps):
                results: dict[str, tuple[float, float, int]] = {}
                for form in ("json", "arrow", "parquet"):
                    home = Path(tmp) / f"{form}-{rep}"
                    if form == "json":
                        files = home / "assets" / step.asset
                        write = lambda: [stored.write_json_file(step, home, k, v) for k, v in values.items()]  # noqa: E731,B023
                        read = lambda: step.read_scopes(home, scopes)[0]  # noqa: E731,B023
                    elif form == "arrow":  # the store itself
                        files = step.folder(home)
                        write = lambda: stored.ScopeStore(home).write(step, values)  # noqa: E731,B023
                        read = lambda: stored.ScopeStore(home).read(step, scopes)[0]  # noqa: E731,B023
                    else:  # the same table as Parquet (pyarrow's defaults: snappy, dictionary pages)
                        files = home / "parquet" / step.asset
                        write = lambda: parquet_write(step, values, files)  # noqa: E731,B023
                        read = lambda: parquet_read(step, scopes, files)  # noqa: E731,B023
                    w, _ = timed(write)
                    r, back = timed(read)
                    same = [json.dumps(back[k].to_json()) for k in scopes] == [json.dumps(values[k].to_json()) for k in scopes]
                    assert same, f"{step.asset}: {form} does not give the values back as they were"
                    results[form] = (w, r, tree_bytes(files))
                jw, jr, jb = results["json"]
                print(f"{step.asset} rep {rep} (CPU s): " + " | ".join(
                    f"{form} write {w:.2f} s ({w / jw:.2f}x), read {r:.2f} s ({r / jr:.2f}x), "
                    f"{b / 1e6:.1f} MB ({b / jb:.2f}x)" for form, (w, r, b) in results.items()), flush=True)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--audit-child":
        print(json.dumps(audit_child(Path(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["formats", "audit"])
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--work", type=Path, required=True, help="the prepared corpus (bench_scale.prepare)")
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    from bench_scale import prepare

    prepare(args.work, args.claims)
    (run_formats if args.what == "formats" else run_audit)(args.work, args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
