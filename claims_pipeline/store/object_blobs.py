"""The blob store on object storage (s3://bucket/prefix, gs://bucket/prefix), through obstore.

Why obstore (the Python bindings of the Rust `object_store` crate) rather than fsspec + s3fs/gcsfs: one small
wheel for S3, GCS and Azure with no botocore/aiobotocore stack, synchronous calls (no event loop to manage from
the cache's threads), and each cloud's standard environment variables read by the library itself (AWS_*,
GOOGLE_*), so no credential ever goes through our settings or files.

Same layout and bytes as the local store: <prefix>/ab/cd/<sha256>.<kind>.gz, deterministic gzip (mtime=0).

Crash safety: every blob is one single-request PUT (`use_multipart=False`; blobs are at most a few MB). S3 and
GCS make an object visible only when its whole body has arrived, so a writer killed mid-upload leaves nothing
under the name, not even an incomplete multipart upload; there are no temp objects. A damaged object (another
content under the name) is still detected on read by gzip's CRC and the sha256 of the content.

Differences from the local store, by design:
- put() always uploads: an identical PUT refreshes the object's Last-Modified, which `consistency --gc` reads as
  its age (a re-stored orphan about to be referenced must look young), and overwrites a damaged object.
- moving a damaged blob aside is a server-side copy then a delete, not one atomic rename: a writer re-storing
  the same blob between those two requests loses its copy; the row then reads as a missing blob, which heals
  the same way on the page's next (unconditional) fetch.
"""

from __future__ import annotations

import gzip
import os
import re
import secrets
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import obstore
from obstore.exceptions import BaseError, NotFoundError
from obstore.store import from_url

from claims_pipeline.store.blobs import (
    _GZIP_LEVEL,
    _READ_ERRORS,
    DAMAGED_SUFFIX,
    KINDS,
    BlobFile,
    TextBlobs,
    sha256_hex,
)
from claims_pipeline.store.errors import CacheError

if TYPE_CHECKING:
    from obstore.store import ObjectStore, RetryConfig

_BLOB_KEY = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/([0-9a-f]{64})\.([a-z]+)\.gz")
# Bounded: a store that does not answer fails the run after ~30 s instead of object_store's default 10 retries
# over 3 minutes (each request also has the library's own 30 s timeout and 5 s connect timeout).
_RETRY: RetryConfig = {"max_retries": 3, "retry_timeout": timedelta(seconds=30)}
_MISSING = (FileNotFoundError, NotFoundError)
_TRIP, _COOL_S = 3, 30.0
_PARALLEL = 16  # requests in flight for exists_many (the client's one connection pool serves them all)


class BlobStoreError(CacheError):
    """The object store refused or did not answer (credentials, bucket, network): one line naming the URL."""


