"""report.html's rendering alone (report.html_report.render_html) at scale: CPU seconds on the same audit tables,
this working tree against other revisions in the same run (so a busy machine moves every arm).

It first builds, untimed and once (kept under --work, reused by later runs), the audit tables of bench_scale.py's
synthetic corpus at --size claims: bench_scale's prepared corpus and page cache (prepared first if missing), then
extract, pages, priors and the audit step with this working tree, into <work>/synth-<size>/render-home.
Then each round renders report.html once per arm, in a child process per arm and round whose PYTHONPATH is that
arm's claims_pipeline (a revision's is exported with git archive), which loads the tables with its own code and
times one render_html by process_time, as the report step renders once per process (templates compiled and caches
filled within it). It prints
each arm's CPU per round, the medians, working tree ÷ each revision, and whether each revision writes the same
bytes as the working tree. --profile: cProfile of the working tree's render, the top functions by own time.

Run: .venv/bin/python benchmarks/bench_report_render.py [--size 100000] [--ab ea71323 HEAD] [--rounds 5]
     [--profile 25] [--work /tmp/bench_scale]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))


def tables_home(work: Path, size: int) -> Path:
    """The home whose audit/tables hold the audit of `size` synthetic claims; built once."""
    from bench_scale import bench_settings, prepare

    synth = work / f"synth-{size}"
    home = synth / "render-home"
    if (home / "tables-ready").is_file():
        return home
    prepare(synth, size)
    from datetime import UTC, datetime

    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.corpus.extract import list_scopes
    from claims_pipeline.priors import PriorRules
    from claims_pipeline.steps.audit.cross_scope import audit_scopes
    from claims_pipeline.steps.corpus import claims_by_scope
    from claims_pipeline.steps.pages.fetched import refresh_scope_pages
    from claims_pipeline.steps.priors import priors_by_scope
    from claims_pipeline.store.cache import PageCache

    t = time.perf_counter()
    s = bench_settings(synth, home)
    corpus, rules = corpus_source(s), PriorRules.of(s.priors, s.fetch)
    scopes = sorted(list_scopes(corpus))
    extracted = claims_by_scope(corpus, scopes)
    with PageCache.at(s.page_cache) as cache:
        pages = refresh_scope_pages(s.home_dir, extracted.values, cache, lambda urls: cache.states(urls, with_text=False))
        priors = priors_by_scope(rules, extracted.values, pages.values, cache)
        audit_scopes(s.home_dir, rules, extracted.values, pages.values, priors.values, cache, datetime.now(UTC), scopes)
    (home / "tables-ready").write_text(str(home / "audit" / "tables") + "\n")
    print(f"  built the audit tables of {size} claims in {time.perf_counter() - t:.1f} s (untimed)", flush=True)
    return home


def load(tables_dir: Path) -> tuple[Any, Any, list[Any]]:
    """This PYTHONPATH's render_html and the audit, as its own code reads the tables, with a two-point history."""
    try:
        from claims_pipeline.steps.audit.tables import load_audit
    except ImportError:  # a revision before the steps layer
        from claims_pipeline.audit_tables import load_audit  # type: ignore[no-redef]
    from claims_pipeline.report.history import AuditPoint, point_of
    from claims_pipeline.report.html_report import render_html

    audit = load_audit(tables_dir)
    history = [AuditPoint("2026-01-01T00:00:00+00:00", 90, 9, 3, 1), point_of(audit.run_at, audit.headline)]
    return render_html, audit, history


def child(tables_dir: Path) -> dict[str, Any]:
    """CPU of one render_html in a fresh process, as the report step renders (templates compiled, caches empty),
    and the digest of what it wrote."""
    import claims_pipeline
    import claims_pipeline.report.html_report as html_report

    render_html, audit, history = load(tables_dir)
    counting = [0.0]
    counts_by_scope = html_report.counts_by_scope

    def timed_counts(*args: Any) -> Any:
        c = time.process_time()
        try:
            return counts_by_scope(*args)
        finally:
            counting[0] += time.process_time() - c

    html_report.counts_by_scope = timed_counts  # type: ignore[assignment]
    gc.collect()
    c = time.process_time()
    html = render_html(audit, "2026-01-01T00:00:00+00:00", history)
    cpu = time.process_time() - c
    return {"cpu": cpu, "counts_cpu": counting[0], "sha256": hashlib.sha256(html.encode()).hexdigest(),
            "bytes": len(html.encode()), "claims": len(audit.priors),
            "package": str(Path(claims_pipeline.__file__).parent)}


def profile(tables_dir: Path, top: int) -> None:
    render_html, audit, history = load(tables_dir)
    prof = cProfile.Profile()
    prof.enable()
    render_html(audit, "2026-01-01T00:00:00+00:00", history)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def export(rev: str, into: Path) -> Path:
    """REV's claims_pipeline, exported with git archive into `into`/<rev>."""
    dest = into / rev.replace("/", "_")
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "claims_pipeline"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def run_arm(path: Path, tables_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(path), "PYTHONWARNINGS": "ignore"}
    out = subprocess.run([sys.executable, __file__, "--child", str(tables_dir)], env=env, check=True,
                         capture_output=True, text=True, timeout=1800).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="claims of the synthetic corpus (bench_scale's shape)")
    ap.add_argument("--ab", nargs="*", default=[], metavar="REV", help="revisions to render against, same run")
    ap.add_argument("--rounds", type=int, default=5, help="child processes per arm (arms alternate)")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile the working tree: top N by own time")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_scale"), help="bench_scale.py's --work")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    tables_dir = tables_home(args.work, args.size) / "audit" / "tables"
    if args.profile:
        profile(tables_dir, args.profile)
    with tempfile.TemporaryDirectory(prefix="bench_report_render-") as tmp:
        arms = {"working tree": REPO, **{rev: export(rev, Path(tmp)) for rev in args.ab}}
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in arms}
        for k in range(args.rounds):
            for name, path in arms.items():  # arms alternate, so a busy spell on the machine hits each
                r = run_arm(path, tables_dir)
                results[name].append(r)
                print(f"  round {k + 1} {name:12s}: render_html CPU {r['cpu']:.3f} s, of which counts_by_scope "
                      f"{r['counts_cpu']:.3f} s ({r['claims']:,} claims, report.html {r['bytes'] / 1e6:.2f} MB)",
                      flush=True)
    med = {name: statistics.median(r["cpu"] for r in rs) for name, rs in results.items()}
    # the rest: the page's writing (templates, or the strings built by hand before them) and the rows' preparation
    rest = {name: statistics.median(r["cpu"] - r["counts_cpu"] for r in rs) for name, rs in results.items()}
    ours = results["working tree"][0]["sha256"]
    print(f"render_html CPU, median of {args.rounds}: " + ", ".join(f"{n} {m:.3f} s" for n, m in med.items()))
    print("the same less counts_by_scope (the counted sections' tallies): "
          + ", ".join(f"{n} {m:.3f} s" for n, m in rest.items()))
    for rev in args.ab:
        same = "the same bytes" if results[rev][0]["sha256"] == ours else "different bytes"
        print(f"working tree ÷ {rev}: {med['working tree'] / med[rev]:.3f}; less counts_by_scope "
              f"{rest['working tree'] / rest[rev]:.3f} ({same} as the working tree)")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
