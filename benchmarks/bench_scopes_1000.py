"""1,000 scopes as partitions on one Dagster instance: the corpus sensor's tick, the asset pages'
GraphQL queries, and one scope rematerialized alone, each against the same on a small instance (--small scopes,
default 10) measured in the same run.

For each size, a synthetic corpus (make_synthetic_corpus.py: --files markdown files, one scope per country
folder and per shared file) is served by the fixture web, and a fresh Dagster instance (the project's SQLite
template, DAGSTER_HOME in a temporary folder) goes through what a deployment goes through:

 [1] corpus_sensor's first tick (every scope new: its partitions and its run requests), evaluated with
     dg.build_sensor_context against the real instance (as the daemon would, minus the daemon's own bookkeeping);
 [2] one audit_corpus run over every scope (a partition range, as the monthly schedule launches): its wall;
 [3] corpus_sensor's steady-state tick (nothing changed; median of --ticks) and the tick after one file's edit;
 [4] the asset pages' GraphQL queries, timed against a running dagster-webserver on the instance (the UI's own
     PartitionHealthQuery, partition stats, latest materialization, one partition's materializations; median of
     --repeat, after one warm-up each);
 [5] audit_scope for one scope alone (as the UI's launch or `claims-pipeline audit --scope X`: the scope's
     assets, then the cross-scope audit and report): run wall (RUN_START → RUN_SUCCESS in the event log) minus
     the sum of its steps' durations (STEP_START → STEP_SUCCESS; in-process executor, so steps do not overlap) =
     Dagster's overhead around the steps; events written by the run.

Usage: .venv/bin/python benchmarks/bench_scopes_1000.py [--scopes 1000] [--files 10000] [--claims 20000]
       [--urls 2000] [--hosts 100] [--small 10] [--ticks 5] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # the checkout: the tests' sensor helper
from bench_fetch import start_server  # noqa: E402
from bench_fetch_scale import machine_line  # noqa: E402
from make_synthetic_corpus import generate  # noqa: E402

from claims_pipeline_tests.support.sensor_results import apply_partition_requests  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PROBE_ASSET = "fetched_pages"  # a per-scope (partitioned) asset: its page is the one with the partitions bar

QUERIES = {
    # the UI's partitions bar on an asset page (Dagster's ui-core PartitionHealthQuery)
    "partition health": """query PartitionHealthQuery($assetKey: AssetKeyInput!) {
      assetNodeOrError(assetKey: $assetKey) { ... on AssetNode { id
        partitionKeysByDimension { name type partitionKeys }
        assetPartitionStatuses { ... on DefaultPartitionStatuses {
          materializedPartitions materializingPartitions failedPartitions } } } } }""",
    # the asset graph's and the asset list's live data: counts per asset and the latest materialization
    "partition stats + latest": """query LiveData($assetKeys: [AssetKeyInput!]!) {
      assetNodes(assetKeys: $assetKeys) { id assetKey { path }
        partitionStats { numMaterialized numMaterializing numPartitions numFailed } }
      assetsLatestInfo(assetKeys: $assetKeys) { assetKey { path } unstartedRunIds inProgressRunIds
        latestRun { id status } } }""",
    # the asset page's events tab: its latest materializations
    "latest materializations": """query AssetEvents($assetKey: AssetKeyInput!) {
      assetOrError(assetKey: $assetKey) { ... on Asset { id
        assetMaterializations(limit: 100) { runId partition timestamp metadataEntries { label } } } } }""",
    # one partition picked in the partitions tab
    "one partition": """query AssetPartition($assetKey: AssetKeyInput!, $partitions: [String!]) {
      assetOrError(assetKey: $assetKey) { ... on Asset { id
        assetMaterializations(partitions: $partitions, limit: 10) { runId partition timestamp
          metadataEntries { label } } } } }""",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(base: str, query: str, variables: dict) -> dict:
    req = urllib.request.Request(f"{base}/graphql", data=json.dumps({"query": query, "variables": variables}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        body = json.load(r)
    if "errors" in body:
        raise SystemExit(f"GraphQL error: {body['errors']}")
    return body["data"]


def time_queries(base: str, scope: str, repeat: int) -> dict[str, tuple[float, float]]:
    """{query: (first call s, median of the next `repeat` s)}."""
    key = {"path": [PROBE_ASSET]}
    variables = {"assetKey": key, "assetKeys": [key, {"path": ["audit_tables"]}], "partitions": [scope]}
    out = {}
    for name, q in QUERIES.items():
        used = {k: v for k, v in variables.items() if f"${k}" in q}
        t0 = time.perf_counter()
        graphql(base, q, used)
        first = time.perf_counter() - t0
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            graphql(base, q, used)
            times.append(time.perf_counter() - t0)
        out[name] = (first, statistics.median(times))
    return out


def start_webserver(dagster_home: Path, config: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "CLAIMS_PIPELINE_CONFIG": str(config),
           "NO_PROXY": "127.0.0.1,localhost"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "dagster-webserver"), "-m", "claims_pipeline.definitions",
                             "-h", "127.0.0.1", "-p", str(port)], cwd=REPO, env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"dagster-webserver exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/server_info", timeout=2):
                return proc, base
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("dagster-webserver did not start")


def evaluate_sensor(instance, config: Path, cursor: str | None):  # -> (SensorResult, seconds)
    import dagster as dg

    from claims_pipeline.defs.automation import corpus_sensor
    from claims_pipeline.defs.resources import ClaimsConfig

    t0 = time.perf_counter()
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor,
                                  resources={"claims_config": ClaimsConfig(config_path=str(config))})
    result = corpus_sensor(ctx)
    return result, time.perf_counter() - t0


def measure(tmp: Path, name: str, args: argparse.Namespace, scopes: int, files: int, claims: int, urls: int,
            hosts: int) -> dict:
    """Everything [1]–[5] for one corpus size on its own instance."""
    import dagster as dg

    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME, range_tags
    from claims_pipeline.orchestration.instance import prepare_dagster_home
    from claims_pipeline.orchestration.runner import QUIET_RUN_CONFIG, definitions_with, resources_for

    out: dict = {"name": name}
    work = tmp / name
    t0 = time.perf_counter()
    manifest = generate(work / "synth", claims=claims, files=files, urls=urls, hosts=hosts, scopes=scopes, seed=7,
                        page_kb=2)
    print(f"[{name}] corpus: {manifest['claims']} claims, {manifest['files']} files, {manifest['scopes']} scopes, "
          f"{manifest['urls']} URLs over {manifest['hosts']} hosts (generated in {time.perf_counter() - t0:.1f} s)")
    server, port = start_server(work / "synth" / "sites", work / "requests.jsonl")
    webserver = None
    try:
        synthetic = yaml.safe_load((work / "synth" / "synthetic.yaml").read_text())
        synthetic["fetch"]["address_map"] = {k: f"127.0.0.1:{port}" for k in synthetic["fetch"]["address_map"]}
        config = work / "synthetic.yaml"
        config.write_text(yaml.safe_dump(synthetic, sort_keys=False), encoding="utf-8")
        dagster_home = work / "dagster"
        os.environ["DAGSTER_HOME"] = str(dagster_home)
        prepare_dagster_home(load_settings(config).home_dir)
        with dg.DagsterInstance.get() as instance:
            # [1] first tick: every scope new
            first, t_first = evaluate_sensor(instance, config, None)
            added = sum(len(r.partition_keys) for r in first.dynamic_partitions_requests or [])
            out["tick_first"] = t_first
            print(f"    [1] first sensor tick: {t_first:.2f} s; {added} partitions added, "
                  f"{len(first.run_requests)} run requests")
            t0 = time.perf_counter()
            apply_partition_requests(instance, first)
            print(f"        adding the {added} partitions to the instance: {time.perf_counter() - t0:.2f} s")
            keys = list(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))

            # [2] the whole corpus in one run
            resources = resources_for(load_settings(config))
            defs = definitions_with(resources)
            t0 = time.perf_counter()
            whole = defs.resolve_job_def("audit_corpus").execute_in_process(
                instance=instance, tags=range_tags(keys), run_config=QUIET_RUN_CONFIG, raise_on_error=False)
            out["whole_run"] = time.perf_counter() - t0
            whole_steps = sorted(((e.step_key, e.event_specific_data.duration_ms / 1000) for e in whole.all_events
                                  if e.event_type_value == "STEP_SUCCESS"), key=lambda kv: -kv[1])
            print(f"    [2] audit_corpus over {len(keys)} scopes: success {whole.success}, {out['whole_run']:.1f} s, "
                  f"{len(whole.all_events)} events; slowest steps: "
                  f"{', '.join(f'{k} {v:.1f} s' for k, v in whole_steps[:6])}")

            # [3] steady-state ticks, then one file edited
            cursor = first.cursor
            quiet_times = []
            for _ in range(args.ticks):
                quiet, t = evaluate_sensor(instance, config, cursor)
                quiet_times.append(t)
                cursor = quiet.cursor
            out["tick_quiet"] = statistics.median(quiet_times)
            scope = keys[len(keys) // 2]
            edited = next(p for p in sorted((work / "synth" / "corpus").rglob("*.md"))
                          if scope in p.relative_to(work / "synth" / "corpus").as_posix().split("/")
                          or p.relative_to(work / "synth" / "corpus").with_suffix("").as_posix() == scope)
            edited.write_text(edited.read_text() + "\n- Late note: a **2%** surcharge applies.\n", encoding="utf-8")
            after, t_edit = evaluate_sensor(instance, config, cursor)
            out["tick_edit"] = t_edit
            print(f"    [3] steady sensor tick (nothing changed): median {out['tick_quiet']:.2f} s of "
                  f"{', '.join(f'{t:.2f}' for t in quiet_times)} (runs requested: {len(quiet.run_requests)}); "
                  f"after one file's edit: {t_edit:.2f} s, runs requested for "
                  f"{[r.partition_key for r in after.run_requests]}")

            # [4] the asset pages' queries on a running webserver
            webserver, base = start_webserver(dagster_home, config, work / "webserver.log")
            q = time_queries(base, scope, args.repeat)
            out["queries"] = q
            print(f"    [4] GraphQL on dagster-webserver, {PROBE_ASSET} ({len(keys)} partitions): " + "; ".join(
                f"{n} {first_s * 1000:.0f} ms first, {med * 1000:.0f} ms median" for n, (first_s, med) in q.items()))

            # [5] one scope alone, as the UI launches it (audit_scope, partition = the scope)
            t0 = time.perf_counter()
            one = defs.resolve_job_def("audit_scope").execute_in_process(
                instance=instance, partition_key=scope, run_config=QUIET_RUN_CONFIG, raise_on_error=False)
            call_wall = time.perf_counter() - t0
            records = instance.all_logs(one.run_id)
            stamp = {r.dagster_event.event_type_value: r.timestamp for r in records if r.dagster_event}
            ended = dg.DagsterEventType.RUN_SUCCESS if one.success else dg.DagsterEventType.RUN_FAILURE
            run_wall = stamp[ended.value] - stamp[dg.DagsterEventType.RUN_START.value]
            steps = {e.step_key: e.event_specific_data.duration_ms / 1000 for e in one.all_events
                     if e.event_type_value == "STEP_SUCCESS"}
            work_s = sum(steps.values())
            out.update(one_call=call_wall, one_run=run_wall, one_steps=work_s, one_overhead=run_wall - work_s,
                       one_events=len(records))
            slowest = sorted(steps.items(), key=lambda kv: -kv[1])[:4]
            print(f"    [5] audit_scope for {scope!r} alone: success {one.success}; execute_in_process {call_wall:.2f} s, "
                  f"run (RUN_START → RUN_SUCCESS) {run_wall:.2f} s, its {len(steps)} steps {work_s:.2f} s "
                  f"(slowest: {', '.join(f'{k} {v:.2f}' for k, v in slowest)}); Dagster overhead "
                  f"{run_wall - work_s:.2f} s; {len(records)} events")
    finally:
        if webserver is not None:
            os.killpg(webserver.pid, 15)
            try:
                webserver.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(webserver.pid, 9)
        server.kill()
        server.wait()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scopes", type=int, default=1000)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--claims", type=int, default=20_000)
    ap.add_argument("--urls", type=int, default=2000)
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--small", type=int, default=10, help="scopes of the baseline instance (same shape per scope)")
    ap.add_argument("--ticks", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"bench_scopes_1000: {machine_line()}")
    k = args.small / args.scopes  # the small corpus: the same shape per scope
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        small = measure(tmp, "small", args, args.small, max(args.small, round(args.files * k)),
                        max(args.small, round(args.claims * k)), max(10, round(args.urls * k)), 10)
        big = measure(tmp, "big", args, args.scopes, args.files, args.claims, args.urls, args.hosts)
    print(f"{args.scopes} scopes ÷ {args.small} scopes (same shape per scope):")
    print(f"    sensor tick, steady: {big['tick_quiet']:.2f} s ÷ {small['tick_quiet']:.2f} s = "
          f"{big['tick_quiet'] / small['tick_quiet']:.1f}x; first tick {big['tick_first']:.2f} s ÷ "
          f"{small['tick_first']:.2f} s; after an edit {big['tick_edit']:.2f} s ÷ {small['tick_edit']:.2f} s")
    for name in QUERIES:
        b, s = big["queries"][name][1], small["queries"][name][1]
        print(f"    GraphQL {name}: {b * 1000:.0f} ms ÷ {s * 1000:.0f} ms = {b / s:.1f}x")
    print(f"    one scope rematerialized: Dagster overhead {big['one_overhead']:.2f} s ÷ {small['one_overhead']:.2f} s "
          f"= {big['one_overhead'] / small['one_overhead']:.2f}x (run {big['one_run']:.2f} s, steps "
          f"{big['one_steps']:.2f} s; small: run {small['one_run']:.2f} s, steps {small['one_steps']:.2f} s)")


if __name__ == "__main__":
    main()
