"""A cache index that is not one, or was made by another version, is named with what to do: never a raw SQL
traceback on the first record, and never a run that silently records nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from claims_pipeline.store.errors import CacheError
from claims_pipeline_tests.store.helpers import day, make_cache, ok
from claims_pipeline_tests.time_scale import scaled


def _db(tmp_path):
    return tmp_path / "cache" / "index.sqlite"


def test_an_index_from_an_older_version_is_named_before_any_work(tmp_path):
    make_cache(tmp_path).record(ok("https://a.gov.xx/r", "VAT 18 %"), now=day(1))
    con = sqlite3.connect(_db(tmp_path))
    con.execute("ALTER TABLE fetches DROP COLUMN attempts")  # as a version without that column made it
    con.commit()
    con.close()
    with pytest.raises(CacheError, match=r"index.sqlite: table fetches lacks column\(s\) attempts: .*another version"):
        make_cache(tmp_path)


def test_an_index_from_a_newer_version_with_a_required_column_is_named(tmp_path):
    make_cache(tmp_path)
    con = sqlite3.connect(_db(tmp_path))
    con.execute("ALTER TABLE urls ADD COLUMN owner TEXT NOT NULL DEFAULT 'x'")  # a default: inserts still work
    con.execute("CREATE TABLE later (id INTEGER)")  # an extra table is harmless
    con.commit()
    con.close()
    make_cache(tmp_path).record(ok("https://a.gov.xx/r", "VAT 18 %"), now=day(1))


def test_a_file_that_is_no_database_fails_in_one_line_naming_it(tmp_path):
    _db(tmp_path).parent.mkdir(parents=True)
    _db(tmp_path).write_bytes(b"these are not the pages you are looking for" * 100)
    with pytest.raises(CacheError, match=r"index.sqlite: cannot use it as the page cache"):
        make_cache(tmp_path)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"home: {tmp_path}\ncache:\n  db_url: sqlite:///{_db(tmp_path)}\n")
    done = subprocess.run([sys.executable, "-m", "claims_pipeline.cli", "fetch", "--config", str(cfg),
                           "http://127.0.0.1:9/x"], capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cannot use it as the page cache" in done.stderr and "index.sqlite" in done.stderr
