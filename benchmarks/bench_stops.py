"""How long `claims-pipeline audit` takes to stop after SIGINT or SIGTERM, at each stage of a run.

The corpus, fixture web and stages of the stops test (claims_pipeline_tests/support/stopped_audit.py): a real audit in its own process
group, the signal sent to the group once the stage is reached (Dagster starting, mid-fetch, in a 30 s robots.txt
Crawl-delay, the priors), `--rounds` times per stage and signal. Printed per stage and signal: the exit statuses
seen and the time from the signal to the process's end (min / median / max), then whether every run was recorded
CANCELED and the cache passed its consistency check after each stop.

Usage: .venv/bin/python benchmarks/bench_stops.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import dagster as dg
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from claims_pipeline.config.settings import load_settings  # noqa: E402
from claims_pipeline.orchestration.instance import prepare_dagster_home  # noqa: E402
from claims_pipeline.store.cache import PageCache  # noqa: E402
from claims_pipeline.store.consistency import verify_cache  # noqa: E402
from claims_pipeline_demo.fixture_web.server import FixtureWeb  # noqa: E402
from claims_pipeline_tests.support.fixture_settings import fixture_config  # noqa: E402
from claims_pipeline_tests.support.hostile import cli_env  # noqa: E402
from claims_pipeline_tests.support.stopped_audit import (  # noqa: E402
    CRAWL_DELAY_S,
    Audit,
    instance_at,
    newest_run,
    step_started,
    until,
    write_corpus,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-stops-"))
    sites = root / "sites"
    (sites / "polite.fixture").mkdir(parents=True)
    robots = sites / "polite.fixture" / "robots.txt"
    dagster_home = root / "dagster"
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    with FixtureWeb(sites) as web:
        data = fixture_config(web, root / "home", concurrency=2, run_budget_s=120, robots_cache_hours=0, host_lease_s=0)
        data["extraction"] = {"corpus_dir": str(write_corpus(root / "corpus")),
                              "primary_allowlist": ["slow.fixture", "polite.fixture"]}
        cfg = root / "audit.yaml"
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        prepare_dagster_home(load_settings(cfg).home_dir)
        with instance_at(dagster_home):
            pass
        env = cli_env(root)
        seen: set[str] = set()
        stages = {
            "Dagster starting": lambda: step_started(dagster_home, "claims", seen),
            "mid-fetch": lambda: any("/_/slow" in e["path"] for e in web.requests(settle_s=0)),
            f"in a {CRAWL_DELAY_S} s Crawl-delay": lambda: any(
                e["host"] == "polite.fixture" and e["path"] == "/robots.txt" for e in web.requests(settle_s=0)),
            "in the priors": lambda: step_started(dagster_home, "priors", seen),
        }
        times: dict[tuple[str, str], list[float]] = defaultdict(list)
        codes: dict[tuple[str, str], set[int]] = defaultdict(set)
        canceled = consistent = total = 0
        for _ in range(args.rounds):
            for stage, ready in stages.items():
                for sig in (signal.SIGINT, signal.SIGTERM):
                    web.clear_log()
                    if "Crawl-delay" in stage:
                        robots.write_text(f"User-agent: *\nCrawl-delay: {CRAWL_DELAY_S}\n", encoding="utf-8")
                    audit = Audit(cfg, env, root)
                    until(ready, audit, stage)
                    sent = audit.signal(sig)
                    code, _ = audit.wait()
                    key = (stage, sig.name)
                    times[key].append(time.monotonic() - sent)
                    codes[key].add(code)
                    robots.unlink(missing_ok=True)
                    run = newest_run(dagster_home)
                    total += 1
                    canceled += bool(run is not None and run.status == dg.DagsterRunStatus.CANCELED)
                    if run is not None:
                        seen.add(run.run_id)
                    with PageCache.at(load_settings(cfg).page_cache) as cache:
                        consistent += verify_cache(cache).ok
    print(f"{'stage':28s} {'signal':8s} {'exit':>6s} {'min s':>7s} {'median':>7s} {'max s':>7s}")
    for (stage, sig), values in times.items():
        print(f"{stage:28s} {sig:8s} {','.join(map(str, sorted(codes[(stage, sig)]))):>6s} {min(values):7.2f} "
              f"{statistics.median(values):7.2f} {max(values):7.2f}")
    print(f"runs recorded CANCELED: {canceled} of {total}; cache consistent after the stop: {consistent} of {total}")


if __name__ == "__main__":
    main()
