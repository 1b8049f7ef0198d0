"""The blob store on object storage (s3://), with the real client library (obstore) against an S3-compatible
server started here on 127.0.0.1 (moto in server mode). gs:// is checked as far as its URL and configuration go:
no fake GCS server from the package registries speaks enough of the API (see docs/object-storage.md)."""

from __future__ import annotations

import gzip
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from claims_pipeline.config.settings import ConfigError, settings_from_dict
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.blob_stores import open_blob_store
from claims_pipeline.store.blobs import BlobStore, sha256_hex
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.consistency import gc, verify_cache
from claims_pipeline.store.errors import CacheError
from claims_pipeline.store.object_blobs import BlobStoreError, ObjectBlobStore
from claims_pipeline.store.writable import home_folders
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.store.blob_put_worker import big, page
from claims_pipeline_tests.store.helpers import day, ok
from claims_pipeline_tests.store.stall_proxy import stall_proxy
from claims_pipeline_tests.support.fixture_settings import fixture_config
from claims_pipeline_tests.support.s3_server import S3Server, s3_server
from claims_pipeline_tests.time_scale import scaled

URL = "https://www.example.gov/tax/rates"


@pytest.fixture(scope="module")
def s3() -> S3Server:
    with s3_server() as server:
        yield server


@pytest.fixture
def bucket(s3: S3Server) -> str:
    return s3.new_bucket()


def _worker(url: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "claims_pipeline_tests.store.blob_put_worker", url, *args],
                            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_store_read_exists_and_list_both_kinds_in_the_local_layout(s3, bucket, tmp_path):
    store = open_blob_store(f"s3://{bucket}/cache/blobs/")
    assert isinstance(store, ObjectBlobStore) and store.url == f"s3://{bucket}/cache/blobs"
    raw = b"<html>figure 6.32 %</html>" * 100
    h_raw, h_text = store.put(raw, "raw"), store.put_text("Taux 6,32 % — été")
    assert h_raw == sha256_hex(raw) and store.exists(h_raw, "raw") and store.exists(h_text, "text")
    assert not store.exists(h_raw, "text")  # kinds are separate objects
    assert store.get(h_raw, "raw") == raw and store.get_text(h_text) == "Taux 6,32 % — été"
    assert store.verify(h_raw, "raw") is None and store.verify(h_text, "text") is None
    # the same keys and the very bytes the local store writes (deterministic gzip): a cache can be copied across
    local = BlobStore(tmp_path)
    local.put(raw, "raw")
    key = f"cache/blobs/{h_raw[:2]}/{h_raw[2:4]}/{h_raw}.raw.gz"
    assert key in s3.keys(bucket)
    assert s3.read(bucket, key) == local.path(h_raw, "raw").read_bytes()
    listed = sorted((b.hash, b.kind, b.path) for b in store.iter_blobs())
    assert listed == sorted([(h_raw, "raw", f"{store.url}/{store.key(h_raw, 'raw')}"),
                             (h_text, "text", f"{store.url}/{store.key(h_text, 'text')}")])
    assert list(store.iter_temp_files()) == []
    missing = sha256_hex(b"never stored")
    asked = [(h_raw, "raw"), (h_text, "text"), (missing, "raw"), (h_raw, "text")] * 5
    assert store.exists_many(asked) == {(h_raw, "raw"), (h_text, "text")}  # parallel HEADs, each asked once
    assert store.get(missing, "raw") is None and not store.exists(missing, "raw")
    assert store.verify(missing, "raw") == f"missing raw blob {store.url}/{store.key(missing, 'raw')}"
    # another prefix in the same bucket is another store: it sees none of these
    assert list(open_blob_store(f"s3://{bucket}/cache/blob").iter_blobs()) == []


def test_damaged_objects_read_as_missing_are_moved_aside_and_rewritten(s3, bucket):
    store = open_blob_store(f"s3://{bucket}/b")
    cases = {
        "not gzip": (b"VAT 18 % " * 200, "text", b"not gzip at all"),
        "other content": (b"the real text", "text", gzip.compress(b"some other text", mtime=0)),
        "truncated": (b"x" * 5000 + os.urandom(3000), "raw", None),
    }
    for why, (data, kind, bad) in cases.items():
        h = store.put(data, kind)
        key = f"b/{store.key(h, kind)}"
        s3.write(bucket, key, bad if bad is not None else s3.read(bucket, key)[:-10])
        assert store.verify(h, kind) is not None, why  # reported, left in place
        assert store.exists(h, kind), why
        assert store.get(h, kind) is None and not store.exists(h, kind), why  # read: unknown, moved aside
    aside = list(store.iter_temp_files())
    assert len(aside) == 3 and all(a.endswith(".damaged") for a in aside)
    data, kind, _ = cases["not gzip"]
    h = store.put(data, kind)  # the next fetch stores it again
    assert store.get(h, kind) == data and store.verify(h, kind) is None


