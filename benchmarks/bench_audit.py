"""Benchmark of the Dagster layer. Prints:
1. the demo audit's wall time (all 4 demo scopes, one in-process run);
2. one scope rematerialized (`audit --scope xb`: its assets, then the audit over all stored scopes);
3. a 120-scope whole-corpus backfill on the fixture web (one single-run-backfill run) against the same work
   done by plain library calls in one process, as a ratio (target ≤ 1.5).
Everything talks to 127.0.0.1 only. Run: .venv/bin/python benchmarks/bench_audit.py [--scopes 120]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
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


def bench_config(home: Path, corpus: Path, address: str) -> Path:
    data = {
        "home": str(home),
        "extraction": {"corpus_dir": str(corpus), "scope_dirs": ["countries", "shared"]},
        "fetch": {
            "concurrency": 32, "req_per_sec": 1000,
            "default_host": {"concurrency": 4, "interval_ms": 0}, "gov_host": {"concurrency": 4, "interval_ms": 0},
            "per_host_overrides": {}, "request_timeout_s": 5, "max_retries": 1, "retry_backoff_s": [0.05],
            "address_map": {"*.xz": address}, "allow_networks": ["127.0.0.0/8"],
        },
    }
    path = home / "bench.yaml"
    home.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def plain_library(config: Path) -> dict:
    """The same work without Dagster: extract → refresh pages → priors → audit tables → reports."""
    from claims_pipeline.audit import build_audit
    from claims_pipeline.corpus.extract import extract_corpus
    from claims_pipeline.corpus.linter import lint_corpus
    from claims_pipeline.defs.audit_tables_io import tables_dir, write_tables
    from claims_pipeline.pages import refresh_pages
    from claims_pipeline.priors import build_prior
    from claims_pipeline.report import write_reports
    from claims_pipeline.settings import load_settings
    from claims_pipeline.store.cache import PageCache
    from claims_pipeline.urls import normalize_url
    from datetime import datetime, timezone

    s = load_settings(config)
    ex = extract_corpus(s)
    lint_corpus(s)
    urls = sorted({c.source_url for c in ex.claims})
    with PageCache.from_settings(s) as cache:
        got = refresh_pages(s, urls, cache=cache)
    pages = {u: got[normalize_url(u)] for u in urls if normalize_url(u) in got}
    priors = {c.id: build_prior(c, pages.get(c.source_url), s) for c in ex.claims}
    audit = build_audit(ex.claims, pages, priors, run_at=datetime.now(timezone.utc))
    write_tables(audit.to_tables(), tables_dir(s.home_dir))
    write_reports(audit, s.reports_dir / "plain")
    return audit.headline


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scopes", type=int, default=120)
    args = ap.parse_args()
    from claims_pipeline.commands.audit import audit
    from claims_pipeline.commands.demo import write_runtime_config
    from claims_pipeline.fixture_web.server import FixtureWeb

    tmp = Path(tempfile.mkdtemp(prefix="bench_audit_"))
    os.environ["DAGSTER_HOME"] = str(tmp / "dagster")
    (tmp / "dagster").mkdir()
    with FixtureWeb() as web:
        address = f"127.0.0.1:{web.port}"
        # 1. the demo audit
        demo_cfg = write_runtime_config((tmp / "demo").resolve() if (tmp / "demo").mkdir() is None else tmp, address)
        t = time.perf_counter()
        assert audit(str(demo_cfg), fixture_web="off", quiet=True) == 0
        demo_s = time.perf_counter() - t
        print(f"demo audit (4 scopes, 24 claims, one run): {demo_s:.2f} s")
        # 2. one scope rematerialized
        t = time.perf_counter()
        assert audit(str(demo_cfg), scope="xb", fixture_web="off", quiet=True) == 0
        print(f"one scope rematerialized (xb, then the audit over all scopes): {time.perf_counter() - t:.2f} s")

        # 3. the 120-scope backfill vs the plain library in one process (fresh homes, same fixture web)
        corpus = tmp / "corpus"
        make_corpus(corpus, args.scopes)
        plain_cfg = bench_config(tmp / "plain", corpus, address)
        dag_cfg = bench_config(tmp / "dagster_home", corpus, address)
        t = time.perf_counter()
        headline_plain = plain_library(plain_cfg)
        plain_s = time.perf_counter() - t
        t = time.perf_counter()
        assert audit(str(dag_cfg), fixture_web="off", quiet=True) == 0
        dag_s = time.perf_counter() - t
        print(f"{args.scopes}-scope backfill, plain library in one process: {plain_s:.2f} s "
              f"({headline_plain['total']} claims)")
        print(f"{args.scopes}-scope backfill, Dagster single-run backfill (all scope assets + audit + report + checks): {dag_s:.2f} s")
        print(f"ratio dagster/plain: {dag_s / plain_s:.2f} (target ≤ 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
