"""Benchmark of the Dagster layer. Prints:
1. the demo audit's wall time (all 4 demo scopes, one in-process run);
2. one scope rematerialized (`audit --scope xb`: its assets, then the audit over all stored scopes);
3. a 120-scope whole-corpus backfill on the fixture web (one single-run-backfill run: 6 per-scope assets ×
   120 partitions, the audit, the report and every check) against the same work done by plain library calls
   in one process (same corpus, same URLs, same fixture web, same fetch settings), as a ratio (target ≤ 1.5).
   Two fetch settings, printed separately:
   (a) "bench": near-zero politeness intervals, so the ratio is pure orchestration overhead;
   (b) "project": the fetch settings of config/claims_pipeline.example.yaml (per-host intervals, req/s cap,
       retries), only routed to the fixture web: the work a real audit does.
   Arms alternate and each repetition starts from a fresh output home; the median ratio is reported. For
   comparison, one Dagster run with Dagster's stock SQLite event log (the "before" of
   claims_pipeline/defs/event_log_storage.py) is timed too.
Everything talks to 127.0.0.1 only. Run: .venv/bin/python benchmarks/bench_audit.py [--scopes 120]
  [--reps 3] [--project-reps 1] [--politeness bench|project|both] [--no-stock-log] [--subset-planned]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from datetime import UTC
from pathlib import Path

import yaml

warnings.filterwarnings("ignore")


def make_corpus(root: Path, n_scopes: int, claims_per_scope: int = 3) -> list[str]:
    names = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcdefghijklmnopqrstuvwxyz"][:n_scopes]
    for i, iso in enumerate(names):
        d = root / "countries" / iso
        d.mkdir(parents=True)
        lines = [f"# Bench country {iso} (fictional)\n", "## Section: `--costs`\n"]
        for j in range(claims_per_scope):
            host = f"www{i % 12}.gov.xz"  # 12 hosts: per-host politeness shares out like a real corpus
            lines.append(f"- Duty **{j + 2}.5%** of the price ([Revenue](http://{host}/_/page/{iso}-{j})) (2026-01-0{j + 1} verified)\n")
        lines.append("\n**Last verified**: 2026-01-15\n")
        (d / "playbook.md").write_text("\n".join(lines), encoding="utf-8")
    return [f for f in names]


BENCH_FETCH = {  # (a) near-zero politeness: what is left is orchestration overhead
    "concurrency": 32, "req_per_sec": 1000,
    "default_host": {"concurrency": 4, "interval_ms": 0}, "gov_host": {"concurrency": 4, "interval_ms": 0},
    "per_host_overrides": {}, "request_timeout_s": 5, "max_retries": 1, "retry_backoff_s": [0.05],
}
PROJECT_CONFIG = Path(__file__).resolve().parent.parent / "config" / "claims_pipeline.example.yaml"


def project_fetch() -> dict:
    """(b) the project's own fetch settings (intervals, req/s, retries, timeouts), unchanged."""
    return dict(yaml.safe_load(PROJECT_CONFIG.read_text(encoding="utf-8"))["fetch"])


