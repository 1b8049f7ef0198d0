"""`claims-pipeline fetch` against the fixture web: real server, real cache, config from a YAML file."""

import json
import subprocess
import sys

import pytest

from claims_pipeline.cli import main
from claims_pipeline.fixture_web.server import FixtureWeb

from claims_pipeline_tests.store.fixture_settings import write_config


@pytest.fixture
def web():
    with FixtureWeb() as w:
        yield w


def test_text_output_shows_status_note_kind_hash_change_and_preview(web, tmp_path, capsys):
    cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml")
    ok, wall = web.url("www.tax.gov.xa", "/property/annual-levy.html"), web.url("w.fixture", "/_/cf-challenge")
    assert main(["fetch", "--config", str(cfg), ok, wall]) == 0
    out = capsys.readouterr().out
    block_ok, block_wall = out.split(wall)
    assert "status:  OK   http: 200" in block_ok and "kind:    html" in block_ok
    assert "changed: no" in block_ok and "annual property levy" in block_ok.lower()
    assert "status:  BLOCKED   http: 403" in block_wall and "cf-mitigated" in block_wall
    assert "body:    <!DOCTYPE html>" in block_wall and "Just a moment" in block_wall  # why it is blocked


def test_json_output_and_cache_reuse_on_second_call(web, tmp_path, capsys):
    cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml")
    url = web.url("x.fixture", "/_/pdf/text")
    assert main(["fetch", "--config", str(cfg), "--json", url]) == 0
    [first] = json.loads(capsys.readouterr().out)
    assert first["fetch_status"] == "OK" and first["content_kind"].startswith("pdf:")
    assert first["http_status"] == 200 and len(first["text_hash"]) == 64 and first["content_changed"] is False
    assert "7.5 %" in first["preview"] and len(first["preview"]) <= 200
    assert main(["fetch", "--config", str(cfg), "--json", url]) == 0
    [second] = json.loads(capsys.readouterr().out)
    assert second["recorded_status"] == "NOT_MODIFIED" and second["fetch_status"] == "OK"
    assert second["text_hash"] == first["text_hash"]
    assert (tmp_path / "home" / "cache" / "index.sqlite").is_file()


def test_runs_as_a_command_without_importing_dagster(web, tmp_path):
    cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml")
    url = web.url("y.fixture", "/_/status/404")
    code = (
        "import sys; from claims_pipeline.cli import main; rc = main(sys.argv[1:]);"
        "assert 'dagster' not in sys.modules, 'dagster imported'; sys.exit(rc)"
    )
    p = subprocess.run([sys.executable, "-c", code, "fetch", "--config", str(cfg), "--json", url],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    [row] = json.loads(p.stdout)
    assert row["fetch_status"] == "DEAD" and row["http_status"] == 404 and row["note"] == "http 404"


def test_bad_config_is_a_clear_error(tmp_path, capsys):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("fetch:\n  concurency: 3\n", encoding="utf-8")
    assert main(["fetch", "--config", str(cfg), "http://a.fixture/"]) == 2
    err = capsys.readouterr().err
    assert str(cfg) in err and "fetch.concurency" in err
