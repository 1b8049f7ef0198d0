"""Content hashes of a scope's corpus files: the corpus documents' data version and the sensor's cursor."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from claims_pipeline.corpus.reading import open_regular


def file_sha256(path: Path) -> str:
    """The bytes' sha256, read in blocks from a regular file only: the walker hands over no FIFO or device,
    and one swapped in since is an OSError here (unreadable), never a wait or a read without end."""
    h = hashlib.sha256()
    fh, _ = open_regular(path)
    with fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def corpus_relative(path: Path, corpus_dir: Path) -> str:
    """The name a corpus file goes by: its path under corpus_dir as the walker found it. Not its resolved
    target: a link inside the corpus keeps its own name, and a link out of the corpus (when
    extraction.follow_links_out_of_corpus allows one) has no name inside it to fail on."""
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.relative_to(corpus_dir).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, corpus_dir)).as_posix()


def scope_file_hashes(files: list[Path], corpus_dir: Path) -> dict[str, str]:
    """corpus-relative path -> sha256 of the bytes (unreadable files hash to 'unreadable:<error>')."""
    out: dict[str, str] = {}
    for f in files:
        rel = corpus_relative(f, corpus_dir)
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

