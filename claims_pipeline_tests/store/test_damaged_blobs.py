"""A damaged blob (a bit flip, a truncation, another file under its name) reads as unknown, never crashes a
reader, and heals: it is moved aside, so the page's next fetch is unconditional and stores it again."""

from __future__ import annotations

import gzip

from claims_pipeline.store.blobs import BlobStore, sha256_hex
from claims_pipeline.store.consistency import gc, verify_cache
from claims_pipeline_tests.store.helpers import day, make_cache, ok

URL = "https://www.example.gov/tax/rates"


def _flip(path, at: int = 20) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF  # inside the deflate stream: zlib.error, which is no OSError
    path.write_bytes(bytes(data))


def test_damaged_blobs_read_as_missing_and_are_moved_aside(tmp_path):
    store = BlobStore(tmp_path)
    flipped = store.put(b"VAT 18 % " * 200, "text")
    _flip(store.path(flipped, "text"))
    other = store.put(b"the real text", "text")
    store.path(other, "text").write_bytes(gzip.compress(b"some other text", mtime=0))  # valid gzip, wrong content
    empty = store.put(b"x", "raw")
    store.path(empty, "raw").write_bytes(b"")
    for h, kind in ((flipped, "text"), (other, "text"), (empty, "raw")):
        assert store.verify(h, kind) is not None  # reported, and left in place by verify
        assert store.get(h, kind) is None and not store.exists(h, kind)  # read: unknown, moved aside
    assert len(list(store.iter_temp_files())) == 3


def test_put_rewrites_a_damaged_blob(tmp_path):
    store = BlobStore(tmp_path)
    h = store.put(b"VAT 18 % " * 200, "text")
    _flip(store.path(h, "text"))
    assert store.put(b"VAT 18 % " * 200, "text") == h
    assert store.get(h, "text") == b"VAT 18 % " * 200 and store.verify(h, "text") is None


def test_a_damaged_text_blob_never_crashes_a_reader_and_the_next_fetch_heals_it(tmp_path):
    cache = make_cache(tmp_path)
    state = cache.record(ok(URL, "VAT 18 % " * 200, etag='"v1"'), now=day(1))
    _flip(cache.blobs.path(state.text_hash, "text"))
    report = verify_cache(cache)  # crashed with zlib.error before
    assert not report.ok and any("unreadable text blob" in p for p in report.problems)
    assert cache.states([URL])[URL].text is None  # unknown, not a crash
    # the damaged blob is gone from its place: the next request carries no validators, so a 200 comes back
    assert URL not in cache.conditional_bases([URL])
    healed = cache.record(ok(URL, "VAT 18 % " * 200, etag='"v1"'), now=day(2))
    assert healed.text == "VAT 18 % " * 200 and healed.content_changed is False
    assert verify_cache(cache).ok
    assert len(gc(cache, min_age_s=0)) == 1  # the moved-aside file is a leftover gc removes
    assert sha256_hex(("VAT 18 % " * 200).encode()) == healed.text_hash


def test_a_blob_rewritten_intact_while_a_reader_found_it_damaged_is_not_moved_aside(tmp_path, monkeypatch):
    """Reader: reads damage; meanwhile a writer (another process) rewrites the file intact; the reader's move
    must not take the good file away (a committed row points at it)."""
    from claims_pipeline.store import blobs as B

    store = BlobStore(tmp_path)
    good = b"VAT 18 % " * 200
    h = store.put(good, "text")
    path = store.path(h, "text")
    _flip(path)
    real_content = B._content

    def content_then_writer_heals(p, hash_hex):
        out = real_content(p, hash_hex)
        if p == path and out is None:  # the reader saw the damage; now the writer's os.replace lands
            p.write_bytes(gzip.compress(good, mtime=0))
        return out

    monkeypatch.setattr(B, "_content", content_then_writer_heals)
    assert store.get(h, "text") == good
    assert store.exists(h, "text") and store.verify(h, "text") is None
