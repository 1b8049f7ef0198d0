"""A single process keeps its speed with shared politeness: one refresh_pages run (the audit's path,
on a page cache, so each host's politeness is a lease in the cache's database) where the global rate binds
(80 fixture hosts × 4 pages + robots.txt = 400 requests at fetch.req_per_sec 10), against the same run with
fetch.host_lease_s 0 (politeness kept in the process, no database) in the same invocation. Prints each arm's
requests per second (cap 10) and the ratio leases ÷ no leases (1.0 = no cost).

What it guards (web/politeness.py, HostThrottle.slot): a host whose lease runs short while it waits seconds for a
global token renews the lease and keeps its place; dropping the token and queuing again gave 7.2 req/s against
10.0 (ratio 0.72, benchmarks/README.md).

Usage: .venv/bin/python benchmarks/bench_lease_rate.py [--hosts 80] [--pages 4] [--rate 10]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.cache import PageCache
from claims_pipeline_demo.fixture_web.server import FixtureWeb


def no_dns(host: str) -> list[str]:
    raise OSError(f"{host} is not mapped to the fixture web")


def one_run(web: FixtureWeb, urls: list[str], rate: float, lease_s: float) -> float:
    """Requests per second the server saw in one cold run."""
    with tempfile.TemporaryDirectory() as home:
        fetch = {"address_map": web.address_map(), "allow_networks": ["127.0.0.1/32"], "req_per_sec": rate,
                 "concurrency": 16, "default_host": {"concurrency": 1, "interval_ms": 200}, "host_lease_s": lease_s}
        settings = settings_from_dict({"home": home, "fetch": fetch})
        cache = PageCache(f"sqlite:///{home}/cache.db", Path(home) / "blobs")
        web.clear_log()
        t0 = time.monotonic()
        states = refresh_pages(settings.page_fetching, urls, cache=cache, force=True, resolver=no_dns, with_text=False)
        wall = time.monotonic() - t0
        cache.close()
        assert all(s.fetch_status == "OK" for s in states.values()), "a page failed: the figure would mean nothing"
        return len(web.requests()) / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=80)
    ap.add_argument("--pages", type=int, default=4)
    ap.add_argument("--rate", type=float, default=10.0)
    args = ap.parse_args()
    with FixtureWeb() as web:
        urls = [web.url(f"h{i}.fixture", f"/_/page/p{j}") for i in range(args.hosts) for j in range(args.pages)]
        shared = one_run(web, urls, args.rate, 30.0)
        alone = one_run(web, urls, args.rate, 0.0)
    print(f"{len(urls)} pages on {args.hosts} hosts, req_per_sec {args.rate:g}: "
          f"leases (host_lease_s 30) {shared:.2f} req/s · no leases {alone:.2f} req/s · ratio {shared / alone:.3f}")


if __name__ == "__main__":
    main()
