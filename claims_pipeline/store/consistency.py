"""Checking and cleaning a page cache after a crash.

verify_cache: every fetch row's blobs exist and hash to their names, the index passes the database's own
integrity check, and each URL's latest-fetch pointer is valid. Orphan blobs (written, row never committed) and
temp files (write killed before its rename) are listed: they are harmless leftovers, and gc removes them.
Both work on every blob store URL: on object storage the leftovers are objects (their URLs), aged by their
Last-Modified, and there are no temp files (a PUT is atomic), only damaged blobs moved aside.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from claims_pipeline.store import schema
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.engine import integrity_problems


@dataclass
class CacheReport:
    rows_checked: int = 0
    blobs_checked: int = 0
    problems: list[str] = field(default_factory=list)  # real inconsistencies: must stay empty
    orphan_blobs: list[Path | str] = field(default_factory=list)  # harmless leftovers (object URLs on S3/GCS)
    temp_files: list[Path | str] = field(default_factory=list)  # harmless leftovers

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_cache(cache: PageCache) -> CacheReport:
    report = CacheReport()
    report.problems.extend(f"database integrity: {p}" for p in integrity_problems(cache.engine))
    f, u = schema.fetches, schema.urls
    with cache.engine.connect() as conn:
        rows = conn.execute(select(f.c.id, f.c.url, f.c.raw_hash, f.c.text_hash)).all()
        fetch_urls = {r.id: r.url for r in rows}
        for url, latest in conn.execute(select(u.c.url, u.c.latest_fetch_id)):
            if fetch_urls.get(latest) != url:
                report.problems.append(f"{url}: latest_fetch_id {latest} is not one of its fetches")
    report.rows_checked = len(rows)
    checked: set[tuple[str, str]] = set()
    for row in rows:
        for hash_hex, kind in ((row.raw_hash, "raw"), (row.text_hash, "text")):
            if not hash_hex or (hash_hex, kind) in checked:
                continue
            checked.add((hash_hex, kind))
            problem = cache.blobs.verify(hash_hex, kind)
            if problem:
                report.problems.append(f"fetch {row.id} ({row.url}): {problem}")
    report.blobs_checked = len(checked)
    report.orphan_blobs = [b.path for b in cache.blobs.iter_blobs() if (b.hash, b.kind) not in checked]
    report.temp_files = list(cache.blobs.iter_temp_files())
    return report


def gc(cache: PageCache, *, min_age_s: float = 3600.0) -> list[Path | str]:
    """Delete orphan blobs and temp files older than min_age_s; returns what was deleted.

    The age floor matters: a live writer's blob is an "orphan" until its row commits a moment later."""
    refs = cache.referenced_hashes()
    cutoff = time.time() - min_age_s
    candidates = [b.path for b in cache.blobs.iter_blobs() if (b.hash, b.kind) not in refs]
    candidates += list(cache.blobs.iter_temp_files())
    return [where for where in candidates if cache.blobs.remove_if_older(where, cutoff)]


def main(argv: list[str] | None = None) -> int:
    """`python -m claims_pipeline.store.consistency [--config FILE] [--gc]`: check (and clean) the cache."""
    import argparse
    import sys

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from claims_pipeline.common.text_safety import terminal_escaped
    from claims_pipeline.config.settings import ConfigError, load_settings
    from claims_pipeline.store.errors import CacheError

    parser = argparse.ArgumentParser(prog="python -m claims_pipeline.store.consistency", description=main.__doc__)
    parser.add_argument("--config", metavar="FILE")
    parser.add_argument("--gc", action="store_true", help="delete orphan blobs and temp files")
    parser.add_argument("--min-age", type=float, default=3600.0, metavar="S", help="only leftovers older than S seconds")
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"claims-pipeline: config error:\n{terminal_escaped(str(exc))}", file=sys.stderr)
        return 2
    where = make_url(settings.cache_db_url).render_as_string(hide_password=True)
    try:
        with PageCache.at(settings.page_cache) as cache:
            report = verify_cache(cache)
            print(f"{report.rows_checked} fetch rows, {report.blobs_checked} blobs verified; "
                  f"{len(report.orphan_blobs)} orphan blobs, {len(report.temp_files)} temp files")
            for problem in report.problems:
                print(terminal_escaped(f"PROBLEM: {problem}"))
            if args.gc:
                print(f"removed {len(gc(cache, min_age_s=args.min_age))} leftover files")
    except (CacheError, DBAPIError, OSError) as exc:
        # a full disk or a read-only folder: SQLite cannot even open its WAL; one line, not a traceback
        why = str(getattr(exc, "orig", None) or getattr(exc, "strerror", None) or exc).splitlines()[0]
        check = ("damaged: move it aside with its blob folder to start a new cache"
                 if "malformed" in why or "not a database" in why else "is its disk full or read-only?")
        print(terminal_escaped(f"claims-pipeline: cannot check the page cache {where}: {why} ({check})"), file=sys.stderr)
        return 1
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
