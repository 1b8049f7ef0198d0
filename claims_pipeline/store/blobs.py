"""Content-addressed, compressed blob files: raw bodies and extracted texts.

Layout: <root>/ab/cd/<sha256>.<kind>.gz, where the hash is of the uncompressed content. gzip (stdlib) rather
than raw zlib: each file is self-describing (`zcat` reads it when debugging a page) and carries a CRC32, so a
damaged file is detected on read; mtime=0 makes the bytes deterministic, so two processes storing the same
content write identical files and the os.replace race between them is harmless.

Writes are temp file + fsync + os.replace (+ directory fsync): a kill at any moment leaves either the complete
blob or a stray `*.tmp` file, never a half blob under a final name.

Where the blobs live is a URL (settings: cache.blob_url): `file:///abs/dir` (the default, this module's
BlobStore) or `s3://bucket/prefix` / `gs://bucket/prefix` (object_blobs.ObjectBlobStore, same layout and bytes);
blob_stores.open_blob_store picks one.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import secrets
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

KINDS = ("raw", "text")
TEMP_SUFFIX = ".tmp"
DAMAGED_SUFFIX = ".damaged"  # a blob found damaged on read, moved aside (consistency --gc removes it)
_GZIP_LEVEL = 6  # ~zlib default: good ratio on HTML/text, fast enough for PDFs of a few MB


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_bytes(text: str) -> bytes:
    """The stored (and hashed) form of an extracted text."""
    return text.encode("utf-8", "replace")


def text_hash(text: str) -> str:
    """sha256 hex of the extracted text (people are shown its first 16 characters: see display_id)."""
    return sha256_hex(text_bytes(text))


def display_id(hash_hex: str | None) -> str:
    """Short form for humans: 16 hex characters tell a page's texts apart in reports and logs."""
    return (hash_hex or "")[:16]


@dataclass(frozen=True, slots=True)
class BlobFile:
    path: Path | str  # a Path in a local store, the object's URL on object storage
    hash: str
    kind: str


class TextBlobs:
    """Texts over a store's put/get: the local store and the object store (object_blobs.py) share these."""

    def put(self, data: bytes, kind: str) -> str:
        raise NotImplementedError

    def get(self, hash_hex: str, kind: str) -> bytes | None:
        raise NotImplementedError

    def put_text(self, text: str) -> str:
        return self.put(text_bytes(text), "text")

    def get_text(self, hash_hex: str | None) -> str | None:
        if not hash_hex:
            return None
        data = self.get(hash_hex, "text")
        return None if data is None else data.decode("utf-8", "replace")


class BlobStore(TextBlobs):
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self._root_text = str(self.root)

    def __repr__(self) -> str:
        return f"BlobStore({self.root.as_uri() if self.root.is_absolute() else str(self.root)!r})"

    def path(self, hash_hex: str, kind: str) -> Path:
        if kind not in KINDS:
            raise ValueError(f"unknown blob kind {kind!r}")
        return self.root / hash_hex[:2] / hash_hex[2:4] / f"{hash_hex}.{kind}.gz"

    def exists(self, hash_hex: str, kind: str) -> bool:
        if kind not in KINDS:
            raise ValueError(f"unknown blob kind {kind!r}")
        # the same file as path(), as a plain string: asked for every page at the end of each run
        return os.path.isfile(os.path.join(self._root_text, hash_hex[:2], hash_hex[2:4], f"{hash_hex}.{kind}.gz"))

    def exists_many(self, blobs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (hash, kind) exist (the object store asks them in parallel; here a stat is cheap)."""
        return {(h, kind) for h, kind in blobs if self.exists(h, kind)}

    def put(self, data: bytes, kind: str) -> str:
        """Store data (if not already there, intact) and return its hash."""
        hash_hex = sha256_hex(data)
        final = self.path(hash_hex, kind)
        if final.is_file():
            if _content(final, hash_hex) is not None:
                # fresh mtime: `consistency --gc` keeps young unreferenced blobs, and a row about to point at
                # this one may not be committed yet
                with contextlib.suppress(OSError):
                    os.utime(final)
                return hash_hex
            # damaged (a bit flip, a truncation, another file under this name): write it again
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            with open(tmp, "wb") as fh:
                fh.write(gzip.compress(data, compresslevel=_GZIP_LEVEL, mtime=0))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(final.parent)
        return hash_hex

    def get(self, hash_hex: str, kind: str) -> bytes | None:
        """The blob's content, or None when the file is missing or damaged. A damaged file is moved aside
        (`<name>.damaged`), so the page's next fetch is unconditional and stores it again: a cache never
        keeps serving, or re-validating with 304s, a text it cannot read."""
        path = self.path(hash_hex, kind)
        data = _content(path, hash_hex)
        if data is None and path.is_file():
            aside = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}{DAMAGED_SUFFIX}")
            with contextlib.suppress(OSError):
                os.replace(path, aside)
                # another process may have rewritten it intact between our read and the move: put that one back
                if (data := _content(aside, hash_hex)) is not None:
                    os.replace(aside, path)
        return data

    def verify(self, hash_hex: str, kind: str) -> str | None:
        """None when the blob exists and its content hashes to its name, else what is wrong (nothing is moved)."""
        path = self.path(hash_hex, kind)
        if not path.is_file():
            return f"missing {kind} blob {path}"
        try:
            data = gzip.decompress(path.read_bytes())
        except _READ_ERRORS:
            return f"unreadable {kind} blob {path}"
        if sha256_hex(data) != hash_hex:
            return f"hash mismatch in {kind} blob {path}"
        return None

    def iter_blobs(self) -> Iterator[BlobFile]:
        for path in self.root.glob("??/??/*.gz"):
            name = path.name[: -len(".gz")]
            hash_hex, _, kind = name.partition(".")
            if len(hash_hex) == 64 and kind in KINDS:
                yield BlobFile(path, hash_hex, kind)

    def iter_temp_files(self) -> Iterator[Path]:
        """Leftovers: temp files of interrupted writes, and blobs moved aside as damaged."""
        yield from self.root.glob(f"??/??/.*{TEMP_SUFFIX}")
        yield from self.root.glob(f"??/??/*{DAMAGED_SUFFIX}")

    def remove_if_older(self, where: Path | str, cutoff: float) -> bool:
        """Delete a file from iter_blobs/iter_temp_files when its mtime is at or before cutoff (epoch seconds);
        False when it is younger or already gone."""
        path = Path(where)
        try:
            if path.stat().st_mtime > cutoff:
                return False
            path.unlink()
        except FileNotFoundError:
            return False
        return True


_READ_ERRORS = (OSError, EOFError, gzip.BadGzipFile, zlib.error)


def _content(path: Path, hash_hex: str) -> bytes | None:
    """The file's content when it decompresses and hashes to its name; None when missing or damaged (gzip's
    CRC misses a valid gzip of other content, and a zlib.error from a bit flip is no OSError)."""
    try:
        data = gzip.decompress(path.read_bytes())
    except _READ_ERRORS:
        return None
    return data if sha256_hex(data) == hash_hex else None


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable across power loss; not available on every platform.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
