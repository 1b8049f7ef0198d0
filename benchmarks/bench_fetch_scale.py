"""Fetch at scale: 20,000 URLs over 500 fixture hosts with a short per-host interval.

Every fixture host is a name mapped to one of --servers fixture-web processes on 127.0.0.1 (one
ThreadingHTTPServer tops out at a few hundred requests a second on this machine, so the hosts are spread over
several). For each --interval-ms the script runs one cold fetch (``fetch_urls``, as bench_fetch.py's [1]) and
prints, measured in that same run:

  wall ÷ politeness bound, the bound computed as bench_fetch.py does: max over hosts of (request starts on
  that host − 1) × interval, from the servers' own request logs (robots.txt starts included); the global rate
  floor (fetch.req_per_sec) is printed beside it and set high so that per-host politeness is what binds;
  where the time goes when the ratio is over 1.2: the client's CPU seconds (one process, one event loop: its
  CPU time is a floor on its wall time) and the servers' CPU seconds (read from /proc through psutil), each
  also as requests per CPU second, i.e. the most either side could serve on one core;
  the shortest start-to-start gap per host seen by the servers (the interval must hold: ≥ interval);
  this machine's CPU floor: (client + servers' CPU seconds) ÷ cores ÷ bound, the ratio no spreading of the work
  over processes could beat here, since the fixture web runs on the same cores as the client.

--processes N (default 1) fetches with N client processes at once, the hosts split between them, over one shared
home, each host's politeness shared through one SQLite database of host leases (store/host_leases.py), as N runs
over scopes with disjoint hosts would: each process imports first and they start fetching together, so the wall is
the fetch alone, first start to last end. The client side's gaps are recorded as bench_fetch.py --gaps records
them (when each request head's write returned), so the servers' stamping lag can be told from the client's sends.

Usage: .venv/bin/python benchmarks/bench_fetch_scale.py [--urls 20000] [--hosts 500] [--interval-ms 250 1000]
       [--servers 2] [--page-bytes 5000] [--processes 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fetch import bound_for, no_dns, record_sends, start_server  # noqa: E402

import claims_pipeline  # noqa: E402
from claims_pipeline.config.settings import settings_from_dict  # noqa: E402
from claims_pipeline.web.fetcher import fetch_urls  # noqa: E402


def machine_line() -> str:
    return (f"nproc {psutil.cpu_count()}, Python {platform.python_version()}, "
            f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.2f}")


# The fixture web stamps a request when its handler thread has read the request line: a little after the bytes
# arrived, by however long that thread waited for the GIL among the server's other threads. The politeness tests
# (claims_pipeline_tests/web/test_shared_politeness.py) allow this much.
STAMP_NOISE_S = 0.02


def code_state() -> str:
    """Which fetcher ran: the checkout's commit, and whether its web/ folder had uncommitted changes."""
    repo = Path(__file__).resolve().parents[1]
    if Path(claims_pipeline.__file__).resolve().parents[1] != repo:
        return "not this checkout"
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "claims_pipeline/web"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return "not a git checkout"
    return f"commit {head}" + (", claims_pipeline/web/ with uncommitted changes" if dirty else "")


def read_logs(paths: list[Path], since: float) -> list[dict]:
    rows = []
    for path in paths:
        if path.exists():
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["start"] >= since]


def min_gap_by_host(rows: list[dict]) -> dict[str, float]:
    """Each host's shortest start-to-start gap as the server saw it (hosts with one request left out)."""
    starts: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        starts[r["host"]].append(r["start"])
    out = {}
    for host, s in starts.items():
        s.sort()
        if len(s) > 1:
            out[host] = min(b - a for a, b in zip(s, s[1:]))
    return out


def first_gap_short(rows: list[dict], interval: float) -> tuple[int, int]:
    """(gaps under the interval that follow a host's first request, all gaps under the interval)."""
    starts: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        starts[r["host"]].append(r["start"])
    after_first = total = 0
    for s in starts.values():
        s.sort()
        for i, (a, b) in enumerate(zip(s, s[1:])):
            if b - a < interval:
                total += 1
                after_first += i == 0
    return after_first, total


def mean_gap_by_host(rows: list[dict]) -> dict[str, float]:
    """Each host's (last start − first start) ÷ (starts − 1): the interval it actually got, on average."""
    starts: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        starts[r["host"]].append(r["start"])
    return {h: (max(s) - min(s)) / (len(s) - 1) for h, s in starts.items() if len(s) > 1}


