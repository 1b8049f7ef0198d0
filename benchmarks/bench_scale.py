"""The whole audit at scale: extract + pages + priors + audit tables + report for 10k and 100k claims
of a synthetic corpus (benchmarks/make_synthetic_corpus.py), timed without the network.

For each size it first prepares, untimed and once (kept under --work, reused by later runs):
  generate the corpus and its sites → start the fixture web on them → fetch every cited URL at epoch 1, then
  twice at epoch 2 (a changed page counts once its new text is seen on two fetches in a row) into a page cache.
Then each repetition runs, in a child process (its peak RSS is its own, measured by getrusage):
  extract      steps.corpus.claims_by_scope over every scope (the claims asset's work; extraction's own pool)
  pages        steps.pages.fetched.refresh_scope_pages with the states read from the prepared cache (no fetch)
  priors       steps.priors.priors_by_scope (the priors asset's work)
  audit        the audit_tables asset's work: audit_of_scopes.audit_scopes (the cross-scope audit and its parquet
               tables), then the asset's UI metadata (defs/audit/ui.audit_metadata), serialized
  report       the audit_report asset's work: report.publish.publish_report (report.md, report.html,
               report.json, read from the tables) and the asset's UI metadata (report_metadata), serialized
Each phase holds what the Dagster step it stands for holds: the claims, pages and priors values are the audit
step's inputs and are dropped once it is done, as is its in-memory audit (the report step has no input: it reads
the tables, defs/audit/assets.py); a gc.collect() between those two steps, which are separate steps in a run.
The peak RSS is read before the benchmark reads report.json back to count its claims.
Each repetition uses a fresh home (the prepared cache is shared read-only), so every run reports the changes.
It prints each phase, the total, the peak RSS (the child, and its largest extraction worker), the report files'
sizes, the 100k ÷ 10k time ratio of the same run (target: ≤ 11×; 100k under 60 s; RSS under 1.5 GB) and the load
average at the start and the end.

Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 10000 100000] [--reps 2] [--work /tmp/bench_scale]
(preparing 100k fetches 20,000 URLs three times: several minutes on 2 cores; a later run reuses it)
"""

from __future__ import annotations

import argparse
import gc
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


