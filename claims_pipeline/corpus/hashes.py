"""Content hashes of a scope's corpus files: the corpus documents' data version and the sensor's cursor."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def scope_file_hashes(files: list[Path], corpus_dir: Path) -> dict[str, str]:
    """corpus-relative path -> sha256 of the bytes (unreadable files hash to 'unreadable:<error>')."""
    out: dict[str, str] = {}
    for f in files:
        rel = f.resolve().relative_to(corpus_dir.resolve()).as_posix() if f.is_absolute() else f.as_posix()
        try:
            out[rel] = file_sha256(f)
        except OSError as exc:  # one unreadable file must not hide the others
            out[rel] = f"unreadable:{exc.strerror or exc}"
    return out


def combined_hash(file_hashes: dict[str, str]) -> str:
    """One hash over sorted (path, hash) pairs: equal exactly when the scope's files are byte-identical."""
    h = hashlib.sha256()
    for rel, digest in sorted(file_hashes.items()):
        h.update(f"{rel}\0{digest}\n".encode())
    return h.hexdigest()[:16]