def test_cache_check_and_gc_on_object_storage(s3, bucket, tmp_path):
    with PageCache(f"sqlite:///{tmp_path / 'index.sqlite'}", f"s3://{bucket}/c") as cache:
        state = cache.record(ok(URL, "kept"), now=day(1))
        orphan = cache.blobs.put(b"blob whose row never committed", "raw")
        report = verify_cache(cache)
        assert report.ok and report.blobs_checked == 2 and report.temp_files == []
        assert report.orphan_blobs == [f"s3://{bucket}/c/{cache.blobs.key(orphan, 'raw')}"]
        assert gc(cache) == []  # too young (Last-Modified is now)
        assert gc(cache, min_age_s=0) == report.orphan_blobs
        assert verify_cache(cache).orphan_blobs == [] and cache.state(URL).text == "kept"
        # a referenced blob deleted behind the cache's back is a problem naming the URL and the object
        key = f"c/{cache.blobs.key(state.raw_hash, 'raw')}"
        s3.delete(bucket, key)
        problems = verify_cache(cache).problems
        assert len(problems) == 1 and URL in problems[0] and f"missing raw blob s3://{bucket}/{key}" in problems[0]


def test_consistency_command_on_s3_and_unreachable_store_is_one_line_naming_the_url(s3, bucket, tmp_path, capsys,
                                                                                    monkeypatch):
    from claims_pipeline.store.consistency import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"home: {tmp_path / 'home'}\ncache:\n  blob_url: s3://{bucket}/blobs\n", encoding="utf-8")
    on_s3 = settings_from_dict({"home": str(tmp_path / "home"), "cache": {"blob_url": f"s3://{bucket}/blobs"}})
    with PageCache.at(on_s3.page_cache) as cache:
        cache.record(ok(URL, "kept"), now=day(1))
        cache.blobs.put(b"orphan", "raw")
    assert not (tmp_path / "home" / "cache" / "blobs").exists()  # nothing local
    assert main(["--config", str(cfg), "--gc", "--min-age", "0"]) == 0
    out = capsys.readouterr().out
    assert "1 fetch rows, 2 blobs verified; 1 orphan blobs" in out and "removed 1 leftover files" in out
    assert len(s3.keys(bucket)) == 2
    # a store that does not answer: one line naming the blob URL, after a bounded number of retries
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    started = time.monotonic()
    assert main(["--config", str(cfg)]) == 1
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert f"blob store s3://{bucket}/blobs" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def _closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_storing_the_same_content(s3, bucket, tmp_path):
    url = f"s3://{bucket}/shared"
    workers = [_worker(url, "same", "40", order, str(tmp_path / "ready")) for order in ("0", "1")]
    for w in workers:
        _, err = w.communicate(timeout=scaled(60))
        assert w.returncode == 0, err.decode()
    store = open_blob_store(url)
    blobs = sorted((b.hash, b.kind) for b in store.iter_blobs())
    expected = sorted({(sha256_hex(page(i)[0]), "raw") for i in range(40)} |
                      {(sha256_hex(page(i)[1].encode()), "text") for i in range(40)})
    assert blobs == expected and len(s3.keys(bucket)) == 80  # one object each, nothing else
    for i in range(40):
        raw, text = page(i)
        assert store.get(sha256_hex(raw), "raw") == raw and store.get_text(sha256_hex(text.encode())) == text


def test_a_writer_killed_mid_upload_leaves_no_object(s3, bucket):
    size = 4 * 1024 * 1024
    host, port = s3.endpoint.removeprefix("http://").split(":")
    with stall_proxy((host, int(port)), budget=512 * 1024) as proxy:
        env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}")
        writer = subprocess.Popen([sys.executable, "-m", "claims_pipeline_tests.store.blob_put_worker",
                                   f"s3://{bucket}/k", "big", str(size)], env=env, stderr=subprocess.PIPE)
        try:
            assert proxy.stalled.wait(30), "the writer never got half its blob to the server"
            assert writer.poll() is None  # still uploading: the server has part of the body
        finally:
            writer.send_signal(signal.SIGKILL)
            writer.wait(10)
        assert proxy.closed_by_client.wait(10)
    store = open_blob_store(f"s3://{bucket}/k")
    h = sha256_hex(big(size))
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:  # the server notices the cut body at its own pace; nothing may appear
        assert s3.keys(bucket) == [] and not store.exists(h, "raw")
        time.sleep(0.2)
    assert s3.pending_uploads(bucket) == 0  # one single PUT, not a multipart upload left behind
    assert store.get(h, "raw") is None and list(store.iter_blobs()) == []
    assert store.put(big(size), "raw") == h and store.verify(h, "raw") is None  # a later writer stores it whole