def bench_config(home: Path, corpus: Path, address: str, fetch: dict | None = None) -> Path:
    from claims_pipeline.config.settings import COUNTRIES_PRESET_DIRS, COUNTRIES_PRESET_RULES

    routed = {**(fetch if fetch is not None else BENCH_FETCH),
              # the only change to either profile: the fictional hosts go to the fixture web, nowhere else
              "address_map": {"*.xz": address}, "allow_networks": ["127.0.0.0/8"]}
    data = {
        "home": str(home),
        "extraction": {"corpus_dir": str(corpus), "scope_dirs": COUNTRIES_PRESET_DIRS, "scope_rules": COUNTRIES_PRESET_RULES},
        "fetch": routed,
    }
    path = home / "bench.yaml"
    home.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def plain_library(config: Path) -> dict:
    """The same work without Dagster: extract → refresh pages → priors → audit tables → reports."""
    from datetime import datetime

    from claims_pipeline.common.urls import normalize_url
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.corpus.extract import extract_corpus
    from claims_pipeline.corpus.linter import lint_corpus
    from claims_pipeline.priors import PriorRules, build_prior
    from claims_pipeline.report import write_reports
    from claims_pipeline.report.audit import build_audit
    from claims_pipeline.steps.audit.tables import tables_dir, write_tables
    from claims_pipeline.steps.pages.refresh import refresh_pages
    from claims_pipeline.store.cache import PageCache

    s = load_settings(config)
    corpus = corpus_source(s)
    ex = extract_corpus(corpus)
    lint_corpus(corpus, s.linter)
    urls = sorted({c.source_url for c in ex.claims})
    with PageCache.at(s.page_cache) as cache:
        got = refresh_pages(s.page_fetching, urls, cache=cache)
    pages = {u: got[normalize_url(u)] for u in urls if normalize_url(u) in got}
    priors = {c.id: build_prior(c, pages.get(c.source_url), PriorRules.of(s.priors, s.fetch)) for c in ex.claims}
    audit = build_audit(ex.claims, pages, priors, run_at=datetime.now(UTC))
    write_tables(audit.to_tables(), tables_dir(s.home_dir))
    write_reports(audit, s.reports_dir / "plain")
    return audit.headline


