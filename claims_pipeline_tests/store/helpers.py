"""Builders for the store tests: real FetchResult records, a real cache on a temp SQLite file."""

from __future__ import annotations

from pathlib import Path

from claims_pipeline.store.cache import PageCache
from claims_pipeline.web.records import FetchResult, FetchStatus


def make_cache(tmp_path: Path, **kwargs: int) -> PageCache:
    return PageCache(f"sqlite:///{tmp_path / 'cache' / 'index.sqlite'}", tmp_path / "cache" / "blobs", **kwargs)


def ok(url: str, text: str, *, etag: str | None = None, last_modified: str | None = None, kind: str = "html") -> FetchResult:
    raw = f"<html><body><p>{text}</p></body></html>".encode()
    return FetchResult(
        url=url, status=FetchStatus.OK, http_status=200, content_type="text/html; charset=utf-8",
        content_kind=kind, raw=raw, text=text, etag=etag, last_modified=last_modified, attempts=1,
    )


def not_modified(url: str, etag: str | None = None) -> FetchResult:
    return FetchResult(url=url, status=FetchStatus.NOT_MODIFIED, http_status=304, etag=etag, attempts=1)


def failed(url: str, status: FetchStatus = FetchStatus.DEAD, http_status: int | None = 404, note: str = "http 404") -> FetchResult:
    return FetchResult(url=url, status=status, http_status=http_status, note=note, attempts=1)


def day(n: int) -> str:
    return f"2026-03-{n:02d}T12:00:00+00:00"
