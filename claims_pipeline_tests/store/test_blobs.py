import gzip

from claims_pipeline.store.blobs import BlobStore, display_id, sha256_hex, text_hash


def test_put_get_roundtrip_and_layout(tmp_path):
    store = BlobStore(tmp_path)
    data = b"<html>figure 6.32 %</html>" * 100
    h = store.put(data, "raw")
    assert h == sha256_hex(data)
    path = tmp_path / h[:2] / h[2:4] / f"{h}.raw.gz"
    assert path.is_file()
    assert gzip.decompress(path.read_bytes()) == data
    assert path.stat().st_size < len(data)  # compressed
    assert store.get(h, "raw") == data
    assert store.get(h, "text") is None  # kinds are separate files


def test_same_content_is_stored_once_with_identical_bytes(tmp_path):
    store = BlobStore(tmp_path)
    h1 = store.put(b"same", "raw")
    first = store.path(h1, "raw").read_bytes()
    store.path(h1, "raw").unlink()
    h2 = store.put(b"same", "raw")
    assert h1 == h2 and store.path(h2, "raw").read_bytes() == first  # deterministic gzip (mtime=0)
    assert len(list(store.iter_blobs())) == 1


def test_text_hash_is_full_sha256_of_utf8_and_display_id_is_16_chars(tmp_path):
    store = BlobStore(tmp_path)
    h = store.put_text("Taux 6,32 % — été")
    assert h == text_hash("Taux 6,32 % — été") == sha256_hex("Taux 6,32 % — été".encode())
    assert len(h) == 64 and display_id(h) == h[:16]
    assert store.get_text(h) == "Taux 6,32 % — été"


def test_verify_detects_missing_damaged_and_wrong_content(tmp_path):
    store = BlobStore(tmp_path)
    h = store.put(b"payload", "raw")
    assert store.verify(h, "raw") is None
    store.path(h, "raw").write_bytes(b"not gzip at all")
    assert "unreadable" in store.verify(h, "raw")
    store.path(h, "raw").write_bytes(gzip.compress(b"other payload"))
    assert "hash mismatch" in store.verify(h, "raw")
    store.path(h, "raw").unlink()
    assert "missing" in store.verify(h, "raw")


def test_temp_files_are_listed_not_taken_for_blobs(tmp_path):
    store = BlobStore(tmp_path)
    h = store.put(b"x", "raw")
    stray = store.path(h, "raw").with_name(f".{h}.raw.gz.123.abcd.tmp")
    stray.write_bytes(b"half")
    assert list(store.iter_temp_files()) == [stray]
    assert [b.hash for b in store.iter_blobs()] == [h]
