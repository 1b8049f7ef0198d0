"""Politeness shared across processes (store/host_leases.py) and held at the socket (web/politeness.py Start),
proven from the fixture web's own request log.

Real processes (lease_worker.py, each a refresh_pages run) share one page cache: a SQLite file, and the same on
a real PostgreSQL server on 127.0.0.1. No throttle is mocked; the stalled send is a real delay in the network
stream the fetcher writes to.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claims_pipeline.store.host_leases import MARGIN_S, POLL_S
from claims_pipeline.web.asyncio_stream import AsyncioBackend, AsyncioStream
from claims_pipeline.web.fetcher import Fetcher
from claims_pipeline.web.records import FetchStatus
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.store.postgres_server import postgres_server
from claims_pipeline_tests.time_scale import scaled
from claims_pipeline_tests.web.conftest import fast_fetch, no_dns

REPO = Path(__file__).resolve().parents[2]
TOLERANCE_S = 0.02  # server-side timestamps lag the client's send by a little thread-scheduling noise
# ... and more when the processes take turns on a host: each newcomer opens new connections, whose first request
# the fixture web stamps only once a thread was started for it (a keep-alive request is stamped at once). The
# clients' own record of their sends is checked exactly beside it.
HANDOVER_TOLERANCE_S = 0.06
INTERVAL_S = 0.2
POLICIES = {"two.fixture": 2, "one.fixture": 1, "also.fixture": 2}  # host -> concurrency


def _fetch_settings(web: FixtureWeb, **overrides: Any) -> dict[str, Any]:
    fetch = fast_fetch(web).fetch.model_dump(mode="json")
    fetch.update(default_host={"concurrency": 2, "interval_ms": int(INTERVAL_S * 1000)},
                 per_host_overrides={"one.fixture": {"concurrency": 1, "interval_ms": int(INTERVAL_S * 1000)}},
                 request_timeout_s=0.5, connect_timeout_s=0.5, robots_timeout_s=0.5, host_lease_s=1.0)
    fetch.update(overrides)
    return fetch


def _by_host(log: list[dict]) -> dict[str, list[dict]]:
    hosts: dict[str, list[dict]] = defaultdict(list)
    for e in sorted(log, key=lambda e: e["start"]):
        hosts[e["host"]].append(e)
    return hosts


def _max_overlap(entries: list[dict]) -> int:
    events = sorted([(e["start"], 1) for e in entries] + [(e["end"], -1) for e in entries])
    now = peak = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    return peak


def _worker(tmp: Path, db_url: str, name: str, fetch: dict, urls: list[str], go: Path | None) -> subprocess.Popen:
    spec = {"db_url": db_url, "blobs": str(tmp / "blobs"), "home": str(tmp / f"home-{name}"), "fetch": fetch,
            "urls": urls, "ready": str(tmp / f"ready-{name}"), "go": str(go) if go else None}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "claims_pipeline_tests.web.lease_worker", json.dumps(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(what: Any, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _outcome(proc: subprocess.Popen) -> dict[str, Any]:
    out, err = proc.communicate(timeout=scaled(60))
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.splitlines()[-1])


@pytest.fixture(scope="module")
def pg_database() -> Iterator[Any]:
    with postgres_server() as new_database:
        yield new_database


def _four_processes(web: FixtureWeb, tmp: Path, db_url: str) -> None:
    fetch = _fetch_settings(web, request_timeout_s=1.0, robots_timeout_s=1.0)
    # every worker has pages on every host: /_/slow keeps each request in flight past the next start, so the
    # concurrency limits matter across processes
    urls = {w: [web.url(h, f"/_/slow?delay=0.3&w={w}&n={n}") for h in POLICIES for n in range(2)] for w in range(4)}
    web.clear_log()
    go = tmp / "go"
    procs = [_worker(tmp, db_url, f"w{w}", fetch, urls[w], go) for w in range(4)]
    _wait_for(lambda: all((tmp / f"ready-w{w}").exists() for w in range(4)))
    go.touch()
    outcomes = [_outcome(p) for p in procs]
    assert all(o["statuses"] == {"OK": 6} for o in outcomes), [o["statuses"] for o in outcomes]
    # the clients' own record first: each request head's write, per host across the four processes, is at least
    # the interval after the one before (exact: the same machine's clock)
    sent: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        for host, at in o["sent"]:
            sent[host].append(at)
    for host in POLICIES:
        at = sorted(sent[host])
        assert min(b - a for a, b in zip(at, at[1:])) >= INTERVAL_S - 0.001, host
    log = _by_host(web.requests())
    for host, concurrency in POLICIES.items():
        entries = log[host]
        pages = [e for e in entries if e["path"] != "/robots.txt"]
        assert len(pages) == 8, (host, len(pages))
        assert {e["path"].split("w=")[1][0] for e in pages} == {"0", "1", "2", "3"}  # all four fetched it
        gaps = [round(b["start"] - a["start"], 3) for a, b in zip(entries, entries[1:])]
        assert min(gaps) >= INTERVAL_S - HANDOVER_TOLERANCE_S, (host, gaps)
        assert _max_overlap(entries) <= concurrency, host
    assert _max_overlap(log["two.fixture"]) == 2  # the limit was really reached (else the check is vacuous)


def test_four_processes_on_one_sqlite_cache_keep_each_hosts_interval_and_concurrency(web, tmp_path):
    _four_processes(web, tmp_path, f"sqlite:///{tmp_path / 'index.sqlite'}")


@pytest.mark.postgres
def test_four_processes_on_one_postgres_cache_keep_each_hosts_interval_and_concurrency(web, tmp_path, pg_database):
    _four_processes(web, tmp_path, pg_database())


def test_a_worker_killed_while_holding_a_host_delays_it_at_most_its_lease(web, tmp_path):
    db_url = f"sqlite:///{tmp_path / 'index.sqlite'}"
    fetch = _fetch_settings(web)
    hosts = ["held.fixture", "kept.fixture"]
    web.clear_log()
    # the victim has far more work on both hosts than it gets to do
    victim = _worker(tmp_path, db_url, "victim", fetch, [web.url(h, f"/_/page/v{n}") for h in hosts for n in range(60)],
                     None)
    go = tmp_path / "go"  # the heir starts up meanwhile, and asks for the hosts once the victim holds them
    heir = _worker(tmp_path, db_url, "heir", fetch, [web.url(h, f"/_/page/h{n}") for h in hosts for n in range(2)], go)
    try:
        _wait_for(lambda: all(sum(e["host"] == h for e in web.requests(settle_s=0)) >= 4 for h in hosts))
        _wait_for(lambda: (tmp_path / "ready-heir").exists())
        go.touch()
        time.sleep(0.3)  # the heir is polling for the hosts the victim holds
        killed_at = time.time()
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=scaled(10))
        assert _outcome(heir)["statuses"] == {"OK": 4}
    finally:
        for p in (victim, heir):
            if p.poll() is None:
                p.kill()
    # the longest the victim can have held a host: its lease as the store sizes it (fetch.host_lease_s, never
    # under twice a request's deadline + twice the host's interval + the margin)
    lease_s = max(fetch["host_lease_s"], 2 * (fetch["request_timeout_s"] + 2 * INTERVAL_S + MARGIN_S))
    log = _by_host(web.requests())
    for host in hosts:
        mine = [e for e in log[host] if "/v" in e["path"] or e["path"] == "/robots.txt"]
        theirs = [e for e in log[host] if "/h" in e["path"]]
        assert len(theirs) == 2
        first = theirs[0]["start"]
        assert all(e["start"] < killed_at + TOLERANCE_S for e in mine)  # the heir's were the only ones after
        delay = first - killed_at
        assert 0 < delay <= lease_s + POLL_S + 0.3, (host, delay, lease_s)
        assert first - max(e["start"] for e in mine) >= INTERVAL_S - TOLERANCE_S


class _StallingStream(AsyncioStream):
    """A real connection whose first write of a request marked ``stall`` waits before going out (a busy loop,
    a slow TLS handshake): the bytes leave late, and the host's next request must not catch up."""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if b"stall=1" in buffer.split(b"\r\n", 1)[0]:
            await asyncio.sleep(0.35)
        await super().write(buffer, timeout)


