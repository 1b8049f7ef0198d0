"""Run as a subprocess by test_blobs_object_storage: store blobs in the store at a URL, as a worker would.

    python -m claims_pipeline_tests.store.blob_put_worker URL same N REVERSED   N pages (raw + text), in order or not
    python -m claims_pipeline_tests.store.blob_put_worker URL big SIZE          one incompressible raw blob
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from claims_pipeline.store.blob_stores import open_blob_store


def page(i: int) -> tuple[bytes, str]:
    return f"<html><p>page {i}: rate {i % 7}.5 %</p></html>".encode() * 20, f"page {i}: rate {i % 7}.5 %"


def big(size: int) -> bytes:
    # incompressible and reproducible: the test computes the same hash to look for the object
    out, block = bytearray(), b"seed"
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])


def main(url: str, mode: str, n: int, reversed_order: str = "0", ready: str = "") -> None:
    store = open_blob_store(url)
    if mode == "big":
        store.put(big(n), "raw")
        return
    if ready:  # barrier: both workers up before either writes, so their PUTs of the same keys really overlap
        Path(f"{ready}.{reversed_order}").touch()
        deadline = time.monotonic() + 30
        while len(list(Path(ready).parent.glob(f"{Path(ready).name}.*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    order = range(n - 1, -1, -1) if reversed_order == "1" else range(n)
    for i in order:
        raw, text = page(i)
        store.put(raw, "raw")
        store.put_text(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:])
