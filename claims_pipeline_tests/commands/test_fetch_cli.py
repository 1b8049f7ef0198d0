"""`claims-pipeline fetch` against the fixture web: real server, real cache, config from a YAML file."""

import json
import subprocess
import sys

import pytest

from claims_pipeline.cli import main
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import write_config
from claims_pipeline_tests.time_scale import scaled


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
    assert second["outcome"] == "NOT_MODIFIED" and second["fetch_status"] == "OK"
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
                       capture_output=True, text=True, timeout=scaled(60))
    assert p.returncode == 0, p.stderr
    [row] = json.loads(p.stdout)
    assert row["fetch_status"] == "DEAD" and row["http_status"] == 404 and row["note"] == "http 404"


def test_bad_config_is_a_clear_error(tmp_path, capsys):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("fetch:\n  concurency: 3\n", encoding="utf-8")
    assert main(["fetch", "--config", str(cfg), "http://a.fixture/"]) == 2
    err = capsys.readouterr().err
    assert str(cfg) in err and "fetch.concurency" in err


# ---- terminal safety: a page cannot drive the terminal through the text output -------------------------------
HOSTILE = (
    "Rate 6.32 % DEL\x7f end C1-CSI\x9b31m \u200fmark\u200e \u202eevil-reversed\u202c \u2066isolated\u2069 "
    "\x1b]0;PWNED-TITLE\x07 \x1b[2J\x1b[31mFAKE: status OK\x1b[0m \x1b]8;;http://evil.example/\x07click\x1b]8;;\x07"
)
RAW_CONTROLS = ["\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\u202c", "\u2066", "\u2069", "\u200e", "\u200f"]


def assert_terminal_safe(out: str) -> None:
    assert not [c for c in RAW_CONTROLS if c in out], [hex(ord(c)) for c in RAW_CONTROLS if c in out]
    assert not [c for c in out if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]


def test_text_output_shows_page_controls_escaped_never_raw(tmp_path, capsys):
    # A bot wall's raw body is shown as it came (the "body:" preview); the text of a readable page is
    # normalised upstream, but goes through the same escaping. Neither may reach the terminal raw.
    site = tmp_path / "sites" / "evil.fixture"
    site.mkdir(parents=True)
    (site / "wall.html").write_text(
        f"<html><head><title>Just a moment</title></head><body><p>{HOSTILE}</p></body></html>", encoding="utf-8")
    (site / "page.html").write_text(f"<html><body><p>{HOSTILE}</p><p>second line stays</p></body></html>",
                                    encoding="utf-8")
    (site / "page.html.v2").write_text(f"<html><body><p>{HOSTILE}</p><p>second \x1b[2Kchanged\u202e</p></body></html>",
                                       encoding="utf-8")
    with FixtureWeb(tmp_path / "sites") as web:
        cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml")
        wall, html = web.url("evil.fixture", "/wall.html"), web.url("evil.fixture", "/page.html")
        assert main(["fetch", "--config", str(cfg), wall, html]) == 0
        out = capsys.readouterr().out
        assert_terminal_safe(out)
        block_wall, block_html = out.split(html)
        assert "status:  BLOCKED" in block_wall and "body:    <html><head><title>Just a moment" in block_wall
        # the escapes are shown, the rest of the line is kept
        assert "\\x1b]0;PWNED-TITLE\\x07" in block_wall and "\\x1b[2J\\x1b[31mFAKE: status OK\\x1b[0m" in block_wall
        assert "\\u202eevil-reversed\\u202c" in block_wall and "\\u2066isolated\\u2069" in block_wall
        assert "\\u200fmark\\u200e" in block_wall and "C1-CSI\\x9b31m" in block_wall and "DEL\\x7f end" in block_wall
        assert "status:  OK" in block_html and "text:    Rate 6.32 %" in block_html and "FAKE: status OK" in block_html
        # --json is unchanged: the raw characters, escaped by JSON itself
        assert main(["fetch", "--config", str(cfg), "--json", wall]) == 0
        raw_json = capsys.readouterr().out
        assert "\x1b" not in raw_json and "\\u001b]0;PWNED-TITLE\\u0007" in raw_json
        [row] = json.loads(raw_json)
        assert "\x1b]0;PWNED-TITLE\x07" in row["preview"] and "\u202eevil-reversed" in row["preview"]
        # a confirmed change: the diff is shown, terminal-safe
        web.set_epoch(2)
        assert main(["fetch", "--config", str(cfg), html]) == 0  # first sighting
        capsys.readouterr()
        assert main(["fetch", "--config", str(cfg), html]) == 0  # second sighting confirms the change
        out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "changed: yes, confirmed now" in out and "  diff:\n" in out and "changed" in out.split("  diff:\n")[1]


def test_format_row_escapes_every_page_derived_field():
    from claims_pipeline.commands.fetch import format_row

    evil = "x\x1b[2J\x07\r\x85\u202ey"
    row = {
        "url": "http://evil.fixture/" + evil, "outcome": "BLOCKED", "fetch_status": "BLOCKED",
        "http_status": 403, "note": "note " + evil, "content_type": "text/html" + evil, "content_kind": "html",
        "final_url": "http://evil.fixture/final" + evil, "text_hash": None, "content_changed": True,
        "changed_at": "2026-01-01" + evil, "text_chars": None, "preview_source": "body", "preview": "body " + evil,
        "diff": "--- old\n+++ new\n-a " + evil + "\n+b\ttab\n",
    }
    out = format_row(row)
    assert_terminal_safe(out)
    assert "\r" not in out and "\x85" not in out
    shown = "x\\x1b[2J\\x07\\x0d\\x85\\u202ey"
    assert out.count(shown) == 7  # url, note, type, final url, changed at, body preview, diff line
    assert "    -a " + shown + "\n    +b\ttab\n" in out  # newline and tab kept; no empty trailing diff line
    assert format_row({"url": "http://u/" + evil, "fetch_status": "NOT_FETCHED", "note": evil}).count(shown) == 2