def scale_settings(home: Path, address_map: dict[str, str], interval_ms: int) -> object:
    return settings_from_dict({
        "home": str(home),
        "fetch": {
            "address_map": address_map, "allow_networks": ["127.0.0.1/32"],
            # global limits out of the way: the per-host interval is what must bind
            "concurrency": 1024, "req_per_sec": 10_000,
            "default_host": {"concurrency": 2, "interval_ms": interval_ms}, "per_host_overrides": {},
            "connect_timeout_s": 5.0, "request_timeout_s": 10.0, "max_retries": 2,
            "retry_backoff_s": [0.1], "retry_jitter_pct": 25, "breaker_failures": 3,
        },
    })


def cpu_s(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--urls", type=int, default=20_000)
    ap.add_argument("--hosts", type=int, default=500)
    ap.add_argument("--interval-ms", type=int, nargs="+", default=[250, 1000])
    ap.add_argument("--servers", type=int, default=2, help="fixture-web processes the hosts are spread over")
    ap.add_argument("--page-bytes", type=int, default=5000)
    ap.add_argument("--processes", type=int, default=1, help="client processes, the hosts split between them")
    args = ap.parse_args(argv)
    per_host = args.urls // args.hosts
    print(f"bench_fetch_scale: {per_host * args.hosts} URLs over {args.hosts} hosts, {args.servers} fixture-web "
          f"processes, {args.processes} client process(es); {machine_line()}")
    print(f"    claims_pipeline from {Path(claims_pipeline.__file__).parent} ({code_state()})")
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "sites").mkdir()
        logs = [tmp / f"requests-{i}.jsonl" for i in range(args.servers)]
        servers = [start_server(tmp / "sites", log) for log in logs]
        try:
            hosts = [f"s{i:03d}.fixture" for i in range(args.hosts)]
            address_map = {h: f"127.0.0.1:{servers[i % len(servers)][1]}" for i, h in enumerate(hosts)}
            # host-interleaved order, as a corpus cites them: every host has work from the start
            urls = [f"http://{h}/_/page/p{j}?size={args.page_bytes}" for j in range(per_host) for h in hosts]
            for interval_ms in args.interval_ms:
                run(tmp, urls, hosts, address_map, interval_ms, logs, [psutil.Process(p.pid) for p, _ in servers],
                    args.processes)
        finally:
            for proc, _ in servers:
                proc.kill()
                proc.wait()


def fetch_in_processes(home: Path, urls: list[str], address_map: dict[str, str], interval_ms: int,
                       processes: int) -> tuple[float, float, Counter, list[tuple[str, float]]]:
    """Fetch `urls` with `processes` client processes, each holding whole hosts: (wall, client CPU, statuses,
    the clients' send times)."""
    spec = home.parent / f"spec-{interval_ms}.json"
    spec.write_text(json.dumps({"home": str(home), "address_map": address_map, "interval_ms": interval_ms}))
    host_of = {u: u.split("/")[2] for u in urls}
    hosts = sorted(set(host_of.values()))
    part = {h: i % processes for i, h in enumerate(hosts)}
    go = home.parent / f"go-{interval_ms}"
    procs = []
    for k in range(processes):
        mine = home.parent / f"urls-{interval_ms}-{k}.json"
        mine.write_text(json.dumps([u for u in urls if part[host_of[u]] == k]))
        procs.append(subprocess.Popen([sys.executable, __file__, "--child", str(spec), str(mine), str(go)],
                                      stdout=subprocess.PIPE, text=True))
    while sum((home.parent / f"{go.name}.ready-{p.pid}").exists() for p in procs) < processes:
        if any(p.poll() is not None for p in procs):
            raise SystemExit("a client process ended before fetching")
        time.sleep(0.05)
    w0 = time.monotonic()
    go.touch()  # every client has imported: they start together
    outs = [json.loads(p.communicate(timeout=3600)[0].strip().splitlines()[-1]) for p in procs]
    wall = time.monotonic() - w0
    return (wall, sum(o["cpu"] for o in outs), sum((Counter(o["statuses"]) for o in outs), Counter()),
            [tuple(x) for o in outs for x in o["sent"]])


def child(spec_path: Path, urls_path: Path, go: Path) -> None:
    spec = json.loads(spec_path.read_text())
    settings = scale_settings(Path(spec["home"]), spec["address_map"], spec["interval_ms"])
    urls = json.loads(urls_path.read_text())
    sent = record_sends()
    (go.parent / f"{go.name}.ready-{os.getpid()}").touch()
    deadline = time.monotonic() + 600
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    from claims_pipeline.store.host_leases import HostLeases

    # the hosts are this process's alone, yet their politeness goes through the shared database, as N runs' does
    leases = HostLeases.for_url(f"sqlite:///{spec['home']}/host-leases.sqlite", settings.fetch)
    c0 = time.process_time()
    results = fetch_urls(settings.fetch, settings.pdf, urls, resolver=no_dns, host_leases=leases)
    print(json.dumps({"cpu": time.process_time() - c0, "statuses": Counter(r.status.value for r in results),
                      "sent": sent}))