def test_a_fetch_run_with_blobs_on_s3_gives_the_same_texts_and_hashes_as_on_file(s3, bucket, tmp_path):
    with FixtureWeb() as web:
        urls = [web.url("www.tax.gov.xa", "/property/annual-levy.html"),
                web.url("www.tax.gov.xa", "/property/transfer-duty.html"),
                web.url("pdfs.fixture", "/tax-table.pdf"), web.url("b.fixture", "/_/page/rates"),
                web.url("a.fixture", "/_/status/410")]
        on_file = settings_from_dict(fixture_config(web, tmp_path / "file-home"))
        on_s3 = settings_from_dict({**fixture_config(web, tmp_path / "s3-home"),
                                    "cache": {"blob_url": f"s3://{bucket}/run"}})
        local = refresh_pages(on_file.page_fetching, urls, now="2026-03-01T00:00:00Z")
        remote = refresh_pages(on_s3.page_fetching, urls, now="2026-03-01T00:00:00Z")
        warm = refresh_pages(on_s3.page_fetching, urls, now="2026-03-02T00:00:00Z")  # 304s: texts read back from S3
    assert sorted(local) == sorted(remote) == sorted(urls)
    fields = ("fetch_status", "text", "text_hash", "raw_hash", "content_kind")
    for url in urls:
        assert [getattr(remote[url], f) for f in fields] == [getattr(local[url], f) for f in fields], url
        assert warm[url].text == local[url].text and warm[url].text_hash == local[url].text_hash
    assert sum(s.text is not None for s in remote.values()) == 4  # the 410 has none
    assert not (tmp_path / "s3-home" / "cache" / "blobs").exists()
    with PageCache.at(on_file.page_cache) as file_cache, PageCache.at(on_s3.page_cache) as s3_cache:
        assert verify_cache(s3_cache).ok and verify_cache(file_cache).ok
        assert isinstance(s3_cache.blobs, ObjectBlobStore)
        assert sorted((b.hash, b.kind) for b in s3_cache.blobs.iter_blobs()) == \
               sorted((b.hash, b.kind) for b in file_cache.blobs.iter_blobs())


def test_blob_url_setting_file_s3_and_gs(tmp_path):
    def settings(**cache: str):
        return settings_from_dict({"home": str(tmp_path / "home"), "cache": cache})

    folder = tmp_path / "a b"
    assert settings(blob_url=folder.as_uri()).blob_location == folder
    store = open_blob_store(folder.as_uri())
    assert isinstance(store, BlobStore) and store.root == folder  # file:// is the local store, same layout
    assert settings().blob_location == tmp_path / "home" / "cache" / "blobs"
    assert settings(blob_url="s3://my-bucket/team/cache/").blob_location == "s3://my-bucket/team/cache"
    on_s3 = settings(blob_url="s3://my-bucket/x")
    assert "the page cache blobs" not in home_folders(on_s3.home_dir, on_s3.page_cache)
    gs = settings(blob_url="gs://my-bucket/team/cache").blob_location
    assert gs == "gs://my-bucket/team/cache"
    gs_store = open_blob_store(gs)
    assert isinstance(gs_store, ObjectBlobStore) and gs_store.store.prefix == "team/cache"
    assert type(gs_store.store).__name__ == "GCSStore"
    for bad, says in [("http://host/x", "s3://bucket/prefix"), ("s3://KEY:secret@my-bucket/x", "credentials"),
                      ("s3://my-bucket/x?region=eu", "no query"), ("file://relative/x", "file:///absolute"),
                      ("s3:///x", "needs a bucket name"), ("gs://", "needs a bucket name")]:
        with pytest.raises(ConfigError, match=says) as caught:
            settings(blob_url=bad)
        assert "secret" not in str(caught.value)
    with pytest.raises(ConfigError, match="not both"):
        settings(blob_url="s3://my-bucket/x", blob_dir=str(tmp_path / "d"))


def test_unusable_store_is_a_cache_error_naming_the_url(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    store = open_blob_store("s3://no-such-bucket/p")
    for _ in range(3):  # each after its bounded retries
        with pytest.raises(BlobStoreError, match="blob store s3://no-such-bucket/p: ") as caught:
            store.put(b"x", "raw")
        assert "not answering" not in str(caught.value)
    # then taken as down: the next calls fail at once, naming the last error, instead of retrying each page
    with pytest.raises(BlobStoreError, match="blob store s3://no-such-bucket/p: not answering"):
        store.exists(sha256_hex(b"x"), "raw")
    assert issubclass(BlobStoreError, CacheError)  # what the CLI and the consistency command print as one line
