"""The `cache` section: where the page cache's index and blobs live, and how long a fetch is reused.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import Field, field_validator, model_validator

from claims_pipeline.common.blob_urls import parse_blob_url
from claims_pipeline.config.sections.strict import _folder_or_absent, _Strict


class CacheSettings(_Strict):
    db_url: str | None = Field(None, description="SQLAlchemy URL; default sqlite under <home>/cache.")
    blob_dir: Path | None = Field(None, description="Default <home>/cache/blobs.")
    blob_url: str | None = Field(
        None, description="Where the blobs live, as a URL, instead of blob_dir: file:///absolute/folder, "
        "s3://bucket/prefix or gs://bucket/prefix (credentials and endpoint from the environment: "
        "docs/object-storage.md). Unset = blob_dir.")
    ttl_days: float = Field(30, ge=0, le=36_500, description="Worklist runs reuse fetches younger than this.")
    diff_context_lines: int = Field(2, ge=0, le=1000)
    max_diff_lines: int = Field(200, ge=1, le=1_000_000)

    @field_validator("db_url")
    @classmethod
    def _db_url_usable(cls, v: str | None) -> str | None:
        if not v:  # unset (or empty): the default SQLite file under <home>/cache
            return v
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        try:  # the URL is not echoed: it may hold a password
            url = make_url(v)
        except (ArgumentError, ValueError):
            raise ValueError(
                "not a database URL (e.g. sqlite:////abs/path/index.sqlite or postgresql+psycopg://user@host/db)"
            ) from None
        try:
            dialect = url.get_dialect()
        except NoSuchModuleError:
            raise ValueError(f"unknown database or driver {url.drivername!r}") from None
        if getattr(dialect, "is_async", False):
            raise ValueError(f"{url.drivername!r} is an asyncio driver; the cache needs a synchronous one "
                             "(e.g. postgresql+psycopg)")
        try:
            dialect.import_dbapi()
        except ImportError as exc:
            raise ValueError(f"the driver of {url.drivername!r} is not installed ({exc})") from None
        return v

    @field_validator("blob_dir")
    @classmethod
    def _blob_dir_folder(cls, v: Path | None) -> Path | None:
        return _folder_or_absent(v)

    @field_validator("blob_url")
    @classmethod
    def _blob_url_usable(cls, v: str | None) -> str | None:
        if not v:
            return None
        scheme, where = parse_blob_url(v)
        if scheme == "file":
            _folder_or_absent(Path(where))  # the same check as blob_dir: not an existing file
            return Path(where).as_uri()
        return f"{scheme}://{where}"

    @model_validator(mode="after")
    def _one_blob_place(self) -> CacheSettings:
        if self.blob_dir is not None and self.blob_url is not None:
            raise ValueError("set cache.blob_dir or cache.blob_url, not both")
        return self

    @field_validator("ttl_days")
    @classmethod
    def _ttl_fits(cls, v: float) -> float:
        try:  # the cache asks for fetches newer than now - ttl_days
            datetime.now(UTC) - timedelta(days=v)
        except OverflowError:
            raise ValueError("too large a number of days") from None
        return v