def run(tmp: Path, urls: list[str], hosts: list[str], address_map: dict[str, str], interval_ms: int,
        logs: list[Path], servers: list[psutil.Process], processes: int = 1) -> None:
    home = tmp / f"home-{interval_ms}"
    settings = scale_settings(home, address_map, interval_ms)
    server_cpu0 = [cpu_s(p) for p in servers]
    t0 = time.time()
    if processes > 1:
        wall, client_cpu, statuses, sent = fetch_in_processes(home, urls, address_map, interval_ms, processes)
    else:
        sent = record_sends()
        c0 = time.process_time()
        w0 = time.monotonic()
        results = fetch_urls(settings.fetch, settings.pdf, urls, resolver=no_dns)
        wall = time.monotonic() - w0
        client_cpu = time.process_time() - c0
        statuses = Counter(r.status.value for r in results)
    time.sleep(0.3)  # the servers log a request just after answering it
    server_cpu = [cpu_s(p) - c for p, c in zip(servers, server_cpu0)]
    rows = read_logs(logs, t0)
    interval = interval_ms / 1000
    bound = bound_for(rows, set(hosts), interval)
    rate_floor = max(0.0, (len(rows) - 10_000) / 10_000)  # token bucket: capacity = rate = 10,000/s
    gaps = min_gap_by_host(rows)
    short = sum(g < interval for g in gaps.values())
    print(f"[interval {interval_ms} ms] {dict(statuses)}; {len(rows)} requests seen by the servers "
          f"(robots.txt included)")
    print(f"    wall {wall:.2f} s, politeness bound {bound:.2f} s (global-rate floor {rate_floor:.2f} s): "
          f"wall / bound {wall / bound:.3f}  (target <= 1.2)")
    print(f"    client CPU {client_cpu:.2f} s ({len(rows) / client_cpu:.0f} requests per CPU s; its floor on the "
          f"wall: {client_cpu / bound:.2f}x the bound); servers' CPU "
          f"{' + '.join(f'{c:.2f}' for c in server_cpu)} s ({len(rows) / max(sum(server_cpu), 1e-9):.0f} requests "
          f"per CPU s over all servers); client + servers {(client_cpu + sum(server_cpu)) / wall:.2f} cores busy "
          f"on average of {psutil.cpu_count()}")
    floor = (client_cpu + sum(server_cpu)) / psutil.cpu_count() / bound
    print(f"    this machine's CPU floor (client + servers' CPU ÷ {psutil.cpu_count()} cores ÷ bound): {floor:.2f}x the "
          f"bound; with {processes} client process(es) the client's own floor is "
          f"{client_cpu / min(processes, psutil.cpu_count()) / bound:.2f}x")
    mean_gap = statistics.mean(mean_gap_by_host(rows).values())
    windows = Counter(int(r["start"] * 10) for r in rows)  # requests arriving in each 100 ms
    busiest = sorted(windows.values())
    print(f"    mean start-to-start gap per host {mean_gap:.3f} s: each request adds {mean_gap - interval:.3f} s to "
          f"its host's interval; requests per 100 ms at the servers: median {statistics.median(busiest):.0f}, "
          f"busiest {busiest[-1]} (the mean over the run: {len(rows) / wall / 10:.0f})")
    first = first_gap_short(rows, interval)
    beyond = sum(g < interval - STAMP_NOISE_S for g in gaps.values())
    print(f"    interval held: {short} of {len(gaps)} hosts had a start-to-start gap under {interval_ms} ms "
          f"(shortest gap seen: {min(gaps.values()) * 1000:.0f} ms), {beyond} more than {STAMP_NOISE_S * 1000:.0f} ms "
          f"under it (the fixture web's timestamp noise, as the politeness tests allow); of all gaps under it, "
          f"{first[0]} of {first[1]} follow the host's first request (its new connection)")
    client_gaps = min_gap_by_host([{"host": h, "start": t} for h, t in sent])
    print(f"    client side (when each request head's write returned): {sum(g < interval for g in client_gaps.values())} "
          f"of {len(client_gaps)} hosts had a gap under {interval_ms} ms (shortest {min(client_gaps.values()) * 1000:.0f} "
          f"ms); a gap shorter at the servers than here is their stamping lag, not the client's")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
    else:
        main()