def use_dagster_home(path: Path, *, stock_event_log: bool = False) -> None:
    """Point the CLI at this instance folder; its dagster.yaml is the project's template (optionally without
    the batching event log, for the stock comparison)."""
    from claims_pipeline.orchestration.instance import INSTANCE_TEMPLATES

    path.mkdir(parents=True, exist_ok=True)
    text = INSTANCE_TEMPLATES["sqlite"].read_text(encoding="utf-8")
    if stock_event_log:
        text = text.split("\nevent_log_storage:")[0] + "\n"
    (path / "dagster.yaml").write_text(text, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(path)


def run_events(dagster_home: Path) -> int:
    import dagster as dg

    with dg.DagsterInstance.from_config(str(dagster_home)) as inst:
        run = inst.get_runs(limit=1)[0]
        return len(inst.all_logs(run.run_id))


def backfill_pair(tmp: Path, tag: str, corpus: Path, address: str, fetch: dict | None, dagster_home: Path) -> tuple[float, float, int]:
    """One plain run and one Dagster run, each from a fresh output home (fresh page cache)."""
    from claims_pipeline.commands.audit import audit
    from claims_pipeline.config.settings import load_settings

    t = time.perf_counter()
    headline = plain_library(bench_config(tmp / f"plain-{tag}", corpus, address, fetch))
    plain_s = time.perf_counter() - t
    t = time.perf_counter()
    assert audit(load_settings(bench_config(tmp / f"dagster-{tag}", corpus, address, fetch)), quiet=True) == 0
    dag_s = time.perf_counter() - t
    return plain_s, dag_s, headline["total"]


def report_profile(label: str, pairs: list[tuple[float, float, int]], n_scopes: int, events: int) -> None:
    ratios = [d / p for p, d, _ in pairs]
    for i, (p, d, n) in enumerate(pairs, 1):
        print(f"  rep {i}: plain {p:6.2f} s · Dagster {d:6.2f} s · ratio {d / p:.2f} · overhead {d - p:+.2f} s ({n} claims)")
    med_p = statistics.median(p for p, _, _ in pairs)
    med_d = statistics.median(d for _, d, _ in pairs)
    print(f"  {label}: median plain {med_p:.2f} s, median Dagster {med_d:.2f} s, "
          f"median ratio dagster/plain {statistics.median(ratios):.2f} (target ≤ 1.5); "
          f"{events} events in the Dagster run")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scopes", type=int, default=120)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the (a) bench-politeness pair")
    ap.add_argument("--project-reps", type=int, default=1, help="repetitions of the (b) project-politeness pair (~40 s each arm)")
    ap.add_argument("--politeness", choices=["bench", "project", "both"], default="both")
    ap.add_argument("--no-stock-log", action="store_true", help="skip the comparison run with Dagster's stock event log")
    ap.add_argument("--subset-planned", action="store_true",
                    help="also time one run with DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS=1 (a what-if, not the default)")
    args = ap.parse_args()
    from claims_pipeline.commands.audit import audit
    from claims_pipeline.commands.demo import write_runtime_config
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    tmp = Path(tempfile.mkdtemp(prefix="bench_audit_"))
    main_home = tmp / "dagster"
    use_dagster_home(main_home)
    with FixtureWeb() as web:
        address = f"127.0.0.1:{web.port}"
        # 1. the demo audit
        (tmp / "demo").mkdir()
        demo_cfg = write_runtime_config(tmp / "demo", address)
        t = time.perf_counter()
        assert audit(load_settings(demo_cfg), quiet=True) == 0
        elapsed = time.perf_counter() - t
        from claims_pipeline.config.corpus_source import corpus_source
        from claims_pipeline.corpus.extract import extract_corpus

        demo = extract_corpus(corpus_source(load_settings(demo_cfg)))
        print(f"demo audit ({len({c.scope for c in demo.claims})} scopes, {len(demo.claims)} claims, one run): {elapsed:.2f} s")
        # 2. one scope rematerialized
        t = time.perf_counter()
        assert audit(load_settings(demo_cfg), scope="xb", quiet=True) == 0
        print(f"one scope rematerialized (xb, then the audit over all scopes): {time.perf_counter() - t:.2f} s")

        # 3. the whole-corpus backfill vs the plain library in one process
        corpus = tmp / "corpus"
        make_corpus(corpus, args.scopes)
        print(f"{args.scopes}-scope backfill (one single-run-backfill run: 6 scope assets × {args.scopes} partitions "
              f"+ audit + report + 4 checks) vs plain library calls in one process, same corpus/URLs/fixture web/fetch settings:")
        if args.politeness in ("bench", "both"):
            bench_home = tmp / "dagster-backfill"
            use_dagster_home(bench_home)
            pairs = [backfill_pair(tmp, f"a{i}", corpus, address, None, bench_home) for i in range(args.reps)]
            print("(a) bench politeness (interval 0 ms, 4 connections/host): pure orchestration overhead")
            report_profile("(a)", pairs, args.scopes, run_events(bench_home))
            if not args.no_stock_log:
                stock_home = tmp / "dagster-stock-log"
                use_dagster_home(stock_home, stock_event_log=True)
                p, d, _ = backfill_pair(tmp, "stock", corpus, address, None, stock_home)
                print(f"  for comparison, Dagster's stock SqliteEventLogStorage (one event per transaction): "
                      f"plain {p:.2f} s · Dagster {d:.2f} s · ratio {d / p:.2f} ({run_events(stock_home)} events)")
            if args.subset_planned:
                # not the project's default: with one planned event per asset, a failed run's partitions are
                # not shown as failed in the asset's partition status (Dagster's documented trade-off)
                os.environ["DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"] = "1"
                try:
                    use_dagster_home(bench_home)
                    p, d, _ = backfill_pair(tmp, "subset", corpus, address, None, bench_home)
                finally:
                    del os.environ["DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"]
                print(f"  what-if, DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS=1 (one planned event per asset, "
                      f"not per partition; not enabled: failed partitions would not show as failed): "
                      f"plain {p:.2f} s · Dagster {d:.2f} s · ratio {d / p:.2f} ({run_events(bench_home)} events)")
        if args.politeness in ("project", "both"):
            project_home = tmp / "dagster-project"
            use_dagster_home(project_home)
            f = project_fetch()
            pairs = [backfill_pair(tmp, f"b{i}", corpus, address, f, project_home) for i in range(args.project_reps)]
            print(f"(b) project politeness (config/claims_pipeline.example.yaml fetch: gov hosts {f['gov_host']}, "
                  f"req_per_sec {f['req_per_sec']}): what a real audit does")
            report_profile("(b)", pairs, args.scopes, run_events(project_home))
    return 0


if __name__ == "__main__":
    sys.exit(main())
