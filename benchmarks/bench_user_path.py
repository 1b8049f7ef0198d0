"""The audit users run, against the core steps it stands on: arms interleaved round by round on ONE prepared
synthetic corpus and page cache (benchmarks/bench_scale.py prepares them), the cited pages served by the fixture
web on 127.0.0.1 (one process of its own, at epoch 2, the state the cache was left in).

Arms, in this order in every round, each a fresh process with a fresh home over the shared page cache:
  core      bench_scale.py --child: the audit's core steps as plain calls (extract, the pages' states from the
            cache without a fetch, priors, audit tables, report)
  fetch     the fetcher alone for the same conditional GETs the audit sends: web.fetcher.fetch_urls over every
            cited URL with the cache's validators (ETag / Last-Modified), robots.txt from the cache and the host
            leases, as the run's fetcher has them; nothing recorded. Its figure: the fetch call's wall (the
            process's import and cache read are left out)
  cli       `claims-pipeline audit` (the CLI's in-process Dagster run, force_refresh: every page re-asked)
  dagster   `dagster job execute -m claims_pipeline.definitions -j audit_corpus` over the partition range of
            every scope (the scopes added to the instance first, untimed, as the corpus sensor does)
  cached    `claims-pipeline audit` with FetcherResource.force_refresh False: pages younger than cache.ttl_days
            come from the cache (only the unusable ones are asked again)
For each arm: wall; CPU of the whole process tree (os.wait4's rusage: the process and every descendant it waited
for, pool workers included); the tree's peak RSS (the largest sum of RSS over the process and its descendants,
sampled every 0.2 s by psutil; the largest single process's ru_maxrss beside it); and the ratios to its own
round's arms: wall ÷ (core + fetch) and wall ÷ core, and CPU ÷ (core's CPU + the fetch call's CPU), steadier than
wall on a shared machine. For the Dagster arms also each step's time from the run's
event log, the events of the run and the size of DAGSTER_HOME after it (the run's history).

The load average is printed at each arm's start: the machine is shared, compare arms within one round.

Run: .venv/bin/python benchmarks/bench_user_path.py [--sizes 10000 100000] [--rounds 2 1] [--work /tmp/bench_scale]
     [--arms core fetch cli dagster cached]
(--rounds: one count per size, or one for all; preparing 100k fetches 20,000 URLs three times, once per --work)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

ARMS = ("core", "fetch", "cli", "dagster", "cached")
CLI = "import sys; from claims_pipeline.cli import main; sys.exit(main(sys.argv[1:]))"
# the audit with force_refresh off (a ClassVar of the resource, not run config: set here before the CLI runs)
CLI_CACHED = ("import sys; from claims_pipeline.defs.resources import FetcherResource; "
              "FetcherResource.force_refresh = False; from claims_pipeline.cli import main; sys.exit(main(sys.argv[1:]))")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def start_web(sites: Path, epoch: int) -> tuple[subprocess.Popen, int]:
    """The fixture web in its own process (its CPU is no arm's), serving the pages of epoch."""
    from bench_fetch import start_fixture_web

    return start_fixture_web(sites, "--epoch", str(epoch), wait_s=30)


def write_config(work: Path, home: Path, address: str, out: Path) -> Path:
    """synthetic.yaml with its home at `home`, the page cache at the prepared one and the fictional TLDs routed to
    the fixture web at `address`."""
    data = yaml.safe_load((work / "synthetic.yaml").read_text(encoding="utf-8"))
    data["home"] = str(home)
    data.setdefault("cache", {}).update({"db_url": f"sqlite:///{work / 'cache' / 'index.sqlite'}",
                                         "blob_dir": str(work / "cache" / "blobs")})
    data["fetch"]["address_map"] = {k: address for k in data["fetch"]["address_map"]}
    data["fetch"]["allow_networks"] = ["127.0.0.1/32"]
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def cited_urls(work: Path) -> list[str]:
    """Every URL the corpus cites, normalised and deduplicated (the fetch's list), computed once per --work."""
    path = work / "urls.json"
    if not path.is_file():
        from bench_scale import bench_settings

        from claims_pipeline.config.corpus_source import corpus_source
        from claims_pipeline.corpus.extract import extract_corpus
        from claims_pipeline.steps.pages.refresh import unique_urls

        s = bench_settings(work, work / "home")
        path.write_text(json.dumps(unique_urls(c.source_url for c in extract_corpus(corpus_source(s)).claims)))
    return list(json.loads(path.read_text()))


def measure(cmd: list[str], env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run `cmd`; its wall, the CPU of its process tree (wait4's rusage counts every descendant it waited for),
    the tree's peak summed RSS (sampled) and the largest single process's ru_maxrss."""
    peak = [0]
    with log.open("wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO)
        done = threading.Event()

        def sample() -> None:
            try:
                root = psutil.Process(proc.pid)
            except psutil.NoSuchProcess:
                return
            while not done.is_set():
                total = 0
                try:
                    for p in [root, *root.children(recursive=True)]:
                        try:
                            total += p.memory_info().rss
                        except psutil.NoSuchProcess:
                            pass
                except psutil.NoSuchProcess:
                    return
                peak[0] = max(peak[0], total)
                done.wait(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "tree_rss_mb": peak[0] / 2**20,
            "max_rss_mb": usage.ru_maxrss / 1024, "exit": proc.returncode}


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6 if path.exists() else 0.0


def run_history(dagster_home: Path) -> dict[str, Any]:
    """The newest run's step times (STEP_START → STEP_SUCCESS/FAILURE), its event count, and DAGSTER_HOME's size."""
    out = subprocess.run([sys.executable, __file__, "--history", str(dagster_home)], capture_output=True, text=True,
                         env={**os.environ, "DAGSTER_HOME": str(dagster_home)}, cwd=REPO, timeout=600)
    try:
        got: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": out.stderr[-500:]}
    got["dagster_home_mb"] = dir_mb(dagster_home)
    return got


def history_child(dagster_home: Path) -> dict[str, Any]:
    import dagster as dg

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = instance.get_runs(limit=1)
        if not runs:
            return {"error": "no run"}
        run = runs[0]
        records = instance.get_records_for_run(run.run_id, limit=1_000_000).records
        starts: dict[str, float] = {}
        steps: dict[str, float] = {}
        for r in records:
            e = r.event_log_entry
            ev = e.dagster_event
            if ev is None or not e.step_key:
                continue
            if ev.event_type_value == "STEP_START":
                starts[e.step_key] = e.timestamp
            elif ev.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and e.step_key in starts:
                steps[e.step_key] = round(e.timestamp - starts[e.step_key], 2)
        first, last = records[0].event_log_entry.timestamp, records[-1].event_log_entry.timestamp
        return {"status": run.status.value, "events": len(records), "steps": steps, "run_span": round(last - first, 2)}


def fetch_child(config: Path, urls_path: Path) -> dict[str, Any]:
    """The fetcher alone for the audit's conditional GETs (no recording)."""
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.store.cache import PageCache
    from claims_pipeline.store.host_leases import HostLeases
    from claims_pipeline.store.robots_table import RobotsTable
    from claims_pipeline.web.fetcher import fetch_urls

    s = load_settings(config)
    urls = json.loads(urls_path.read_text())
    with PageCache.at(s.page_cache) as cache:
        bases = cache.conditional_bases(urls)
        validators = {u: (b.etag, b.last_modified) for u, b in bases.items()}
        fetch = s.fetch
        leases = HostLeases(cache.engine, fetch) if fetch.host_lease_s > 0 else None
        c0, w0 = time.process_time(), time.perf_counter()
        results = fetch_urls(fetch, s.pdf, urls, validators=validators, robots_store=RobotsTable(cache.engine),
                             host_leases=leases)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    from collections import Counter

    return {"fetch_wall": wall, "fetch_cpu": cpu, "urls": len(urls), "validators": len(validators),
            "statuses": dict(Counter(r.status.value for r in results))}


def setup_dagster(config: Path) -> dict[str, str]:
    """Untimed, before the dagster arm: the instance under <home>/dagster with every scope as a partition (what the
    corpus sensor does in a deployment); returns the range tags of a run over all of them."""
    out = subprocess.run([sys.executable, __file__, "--setup-dagster", str(config)], capture_output=True, text=True,
                         env={**os.environ, "CLAIMS_PIPELINE_CONFIG": str(config)}, cwd=REPO, check=True, timeout=600)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def setup_dagster_child(config: Path) -> dict[str, str]:
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.corpus.scopes import walk_corpus
    from claims_pipeline.defs.partitions import range_tags
    from claims_pipeline.orchestration.instance import open_instance
    from claims_pipeline.orchestration.runner import sync_scope_partitions

    s = load_settings(config)
    scopes = list(walk_corpus(corpus_source(s)).scopes)
    instance = open_instance(s.home_dir)
    sync_scope_partitions(instance, scopes)
    instance.dispose()
    return range_tags(scopes)


def run_arm(arm: str, work: Path, rnd: int, port: int, urls_path: Path, logs: Path) -> dict[str, Any]:
    home = work / f"user-home-{arm}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    config = write_config(work, home, f"127.0.0.1:{port}", home / "config.yaml")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("DAGSTER_HOME", None)
    log = logs / f"{work.name}-r{rnd}-{arm}.log"
    extra: dict[str, Any] = {}
    if arm == "core":
        cmd = [sys.executable, str(HERE / "bench_scale.py"), "--child", str(work), str(home / "run")]
    elif arm == "fetch":
        cmd = [sys.executable, __file__, "--fetch-child", str(config), str(urls_path)]
    elif arm in ("cli", "cached"):
        cmd = [sys.executable, "-c", CLI if arm == "cli" else CLI_CACHED, "audit", "--config", str(config)]
        env["DAGSTER_HOME"] = str(home / "dagster")
    elif arm == "dagster":
        tags = setup_dagster(config)
        env.update({"CLAIMS_PIPELINE_CONFIG": str(config), "DAGSTER_HOME": str(home / "dagster")})
        cmd = [sys.executable, "-m", "dagster", "job", "execute", "-m", "claims_pipeline.definitions", "-a", "defs",
               "-j", "audit_corpus", "--tags", json.dumps(tags)]
    else:
        raise SystemExit(f"unknown arm {arm!r}")
    load = load_average()
    r = measure(cmd, env, log)
    r["load"] = load
    if r["exit"] != 0:
        tail = log.read_text(errors="replace")[-1500:]
        print(f"    {arm}: exit {r['exit']}; the end of {log}:\n{tail}", flush=True)
    if arm == "fetch":
        lines = log.read_text(errors="replace").strip().splitlines()
        extra = json.loads(lines[-1]) if lines else {}
    if arm in ("cli", "cached", "dagster"):
        extra = run_history(home / "dagster")
    r.update(extra)
    shutil.rmtree(home, ignore_errors=True)
    return r


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--fetch-child":
        print(json.dumps(fetch_child(Path(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--setup-dagster":
        print(json.dumps(setup_dagster_child(Path(sys.argv[2]))))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--history":
        print(json.dumps(history_child(Path(sys.argv[2]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, nargs="+", default=[2, 1], help="rounds per size (one value: all sizes)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_scale"))
    ap.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    args = ap.parse_args()
    rounds = args.rounds * len(args.sizes) if len(args.rounds) == 1 else args.rounds
    if len(rounds) != len(args.sizes):
        raise SystemExit("--rounds: one value, or one per size")
    from datetime import UTC, datetime

    from bench_scale import prepare

    print(f"bench_user_path: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, Python "
          f"{sys.version.split()[0]}, load average {load_average()}", flush=True)
    logs = args.work / "user-path-logs"
    logs.mkdir(parents=True, exist_ok=True)
    table: list[str] = []
    for n, rcount in zip(args.sizes, rounds, strict=True):
        work = args.work / f"synth-{n}"
        print(f"preparing {n} claims in {work}", flush=True)
        prepare(work, n)
        urls_path = work / "urls.json"
        urls = cited_urls(work)
        print(f"  {len(urls)} cited URLs", flush=True)
        web, port = start_web(work / "sites", epoch=2)
        results: dict[str, list[dict[str, Any]]] = {a: [] for a in args.arms}
        try:
            for rnd in range(rcount):
                got: dict[str, dict[str, Any]] = {}
                for arm in args.arms:
                    got[arm] = r = run_arm(arm, work, rnd, port, urls_path, logs)
                    results[arm].append(r)
                    more = ""
                    if arm == "fetch":
                        more = (f"; fetch call {r.get('fetch_wall', 0):.2f} s wall, {r.get('fetch_cpu', 0):.2f} s CPU, "
                                f"{r.get('statuses')}")
                    elif "steps" in r:
                        more = (f"; {r['status']}, {r['events']} events, DAGSTER_HOME {r['dagster_home_mb']:.1f} MB; "
                                f"steps {r['steps']}")
                    print(f"  [{n:,} round {rnd + 1}] {arm}: wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s, tree peak RSS "
                          f"{r['tree_rss_mb']:.0f} MB (largest process {r['max_rss_mb']:.0f} MB), exit {r['exit']}, "
                          f"load {r['load']}{more}", flush=True)
                core = got.get("core", {}).get("wall")
                fetch = got.get("fetch", {}).get("fetch_wall")
                for arm, r in got.items():
                    if arm in ("core", "fetch"):
                        continue
                    r["per_core"] = r["wall"] / core if core else None
                    r["per_floor"] = r["wall"] / (core + fetch) if core and fetch else None
                    # CPU against the same floor: steadier than wall on a shared machine
                    core_cpu, fetch_cpu = got.get("core", {}).get("cpu"), got.get("fetch", {}).get("fetch_cpu")
                    r["cpu_per_floor"] = r["cpu"] / (core_cpu + fetch_cpu) if core_cpu and fetch_cpu else None
        finally:
            web.kill()
            web.wait()
        for arm, rs in results.items():
            if not rs:
                continue
            walls = [r["wall"] for r in rs]
            rng = f" [{min(walls):.1f}–{max(walls):.1f}]" if len(rs) > 1 else ""

            def med(key: str, rs: list[dict[str, Any]] = rs) -> str:
                vals = [r[key] for r in rs if r.get(key) is not None]
                return f"{statistics.median(vals):.2f}" if vals else "—"

            fw = f" (fetch call {med('fetch_wall')})" if arm == "fetch" else ""
            table.append(f"| {n:,} | {arm} | {statistics.median(walls):.1f}{rng}{fw} | {med('cpu')} | "
                         f"{statistics.median(r['tree_rss_mb'] for r in rs):,.0f} MB | {med('per_floor')} | "
                         f"{med('per_core')} | {med('cpu_per_floor')} | {len(rs)} | {', '.join(r['load'].split()[0] for r in rs)} |")
    print("\n| claims | arm | wall s (median [range]) | CPU s, process tree | peak RSS, process tree | "
          "wall ÷ (core + fetch) | wall ÷ core | CPU ÷ (core + fetch) | rounds | load (1 min) at start |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(table))
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