def shape(claims: int) -> dict[str, int]:
    """The issue's shape scaled to `claims`: 10 claims a file, 5 a URL, up to 500 hosts."""
    return {"claims": claims, "files": max(1, claims // 10), "urls": max(1, claims // 5),
            "hosts": max(1, min(500, claims // 40))}


def bench_settings(work: Path, home: Path, address: str | None = None) -> Any:
    """The generated config with its home at `home`, the page cache at the prepared one (work/cache)."""
    from make_synthetic_corpus import route_to

    from claims_pipeline.config.settings import load_settings

    s = load_settings(work / "synthetic.yaml")
    cache = s.cache.model_copy(update={"db_url": f"sqlite:///{work / 'cache' / 'index.sqlite'}",
                                       "blob_dir": work / "cache" / "blobs"})
    s = s.model_copy(update={"home": home, "cache": cache})
    return route_to(s, address) if address else s


def prepare(work: Path, claims: int) -> None:
    """Generate and pre-fetch once; `work/prepared` marks a finished preparation."""
    if (work / "prepared").is_file():
        return
    from make_synthetic_corpus import generate

    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.corpus.extract import extract_corpus
    from claims_pipeline.steps.pages.refresh import refresh_pages
    from claims_pipeline.store.cache import PageCache
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    t = time.perf_counter()
    m = generate(work, **shape(claims))
    print(f"  generated {m['claims']} claims, {m['files']} files, {m['scopes']} scopes, {m['urls']} URLs over "
          f"{m['hosts']} hosts {m['url_kinds']} in {time.perf_counter() - t:.1f} s", flush=True)
    with FixtureWeb(work / "sites") as web:
        s = bench_settings(work, work / "home", f"127.0.0.1:{web.port}")
        urls = sorted({c.source_url for c in extract_corpus(corpus_source(s)).claims})
        for epoch in (1, 2, 2):
            web.set_epoch(epoch)
            t = time.perf_counter()
            with PageCache.at(s.page_cache) as cache:
                refresh_pages(s.page_fetching, urls, cache=cache, with_text=False)
            print(f"  fetched {len(urls)} URLs at epoch {epoch} in {time.perf_counter() - t:.1f} s (untimed)", flush=True)
    (work / "prepared").write_text("ok\n")


def child(work: Path, home: Path) -> dict[str, Any]:
    """One timed audit in this process; returns the figures."""
    from datetime import UTC, datetime

    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.corpus.extract import list_scopes
    from claims_pipeline.defs.audit.ui import audit_metadata, report_metadata
    from claims_pipeline.priors import PriorRules
    from claims_pipeline.steps.audit.cross_scope import audit_scopes
    from claims_pipeline.steps.audit.publish import publish_report
    from claims_pipeline.steps.corpus import claims_by_scope
    from claims_pipeline.steps.pages.fetched import refresh_scope_pages
    from claims_pipeline.steps.priors import priors_by_scope
    from claims_pipeline.store.cache import PageCache

    s = bench_settings(work, home)
    phases: dict[str, float] = {}
    cpu: dict[str, float] = {}
    rss: dict[str, float] = {}  # peak RSS (MB) once each phase is done
    t0 = t = time.perf_counter()
    c = time.process_time()

    def lap(name: str) -> None:
        nonlocal t, c
        now, now_cpu = time.perf_counter(), time.process_time()
        phases[name], cpu[name] = now - t, now_cpu - c
        rss[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t, c = now, now_cpu

    corpus, rules = corpus_source(s), PriorRules.of(s.priors, s.fetch)
    scopes = sorted(list_scopes(corpus))
    extracted = claims_by_scope(corpus, scopes)
    lap("extract")
    with PageCache.at(s.page_cache) as cache:
        pages = refresh_scope_pages(s.home_dir, extracted.values, cache, lambda urls: cache.states(urls, with_text=False))
        lap("pages")
        priors = priors_by_scope(rules, extracted.values, pages.values, cache)
        lap("priors")
        done = audit_scopes(s.home_dir, rules, extracted.values, pages.values, priors.values, cache, datetime.now(UTC), scopes)
    ui_bytes = metadata_bytes(audit_metadata(done.audit, done.tables["priors"].parent))
    run_at, headline = done.audit.run_at, done.audit.headline
    del extracted, pages, priors, done  # the audit step's inputs and its audit: the report step holds none
    gc.collect()
    lap("audit")
    published = publish_report(s.home_dir, s.reports_dir, own_tables_run_at=run_at)
    ui_bytes += metadata_bytes(report_metadata(published))
    lap("report")
    total = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sizes = {name: path.stat().st_size for name, path in published.files.items() if name.startswith("report.")}
    report_claims = len(json.loads(published.files["report.json"].read_text(encoding="utf-8")).get("claims", []))
    return {
        "claims": headline["total"], "headline": headline, "scopes": len(scopes),
        "phases": phases, "cpu": cpu, "rss_after": rss, "total": total,
        "rss_mb": rss_mb,
        "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "sizes": sizes, "report_json_claims": report_claims, "ui_metadata_bytes": ui_bytes,
    }


def metadata_bytes(metadata: dict[str, Any]) -> int:
    """The size of an asset's metadata, serialized (Dagster stores it with the materialization)."""
    return len(json.dumps({k: getattr(v, "value", v) for k, v in metadata.items()}, default=str).encode())


def load_average() -> str:
    """1, 5 and 15 minutes: the machine is shared, and another's work lengthens every phase."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_child(work: Path, rep: int) -> dict[str, Any]:
    home = work / f"run-home-{rep}"
    shutil.rmtree(home, ignore_errors=True)
    out = subprocess.run([sys.executable, __file__, "--child", str(work), str(home)], check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    shutil.rmtree(home, ignore_errors=True)
    return result


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--reps", type=int, default=2, help="timed repetitions per size (arms alternate)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_scale"))
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), Python {sys.version.split()[0]}, "
          f"load average {load_average()}")
    works = {n: args.work / f"synth-{n}" for n in args.sizes}
    for n, work in works.items():
        print(f"preparing {n} claims in {work}", flush=True)
        prepare(work, n)
    results: dict[int, list[dict[str, Any]]] = {n: [] for n in args.sizes}
    for rep in range(args.reps):
        for n, work in works.items():  # sizes alternate, so a busy spell on the machine hits both
            r = run_child(work, rep)
            results[n].append(r)
            ph = " · ".join(f"{k} {v:.2f} (CPU {r['cpu'][k]:.2f}, RSS {r['rss_after'][k]:.0f} MB)"
                            for k, v in r["phases"].items())
            print(f"  rep {rep + 1}, {r['claims']} claims, {r['scopes']} scopes: total {r['total']:.2f} s ({ph}); "
                  f"peak RSS {r['rss_mb']:.0f} MB (largest extraction worker {r['worker_rss_mb']:.0f} MB)", flush=True)
    print("\n| claims | scopes | total (median) | extract | pages | priors | audit | report | peak RSS | report.html "
          "| report.md | report.json (claims in it) | UI metadata |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    med: dict[int, float] = {}
    for n, rs in results.items():
        if not rs:
            continue
        med[n] = statistics.median(r["total"] for r in rs)
        p = {k: statistics.median(r["phases"][k] for r in rs) for k in rs[0]["phases"]}
        last = rs[-1]
        mb = {k: v / 1e6 for k, v in last["sizes"].items()}
        print(f"| {last['claims']:,} | {last['scopes']:,} | {med[n]:.1f} s | {p['extract']:.1f} s | {p['pages']:.1f} s | "
              f"{p['priors']:.1f} s | {p['audit']:.1f} s | {p['report']:.1f} s | "
              f"{max(r['rss_mb'] for r in rs):.0f} MB | {mb['report.html']:.2f} MB | {mb['report.md']:.2f} MB | "
              f"{mb['report.json']:.1f} MB ({last['report_json_claims']:,}) | {last['ui_metadata_bytes'] / 1e3:.0f} kB |")
    print(f"load average at the end: {load_average()}")
    sizes = sorted(med)
    for small, big in zip(sizes, sizes[1:], strict=False):
        print(f"time ratio {big:,} ÷ {small:,} claims: {med[big] / med[small]:.2f}× for {big / small:.0f}× the claims "
              f"(target ≤ {1.1 * big / small:.0f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
