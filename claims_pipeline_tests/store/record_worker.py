"""Run as a subprocess by test_concurrency: record overlapping URLs into one shared cache (a SQLite file
under root, or the database URL given as the fifth argument)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from claims_pipeline.store.cache import PageCache
from claims_pipeline.web.records import FetchResult, FetchStatus


def main(root: str, worker: str, n_urls: int, rounds: int, db_url: str | None = None) -> None:
    cache = PageCache(db_url or f"sqlite:///{Path(root) / 'index.sqlite'}", Path(root) / "blobs")
    # barrier: start recording only when both workers are up, so their writes really interleave
    (Path(root) / f"ready-{worker}").touch()
    deadline = time.monotonic() + 30
    while len(list(Path(root).glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    for r in range(rounds):
        for i in range(n_urls):
            url = f"https://h{i % 5}.example/p{i}"
            # half the pages say the same thing from both workers, half differ per worker and round
            text = f"page {i} stable" if i % 2 == 0 else f"page {i} from {worker} round {r}"
            basis = cache.conditional_bases([url]).get(url) if i % 2 == 0 and r % 2 == 1 else None
            if basis is not None:
                # a warm re-fetch of a stable page: a 304 through the bulk path (SQLite fast path), interleaved
                # with the other worker's full writes of the same URL
                cache.append(FetchResult(url=url, status=FetchStatus.NOT_MODIFIED, http_status=304), run_id=worker, basis=basis)
                continue
            cache.record(
                FetchResult(url=url, status=FetchStatus.OK, http_status=200, content_type="text/html",
                            content_kind="html", raw=text.encode() * 50, text=text, etag=f'"{i}"'),
                run_id=worker,
            )
    cache.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), *sys.argv[5:6])
