"""The fetched_pages step against the fetcher alone, for the same conditional GETs (issue 32, item 4).

On a corpus and page cache bench_scale.py prepared (its --work), with the fixture web on 127.0.0.1 at epoch 2,
alternating fresh processes, --rounds times:
  fetcher   web.fetcher.fetch_urls over every cited URL with the cache's validators, robots.txt from the cache
            and the host leases (bench_user_path.py's fetch arm): what the GETs cost, nothing recorded
  step      the fetched_pages asset's work as plain calls (defs/pages/assets.py): the statuses before the run,
            refresh_scope_pages through FetcherResource.refresh (every URL re-asked, each result recorded in the
            cache as it arrives, the states read back) and every scope's UI metadata
For the step it prints each part's wall and CPU (the recording thread's CPU apart), the cache commits it made
and their count per URL, and step ÷ fetcher (wall and CPU) of its own round, with the load average.

Run: .venv/bin/python benchmarks/bench_fetch_step.py [--size 100000] [--rounds 2] [--work /tmp/bench_scale]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def step_child(config: Path) -> dict[str, Any]:
    from datetime import UTC, datetime

    import claims_pipeline.steps.pages.refresh as refresh_module
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.corpus.extract import list_scopes
    from claims_pipeline.defs.pages.assets import scope_pages_metadata  # noqa: F401  (imports dagster before the clock)
    from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource
    from claims_pipeline.steps.corpus import claims_by_scope
    from claims_pipeline.steps.pages.fetched import refresh_scope_pages, statuses_before
    from claims_pipeline.store.cache import PageCache
    from claims_pipeline.store.fast304 import NotModifiedGroup

    s = load_settings(config)
    corpus = corpus_source(s)
    claims = claims_by_scope(corpus, sorted(list_scopes(corpus))).values
    fetcher = FetcherResource(config=ClaimsConfig(config_path=str(config)))
    writer_cpu = [0.0]
    drain = refresh_module._Recorder._drain

    def timed_drain(self: Any) -> None:
        t = time.thread_time()
        drain(self)
        writer_cpu[0] += time.thread_time() - t

    refresh_module._Recorder._drain = timed_drain  # type: ignore[method-assign]
    inner = _time_calls({"conditional_bases": (PageCache, "conditional_bases"), "states": (PageCache, "states"),
                         "304s on the loop": (refresh_module._GroupFlusher, "record"),
                         "their bulk writes and commits": (NotModifiedGroup, "flush")})
    parts: dict[str, tuple[float, float]] = {}
    w0, c0 = time.perf_counter(), time.process_time()
    last = [w0, c0]

    def lap(name: str) -> None:
        now = (time.perf_counter(), time.process_time())
        parts[name] = (now[0] - last[0], now[1] - last[1])
        last[:] = now

    now = datetime.now(UTC)
    commits = _count_commits()
    with PageCache.at(s.page_cache) as cache:
        before = statuses_before(claims, cache)
        lap("statuses_before")
        pages = refresh_scope_pages(s.home_dir, claims, cache,
                                    lambda urls: fetcher.refresh(urls, cache, now, run_id=None))
        lap("refresh_scope_pages")
    metadata = _metadata_of_every_scope(pages, before)
    lap("metadata")
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    urls = len({u for v in pages.values.values() for u in v.pages})
    return {"wall": wall, "cpu": cpu, "parts": parts, "writer_cpu": writer_cpu[0], "urls": urls,
            "commits": commits[0], "inner": inner, "metadata_bytes": metadata}


def _time_calls(targets: dict[str, tuple[Any, str]]) -> dict[str, list[float]]:
    """CPU seconds (of the calling thread) and calls of each method, wrapped in place: {name: [cpu, calls]}."""
    out: dict[str, list[float]] = {}
    for name, (owner, attr) in targets.items():
        inner = getattr(owner, attr)
        out[name] = acc = [0.0, 0]

        def timed(*a: Any, _inner: Any = inner, _acc: list[float] = acc, **k: Any) -> Any:
            t = time.thread_time()
            try:
                return _inner(*a, **k)
            finally:
                _acc[0] += time.thread_time() - t
                _acc[1] += 1

        setattr(owner, attr, timed)
    return out


def _count_commits() -> list[int]:
    """Every COMMIT the page cache's SQLite connections run (SQLAlchemy's and store/fast304.py's own, which
    commit on the DBAPI connection), counted through sqlite3's trace callback on each new connection."""
    from sqlalchemy import Engine, event

    n = [0]

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        def trace(sql: str) -> None:
            if sql.lstrip().upper().startswith("COMMIT"):
                n[0] += 1

        dbapi_connection.set_trace_callback(trace)

    event.listen(Engine, "connect", on_connect)
    return n