class _StallingBackend(AsyncioBackend):
    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        stream = await super().connect_tcp(host, port, timeout, local_address, socket_options)
        assert isinstance(stream, AsyncioStream)
        stream.__class__ = _StallingStream
        return stream


def test_a_stalled_send_pushes_the_hosts_next_request_back(web):
    """Two connections to one host, 0.2 s apart by booking; the first one's bytes leave 0.35 s late. Counted from
    the bookings, the second would reach the server first and the gap would shrink; counted from when the bytes
    left, the second follows the first by the whole interval."""
    settings = fast_fetch(web, robots_enabled=False, default_host={"concurrency": 2, "interval_ms": 200})
    urls = [web.url("stall.fixture", "/_/page/a?stall=1"), web.url("stall.fixture", "/_/page/b")]

    async def run() -> list:
        async with Fetcher(settings.fetch, settings.pdf, resolver=no_dns, inner_backend=_StallingBackend()) as f:
            return [r async for r in f.fetch_many(urls)]

    web.clear_log()
    results = asyncio.run(run())
    assert [r.status for r in results] == [FetchStatus.OK] * 2
    entries = _by_host(web.requests())["stall.fixture"]
    assert [e["path"] for e in entries] == ["/_/page/a?stall=1", "/_/page/b"]  # the stalled one still first
    gap = entries[1]["start"] - entries[0]["start"]
    assert gap >= 0.2 - TOLERANCE_S, gap


def test_a_breaker_opened_by_one_run_is_open_for_the_next(web, tmp_path):
    """Two runs on one cache (as two processes would be): the first finds the host resetting every connection and
    opens its breaker; the second learns it on taking the host over and sends it nothing."""
    from claims_pipeline.config.settings import settings_from_dict
    from claims_pipeline.steps.pages.refresh import refresh_pages
    from claims_pipeline.store.cache import PageCache

    settings = settings_from_dict({"home": str(tmp_path / "home"),
                                   "fetch": _fetch_settings(web, breaker_failures=2, max_retries=2)})
    cache = PageCache(f"sqlite:///{tmp_path / 'index.sqlite'}", tmp_path / "blobs")
    try:
        web.clear_log()
        first = refresh_pages(settings.page_fetching, [web.url("down.fixture", f"/_/reset?n={n}") for n in range(3)], cache=cache,
                              resolver=no_dns)
        assert any("circuit open" in s.note for s in first.values()), [s.note for s in first.values()]
        assert sum(e["host"] == "down.fixture" for e in web.requests()) >= 2
        web.clear_log()
        [second] = refresh_pages(settings.page_fetching, [web.url("down.fixture", "/_/reset?n=9")], cache=cache,
                                 resolver=no_dns).values()
    finally:
        cache.close()
    assert [e for e in web.requests() if e["host"] == "down.fixture"] == []
    assert second.fetch_status == FetchStatus.UNAVAILABLE and "circuit open" in second.note, second.note
