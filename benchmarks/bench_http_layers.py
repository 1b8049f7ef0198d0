"""Where a warm fetch run's CPU goes: 500 conditional GETs (all 304) over 50 fixture hosts, 2 connections per
host, through ever more of the stack, each layer's CPU printed with its ratio to raw asyncio streams (best of
--repeat; no politeness interval, robots off, no cache writes).

  raw      asyncio streams writing the request and reading the status and headers by hand (the floor)
  httpcore httpcore's connection pool on our asyncio network backend (web/asyncio_stream.py)
  httpx    + httpx's transport API and its Request/Response objects
  guarded  web/transport.GuardedTransport: the same per origin, dialled through the SSRF guard, each body
           checked for bytes past its end: what web/fetcher.py sends through
  fetcher  + our Fetcher (politeness slots, budgets, redirects and bot-wall checks, FetchResult per URL)

    .venv/bin/python benchmarks/bench_http_layers.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpcore
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fetch import no_dns, start_server  # noqa: E402

from claims_pipeline.config.settings import settings_from_dict  # noqa: E402
from claims_pipeline.web import event_loop  # noqa: E402
from claims_pipeline.web.asyncio_stream import AsyncioBackend  # noqa: E402
from claims_pipeline.web.fetcher import Fetcher  # noqa: E402
from claims_pipeline.web.ssrf import AddressGuard  # noqa: E402
from claims_pipeline.web.transport import GuardedTransport  # noqa: E402

HOSTS = [f"h{i:02d}.fixture" for i in range(50)]
PATHS = [f"/_/page/p{j}?size=20000" for j in range(10)]


def best_cpu(run: Callable[[], Awaitable[None]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        event_loop.run(run())
        best = min(best, time.process_time() - c0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "sites").mkdir()
        proc, port = start_server(tmp / "sites", tmp / "requests.jsonl")
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client() as client:  # the validators a warm run would send
                etags = {(h, p): client.get(base + p, headers={"Host": h}).headers["etag"] for h in HOSTS for p in PATHS}

            async def raw() -> None:
                async def conn(host: str, paths: list[str]) -> None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                    for p in paths:
                        writer.write(f"GET {p} HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etags[(host, p)]}\r\n\r\n".encode())
                        await writer.drain()
                        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 304")
                    writer.close()
                await asyncio.gather(*(conn(h, PATHS[k::2]) for h in HOSTS for k in range(2)))

            async def core() -> None:
                pools = {h: httpcore.AsyncConnectionPool(network_backend=AsyncioBackend(), max_connections=2) for h in HOSTS}

                async def conn(host: str, paths: list[str]) -> None:
                    for p in paths:
                        r = await pools[host].request("GET", base + p, headers={"Host": host, "If-None-Match": etags[(host, p)]})
                        assert r.status == 304
                await asyncio.gather(*(conn(h, PATHS[k::2]) for h in HOSTS for k in range(2)))
                for pool in pools.values():
                    await pool.aclose()

            ctx = ssl.create_default_context()

            async def through(send: Callable[[str, httpx.Request], Awaitable[httpx.Response]]) -> None:
                """Every conditional GET as an httpx.Request through `send(host, request)`, body read, closed."""
                async def conn(host: str, paths: list[str]) -> None:
                    for p in paths:
                        req = httpx.Request("GET", base + p, headers={"Host": host, "If-None-Match": etags[(host, p)]})
                        resp = await send(host, req)
                        async for _ in resp.aiter_raw():
                            pass
                        await resp.aclose()
                        assert resp.status_code == 304
                await asyncio.gather(*(conn(h, PATHS[k::2]) for h in HOSTS for k in range(2)))

            async def transport() -> None:
                transports = {h: httpx.AsyncHTTPTransport(verify=ctx) for h in HOSTS}
                for t in transports.values():  # the same pool as above, under httpx's transport
                    t._pool = httpcore.AsyncConnectionPool(network_backend=AsyncioBackend(), max_connections=2)
                await through(lambda host, req: transports[host].handle_async_request(req))
                for t in transports.values():
                    await t.aclose()

            async def guarded() -> None:
                guarded_transport = GuardedTransport(
                    guard=AddressGuard.from_lists([], ["127.0.0.1/32"]), resolver=no_dns,
                    address_map={h: f"127.0.0.1:{port}" for h in HOSTS}, verify_tls=True, per_host_connections=2)

                def send(host: str, req: httpx.Request) -> Awaitable[httpx.Response]:
                    # by host name, as the fetcher sends (one pool per origin, the address from address_map)
                    url = req.url.copy_with(host=host)
                    return guarded_transport.handle_async_request(httpx.Request("GET", url, headers=req.headers))

                await through(send)
                await guarded_transport.aclose()

            settings = settings_from_dict({"home": str(tmp / "home"), "fetch": {
                "address_map": {"*.fixture": f"127.0.0.1:{port}"}, "allow_networks": ["127.0.0.1/32"],
                "concurrency": 64, "req_per_sec": 10000, "default_host": {"concurrency": 2, "interval_ms": 0},
                "per_host_overrides": {}, "robots_enabled": False}})
            validators = {f"http://{h}{p}": (etags[(h, p)], None) for h in HOSTS for p in PATHS}

            async def fetcher() -> None:
                async with Fetcher(settings.fetch, settings.pdf, resolver=no_dns) as f:
                    async for r in f.fetch_many(list(validators), validators):
                        assert r.status.value == "NOT_MODIFIED", r.note

            floor = None
            for name, run in (("raw", raw), ("httpcore", core), ("httpx", transport), ("guarded", guarded),
                              ("fetcher", fetcher)):
                cpu = best_cpu(run, args.repeat)
                floor = floor or cpu
                print(f"{name:9s} {cpu:6.3f} s CPU for {len(validators)} conditional GETs  ×{cpu / floor:5.1f} raw")
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
