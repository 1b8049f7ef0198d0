"""4 Dagster runs in parallel over scopes with disjoint hosts, against the same scopes in one run.

A synthetic corpus (make_synthetic_corpus.py: scopes grouped in regions of ~10 hosts, regions share no host) is
split into 4 groups of whole regions, so no host is cited by two groups. Each "run" is the project's own
Dagster job, executed as the CLI executes it (orchestration/runner.py: ``execute_in_process`` on the shared
instance under DAGSTER_HOME, with the CLI's resources from a config file): ``audit_corpus`` restricted to the
per-scope assets (corpus_documents … fetched_pages … priors, as ``refresh_scopes``), over a partition range.

  parallel: 4 processes at once, one run each over its group's scopes (its own contiguous partition range);
  one run:  1 process, one run over all 4 groups' scopes.

Both start cold (own home, page cache and Dagster instance) and use the project's default fetch settings
(``fetch.req_per_sec`` 10 per process, government hosts 1 per second, one at a time) unless told otherwise:
with those, one run is bound by its process's global rate, which each of the 4 processes has for itself,
while every host's own interval is the same in both. Printed, measured in this one run:

  wall of the parallel setup (first process started → last ended) ÷ wall of the one run: target <= 0.35;
  each process's wall and its run's own wall (execute_in_process), requests and statuses per setup;
  every host's interval, from the fixture web's request log: start-to-start gaps under the interval, per setup.

Usage: .venv/bin/python benchmarks/bench_parallel_runs.py [--urls 2000] [--hosts 80] [--req-per-sec 10]
       [--interval-ms 1000] [--host-concurrency 1] [--host-lease-s S]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fetch import start_server  # noqa: E402
from bench_fetch_scale import machine_line, min_gap_by_host, read_logs  # noqa: E402
from make_synthetic_corpus import generate  # noqa: E402

GROUPS = 4


def write_config(path: Path, synthetic: dict, home: Path, port: int, args: argparse.Namespace) -> None:
    """synthetic.yaml with its own home and the project's default fetch settings (the generator's are fast)."""
    policy = {"concurrency": args.host_concurrency, "interval_ms": args.interval_ms}
    config = {
        **synthetic,
        "home": str(home),
        "fetch": {
            "address_map": {k: f"127.0.0.1:{port}" for k in synthetic["fetch"]["address_map"]},
            "allow_networks": ["127.0.0.1/32"],
            "req_per_sec": args.req_per_sec,
            "default_host": policy, "gov_host": policy, "per_host_overrides": {},
            **({"host_lease_s": args.host_lease_s} if args.host_lease_s is not None else {}),
        },
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def child_main(spec: str) -> None:
    """One run over a contiguous range of scope partitions, as the CLI runs a job (runner.py)."""
    import dagster as dg

    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.defs.jobs import scope_assets
    from claims_pipeline.defs.partitions import range_tags
    from claims_pipeline.orchestration.runner import QUIET_RUN_CONFIG, definitions_with, resources_for

    c = json.loads(spec)
    t0 = time.monotonic()
    defs = definitions_with(resources_for(load_settings(c["config"])))
    job = defs.resolve_job_def("audit_corpus")
    selection = list(scope_assets.resolve(defs.resolve_asset_graph()))
    with dg.DagsterInstance.get() as instance:
        r0 = time.monotonic()
        result = job.execute_in_process(instance=instance, tags=range_tags(c["scopes"]), asset_selection=selection,
                                        run_config=QUIET_RUN_CONFIG, raise_on_error=False)
        run_wall = time.monotonic() - r0
    steps = {}
    for ev in result.all_events:
        if ev.event_type_value == "STEP_SUCCESS":
            steps[ev.step_key] = ev.event_specific_data.duration_ms / 1000
    print(json.dumps({"success": result.success, "run_wall": run_wall, "setup": r0 - t0, "steps": steps}))


def launch(config: Path, dagster_home: Path, scopes: list[str]) -> subprocess.Popen:
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home)}
    spec = json.dumps({"config": str(config), "scopes": scopes})
    return subprocess.Popen([sys.executable, __file__, "--child", spec], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def prepare_instance(dagster_home: Path, config: Path, ordered_scopes: list[str]) -> None:
    """A fresh instance whose scope partitions are in group order, so each group is one contiguous range."""
    code = ("import dagster as dg, sys, json\n"
            "from claims_pipeline.orchestration.instance import prepare_dagster_home\n"
            "from claims_pipeline.config.settings import load_settings\n"
            "prepare_dagster_home(load_settings(sys.argv[1]).home_dir)\n"
            "with dg.DagsterInstance.get() as i: i.add_dynamic_partitions('scope', json.loads(sys.argv[2]))\n")
    subprocess.run([sys.executable, "-c", code, str(config), json.dumps(ordered_scopes)], check=True,
                   env={**os.environ, "DAGSTER_HOME": str(dagster_home)})


def run_setup(name: str, groups: list[list[str]], config: Path, dagster_home: Path, logs: list[Path],
              group_hosts: list[set[str]], interval_s: float) -> tuple[float, float]:
    """(wall of the setup, its longest fetched_pages step)."""
    t_log = time.time()
    w0 = time.monotonic()
    procs = [launch(config, dagster_home, g) for g in groups]
    outs = []
    longest_fetch = 0.0
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"{name}: a run's process failed ({p.returncode}):\n{err[-3000:]}")
        outs.append((json.loads(out.splitlines()[-1]), time.monotonic() - w0))
    wall = time.monotonic() - w0
    time.sleep(0.3)
    rows = read_logs(logs, t_log)
    gaps = min_gap_by_host(rows)
    short = {h: g for h, g in gaps.items() if g < interval_s}
    print(f"[{name}] {len(groups)} process(es), wall {wall:.2f} s; {len(rows)} requests "
          f"{dict(Counter(r['status'] for r in rows))}")
    for i, (got, ended) in enumerate(outs):
        fetch = {k: v for k, v in got["steps"].items() if "fetched_pages" in k}
        longest_fetch = max(longest_fetch, sum(fetch.values()))
        print(f"    run {i + 1}: {len(groups[i])} scopes, {len(group_hosts[i])} hosts; success {got['success']}; "
              f"process ended at +{ended:.2f} s; run {got['run_wall']:.2f} s (after {got['setup']:.2f} s of "
              f"imports and definitions); fetched_pages step {sum(fetch.values()):.2f} s")
    print(f"    every host's interval: {len(short)} of {len(gaps)} hosts had a start-to-start gap under "
          f"{interval_s * 1000:.0f} ms" + (f" (shortest {min(short.values()) * 1000:.0f} ms)" if short else
                                           f" (shortest gap seen {min(gaps.values()) * 1000:.0f} ms)"))
    return wall, longest_fetch


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--urls", type=int, default=2000)
    ap.add_argument("--hosts", type=int, default=80, help="a multiple of 40: 4 groups of whole ~10-host regions")
    ap.add_argument("--claims", type=int, default=10000)
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--scopes", type=int, default=40)
    ap.add_argument("--req-per-sec", type=float, default=10.0, help="fetch.req_per_sec (per process; default the project's)")
    ap.add_argument("--interval-ms", type=int, default=1000, help="every host's interval (default: the project's gov_host)")
    ap.add_argument("--host-concurrency", type=int, default=1)
    ap.add_argument("--host-lease-s", type=float, default=None,
                    help="fetch.host_lease_s (default: the project's; 0 = each process keeps its own politeness, "
                    "safe here since the groups share no host)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child_main(args.child)
    print(f"bench_parallel_runs: {machine_line()}")
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        manifest = generate(tmp / "synth", claims=args.claims, files=args.files, urls=args.urls, hosts=args.hosts,
                            scopes=args.scopes, seed=7)
        regions = manifest["regions"]
        groups = [[s for r in regions[g::GROUPS] for s in r["scopes"]] for g in range(GROUPS)]
        group_hosts = [{h for r in regions[g::GROUPS] for h in r["hosts"]} for g in range(GROUPS)]
        assert not set.intersection(*group_hosts), "groups share a host"
        print(f"    corpus: {manifest['claims']} claims, {manifest['files']} files, {manifest['scopes']} scopes, "
              f"{manifest['urls']} URLs over {manifest['hosts']} hosts {manifest['url_kinds']}; groups of "
              f"{[len(g) for g in groups]} scopes over {[len(h) for h in group_hosts]} disjoint hosts")
        print(f"    fetch: req_per_sec {args.req_per_sec:g} per process, every host {args.host_concurrency} at a time "
              f"and {args.interval_ms} ms apart; host_lease_s "
              f"{'default' if args.host_lease_s is None else f'{args.host_lease_s:g}'}")
        ordered = [s for g in groups for s in g]
        logs = [tmp / "requests.jsonl"]
        server, port = start_server(tmp / "synth" / "sites", logs[0])
        synthetic = yaml.safe_load((tmp / "synth" / "synthetic.yaml").read_text())
        try:
            walls, fetches = {}, {}
            for name, setup_groups, hosts in (("parallel", groups, group_hosts),
                                              ("one run", [ordered], [set.union(*group_hosts)])):
                config = tmp / f"{name.replace(' ', '-')}.yaml"
                write_config(config, synthetic, tmp / f"home-{name.replace(' ', '-')}", port, args)
                dagster_home = tmp / f"dagster-{name.replace(' ', '-')}"
                prepare_instance(dagster_home, config, ordered)
                walls[name], fetches[name] = run_setup(name, setup_groups, config, dagster_home, logs, hosts,
                                                       args.interval_ms / 1000)
        finally:
            server.kill()
            server.wait()
    print(f"parallel wall / one-run wall = {walls['parallel']:.2f} / {walls['one run']:.2f} = "
          f"{walls['parallel'] / walls['one run']:.3f}  (target <= 0.35)")
    print(f"    the fetch alone (longest fetched_pages step): {fetches['parallel']:.2f} / {fetches['one run']:.2f} = "
          f"{fetches['parallel'] / fetches['one run']:.3f}; the rest (process start, imports, definitions, the other "
          f"steps, on {os.cpu_count()} cores shared by the processes): {walls['parallel'] - fetches['parallel']:.2f} s "
          f"parallel, {walls['one run'] - fetches['one run']:.2f} s in one run")


if __name__ == "__main__":
    main()