def _metadata_of_every_scope(pages: Any, before: dict[str, str]) -> int:
    """Every scope's metadata as the asset builds it, serialized: its size."""
    from claims_pipeline.defs.pages.assets import scope_pages_metadata

    return sum(len(json.dumps({k: getattr(v, "value", v) for k, v in scope_pages_metadata(pages, before, s).items()},
                              default=str)) for s in pages.values)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--step-child":
        print(json.dumps(step_child(Path(sys.argv[2]))))
        return 0
    from bench_user_path import cited_urls, load_average, start_web, write_config

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_scale"))
    args = ap.parse_args()
    work = args.work / f"synth-{args.size}"
    if not (work / "prepared").is_file():
        raise SystemExit(f"{work} is not prepared: run bench_scale.py --sizes {args.size} --reps 0 --work {args.work}")
    urls = cited_urls(work)
    web, port = start_web(work / "sites", epoch=2)
    rows: dict[str, list[dict[str, Any]]] = {"fetcher": [], "step": []}
    try:
        print(f"bench_fetch_step: {len(urls)} URLs, load average {load_average()}", flush=True)
        for rnd in range(args.rounds):
            home = work / "fetch-step-home"
            home.mkdir(exist_ok=True)
            config = write_config(work, home, f"127.0.0.1:{port}", home / "config.yaml")
            env = {**os.environ, "PYTHONWARNINGS": "ignore"}
            got = {}
            for arm, cmd in (("fetcher", [sys.executable, str(HERE / "bench_user_path.py"), "--fetch-child",
                                          str(config), str(work / "urls.json")]),
                             ("step", [sys.executable, __file__, "--step-child", str(config)])):
                load = load_average()
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=3600)
                got[arm] = r = json.loads(out.stdout.strip().splitlines()[-1])
                r["load"] = load
                rows[arm].append(r)
            f, st = got["fetcher"], got["step"]
            parts = " · ".join(f"{k} {w:.2f} s (CPU {c:.2f})" for k, (w, c) in st["parts"].items())
            print(f"  round {rnd + 1}: fetcher {f['fetch_wall']:.2f} s wall, {f['fetch_cpu']:.2f} s CPU "
                  f"{f['statuses']} (load {f['load']}); step {st['wall']:.2f} s wall, {st['cpu']:.2f} s CPU "
                  f"(load {st['load']}): {parts}; recording thread CPU {st['writer_cpu']:.2f} s; cache commits "
                  f"{st['commits']} for {st['urls']} URLs; scopes' metadata {st['metadata_bytes'] / 1e3:.0f} kB; "
                  f"inside: {', '.join(f'{k} {v[0]:.2f} s CPU ({v[1]:.0f} calls)' for k, v in st['inner'].items())}; "
                  f"step ÷ fetcher: wall {st['wall'] / f['fetch_wall']:.2f}, CPU {st['cpu'] / f['fetch_cpu']:.2f}",
                  flush=True)
    finally:
        web.kill()
        web.wait()
    ratios = [s["wall"] / f["fetch_wall"] for f, s in zip(rows["fetcher"], rows["step"], strict=True)]
    print(f"step ÷ fetcher, wall: median {statistics.median(ratios):.2f} over {len(ratios)} rounds; "
          f"load average at the end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