class ObjectBlobStore(TextBlobs):
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self._store: ObjectStore | None = None
        self._pid = -1
        self._failures, self._down_until, self._last_error = 0, 0.0, ""  # see _errors

    def __repr__(self) -> str:
        return f"ObjectBlobStore({self.url!r})"

    @property
    def store(self) -> ObjectStore:
        # made on first use in each process: the client's connection pool and runtime do not survive a fork
        if self._store is None or self._pid != os.getpid():
            self._store = from_url(self.url, retry_config=_RETRY)
            self._pid = os.getpid()
        return self._store

    def key(self, hash_hex: str, kind: str) -> str:
        if kind not in KINDS:
            raise ValueError(f"unknown blob kind {kind!r}")
        return f"{hash_hex[:2]}/{hash_hex[2:4]}/{hash_hex}.{kind}.gz"

    def location(self, key: str) -> str:
        return f"{self.url}/{key}"

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """obstore's errors as one BlobStoreError line naming the URL. After _TRIP failed calls in a row (each
        past its own retries) the store is taken as down: calls fail at once for _COOL_S, so a run of 20,000
        pages against a dead endpoint logs its failures in seconds instead of retrying each page."""
        if self._failures >= _TRIP and time.monotonic() < self._down_until:
            raise BlobStoreError(f"blob store {self.url}: not answering ({self._last_error})")
        try:
            yield
        except _MISSING:
            self._failures = 0
            raise
        except (BaseError, OSError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self._failures += 1
            self._last_error, self._down_until = first, time.monotonic() + _COOL_S
            raise BlobStoreError(f"blob store {self.url}: {first}") from exc
        self._failures = 0

    def exists(self, hash_hex: str, kind: str) -> bool:
        try:
            with self._errors():
                obstore.head(self.store, self.key(hash_hex, kind))
        except _MISSING:
            return False
        return True

    def exists_many(self, blobs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (hash, kind) exist: HEAD requests in parallel, since a run's end asks this of every
        page (one round trip per page, one at a time, would take minutes at 20,000 pages)."""
        wanted = list(dict.fromkeys(blobs))
        if len(wanted) <= 1:
            return {b for b in wanted if self.exists(*b)}
        with ThreadPoolExecutor(max_workers=min(_PARALLEL, len(wanted))) as pool:
            found = list(pool.map(lambda b: self.exists(*b), wanted))
        return {b for b, ok in zip(wanted, found, strict=True) if ok}

    def put(self, data: bytes, kind: str) -> str:
        """Store data and return its hash (one atomic PUT; see the module docstring for why always)."""
        hash_hex = sha256_hex(data)
        body = gzip.compress(data, compresslevel=_GZIP_LEVEL, mtime=0)
        with self._errors():
            obstore.put(self.store, self.key(hash_hex, kind), body, use_multipart=False)
        return hash_hex

    def get(self, hash_hex: str, kind: str) -> bytes | None:
        """The blob's content, or None when missing or damaged; a damaged object is moved aside, as locally."""
        key = self.key(hash_hex, kind)
        body = self._read(key)
        if body is None:
            return None
        data = _content(body, hash_hex)
        if data is None:
            aside = f"{key}.{os.getpid()}.{secrets.token_hex(4)}{DAMAGED_SUFFIX}"
            try:
                with self._errors():
                    obstore.copy(self.store, key, aside)
                    obstore.delete(self.store, key)
                    # another process may have re-stored it intact before our copy: put that one back
                    moved = self._read(aside)
                    if moved is not None and (data := _content(moved, hash_hex)) is not None:
                        obstore.copy(self.store, aside, key)
            except _MISSING:
                pass  # someone else moved it first
        return data

    def verify(self, hash_hex: str, kind: str) -> str | None:
        """None when the blob exists and its content hashes to its name, else what is wrong (nothing is moved)."""
        key = self.key(hash_hex, kind)
        body = self._read(key)
        if body is None:
            return f"missing {kind} blob {self.location(key)}"
        try:
            data = gzip.decompress(body)
        except _READ_ERRORS:
            return f"unreadable {kind} blob {self.location(key)}"
        if sha256_hex(data) != hash_hex:
            return f"hash mismatch in {kind} blob {self.location(key)}"
        return None

    def iter_blobs(self) -> Iterator[BlobFile]:
        for key in self._keys():
            if match := _BLOB_KEY.fullmatch(key):
                hash_hex, kind = match.groups()
                if kind in KINDS:
                    yield BlobFile(self.location(key), hash_hex, kind)

    def iter_temp_files(self) -> Iterator[str]:
        """Leftovers: only blobs moved aside as damaged (an object store has no temp objects)."""
        for key in self._keys():
            if key.endswith(DAMAGED_SUFFIX):
                yield self.location(key)

    def remove_if_older(self, where: Path | str, cutoff: float) -> bool:
        """Delete the object at `where` (a location from iter_blobs/iter_temp_files) when its Last-Modified is
        at or before cutoff (epoch seconds); False when it is younger or already gone."""
        key = str(where).removeprefix(f"{self.url}/")
        try:
            with self._errors():
                meta = obstore.head(self.store, key)
                if meta["last_modified"].timestamp() > cutoff:
                    return False
                obstore.delete(self.store, key)
        except _MISSING:
            return False
        return True

    def _keys(self) -> Iterator[str]:
        with self._errors():
            batches = list(obstore.list(self.store))  # pages fetched before yielding: errors surface here
        for batch in batches:
            for meta in batch:
                yield meta["path"]

    def _read(self, key: str) -> bytes | None:
        try:
            with self._errors():
                return bytes(obstore.get(self.store, key).bytes())
        except _MISSING:
            return None


def _content(body: bytes, hash_hex: str) -> bytes | None:
    try:
        data = gzip.decompress(body)
    except _READ_ERRORS:
        return None
    return data if sha256_hex(data) == hash_hex else None
