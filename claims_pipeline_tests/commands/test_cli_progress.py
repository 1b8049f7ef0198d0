"""The CLI's `--version`, `fetch --json`'s `outcome`, and fetch progress: the events refresh_pages reports, and the
rich display on a real pseudo-terminal against silence in a pipe or CI. Real fixture web, real cache."""

from __future__ import annotations

import json
import logging
import os
import pty
import re
import select
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from claims_pipeline.cli import main
from claims_pipeline.steps.pages.progress import FetchEvent, FetchProgressDisplay
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import fixture_settings, write_config
from claims_pipeline_tests.time_scale import scaled

REPO = Path(__file__).resolve().parents[2]
HOST = "slow.fixture"  # every page on one host, one request at a time: the interval makes the run wait


@pytest.fixture
def web():
    with FixtureWeb() as w:
        yield w


def cli(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args], capture_output=True, text=True,
                          timeout=scaled(60), cwd=REPO, **kwargs)


def quiet_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "120", **extra}


# ---- --version ---------------------------------------------------------------------------------------------------
def test_version_prints_the_installed_version_on_stdout():
    p = cli(["--version"])
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"claims-pipeline {version('claims_pipeline')}\n" and p.stderr == ""


# ---- fetch --json: one field says what happened ------------------------------------------------------------------
def test_json_outcome_says_not_modified_where_fetch_status_says_ok(web, tmp_path, capsys):
    cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml")
    page, gone = web.url("x.fixture", "/_/page/rates"), web.url("x.fixture", "/_/status/404")
    assert main(["fetch", "--config", str(cfg), "--json", page, gone]) == 0
    first, dead = json.loads(capsys.readouterr().out)
    assert (first["outcome"], first["fetch_status"]) == ("OK", "OK")
    assert (dead["outcome"], dead["fetch_status"]) == ("DEAD", "DEAD")
    assert main(["fetch", "--config", str(cfg), "--json", page]) == 0
    [second] = json.loads(capsys.readouterr().out)
    assert second["outcome"] == "NOT_MODIFIED" and second["http_status"] == 304
    assert second["fetch_status"] == "OK" and second["outcome"] == "NOT_MODIFIED"


def test_json_outcome_of_a_url_with_no_recorded_result():
    from claims_pipeline.commands.fetch import describe

    row = describe("http://x.fixture/", None, cache=None)
    assert row["outcome"] == "NOT_FETCHED" and row["fetch_status"] == "NOT_FETCHED"


def test_json_escapes_controls_json_itself_leaves_raw(tmp_path, capsys):
    site = tmp_path / "sites" / "evil.fixture"
    site.mkdir(parents=True)
    (site / "p.html").write_text("<html><body><p>Rate 6.32 % DEL\x7f C1\x9b31m \u202eevil\u202c</p></body></html>",
                                 encoding="utf-8")
    with FixtureWeb(tmp_path / "sites") as web:
        cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml")
        assert main(["fetch", "--config", str(cfg), "--json", web.url("evil.fixture", "/p.html")]) == 0
    out = capsys.readouterr().out
    assert not [c for c in "\x7f\x9b\u202e\u202c" if c in out]
    assert "\\u009b31m" in out and "\\u202eevil" in out
    [row] = json.loads(out)
    assert "C1\x9b31m \u202eevil\u202c" in row["preview"]  # the same data once decoded


def test_help_and_docs_name_both_fields():
    p = cli(["fetch", "--help"])
    assert p.returncode == 0
    for word in ("outcome", "NOT_MODIFIED", "fetch_status", "docs/cli-json.md"):
        assert word in p.stdout, word
    doc = (REPO / "docs" / "cli-json.md").read_text(encoding="utf-8")
    assert "`outcome`" in doc and "`fetch_status`" in doc and "NOT_MODIFIED" in doc


# ---- the progress hook of refresh_pages --------------------------------------------------------------------------
def test_refresh_pages_reports_start_each_page_each_host_wait_and_end(web, tmp_path):
    settings = fixture_settings(web, tmp_path / "home", interval_ms=150, concurrency=1)
    urls = [web.url(HOST, f"/_/page/p{i}") for i in range(3)]
    events: list[FetchEvent] = []
    states = refresh_pages(settings.page_fetching, urls, progress=events.append)
    assert len(states) == 3
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and events[0].total == 3 and kinds[-1] == "end" and events[-1].done == 3
    pages = [e for e in events if e.kind == "page"]
    assert [e.done for e in pages] == [1, 2, 3] and {e.host for e in pages} == {HOST}
    assert {e.status for e in pages} == {"OK"}
    waits = [e for e in events if e.kind == "wait"]
    # the robots.txt request, then each page, are spaced by the host's 150 ms interval: every page waited
    assert len(waits) >= 3 and {e.host for e in waits} == {HOST} and all(0 < e.wait_s <= 0.15 for e in waits)
    # a page served from the cache is not fetched, so not counted
    events.clear()
    refresh_pages(settings.page_fetching, urls, force=False, progress=events.append)
    assert [(e.kind, e.total) for e in events] == [("start", 0), ("end", 0)]


def test_a_failing_progress_callback_is_dropped_and_the_run_completes(web, tmp_path, caplog):
    settings = fixture_settings(web, tmp_path / "home", interval_ms=20)
    calls: list[str] = []

    def broken(event: FetchEvent) -> None:
        calls.append(event.kind)
        raise RuntimeError("display gone")

    urls = [web.url(HOST, f"/_/page/q{i}") for i in range(3)]
    with caplog.at_level(logging.ERROR, logger="claims_pipeline.steps.pages.refresh"):
        states = refresh_pages(settings.page_fetching, urls, progress=broken)
    assert len(states) == 3 and calls == ["start"]
    assert "progress callback failed" in caplog.text


def test_waits_line_lists_the_longest_waits_and_escapes_host_names():
    show = FetchProgressDisplay()  # under pytest stderr is no terminal: nothing is drawn, the state is kept
    assert show.enabled is False
    show(FetchEvent("wait", host="a.example", wait_s=5))
    show(FetchEvent("wait", host="evil\x1b[2J.example", wait_s=9))
    for i in range(4):
        show(FetchEvent("wait", host=f"h{i}.example", wait_s=1 + i / 10))
    line = show.waits_line()
    assert line.startswith("waiting: evil\\x1b[2J.example 9.0s, a.example 5.0s, h3.example 1.3s") and "\x1b" not in line
    assert line.endswith("(+2 hosts)")
    show(FetchEvent("page", host="a.example"))  # its page came back: no longer waiting
    assert "a.example" not in show.waits_line()
    show(FetchEvent("wait", host="b.example", wait_s=0.01))
    time.sleep(0.05)
    assert "b.example" not in show.waits_line()  # a wait that is over is not shown


# ---- the real command on a terminal and in a pipe ----------------------------------------------------------------
def fetch_args(web, tmp_path: Path, n: int = 4) -> list[str]:
    cfg = write_config(web, tmp_path / "home", tmp_path / "c.yaml", interval_ms=400, concurrency=1)
    return ["fetch", "--config", str(cfg), "--json", *(web.url(HOST, f"/_/page/t{i}") for i in range(n))]


def run_with_stderr_on_a_pty(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """The command with stderr on a pseudo-terminal (what a person sees) and stdout in a pipe."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "claims_pipeline.cli", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave, cwd=REPO, env=env)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal (EIO on Linux)
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(timeout=scaled(30)), out, seen.decode("utf-8", "replace")


def test_progress_is_drawn_on_a_terminal(web, tmp_path):
    rc, out, raw = run_with_stderr_on_a_pty(fetch_args(web, tmp_path), quiet_env())
    assert rc == 0, raw
    assert [r["outcome"] for r in json.loads(out)] == ["OK"] * 4  # stdout is the JSON alone
    assert "\x1b[1A\x1b[2K" in raw  # drawn in place, and erased at the end
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)  # what a person reads: the text without colours and moves
    assert "fetching" in shown and "4/4 pages" in shown
    assert re.search(r"[123]/4 pages", shown)  # seen moving
    assert re.search(rf"waiting: {re.escape(HOST)} 0\.[0-4]s", shown)  # the host held by its 400 ms interval


@pytest.mark.parametrize("extra", [{"CI": "true"}, {"TERM": "dumb"}])
def test_no_progress_on_a_terminal_under_ci_or_a_dumb_terminal(web, tmp_path, extra):
    rc, out, term = run_with_stderr_on_a_pty(fetch_args(web, tmp_path, n=2), quiet_env(**extra))
    assert rc == 0 and len(json.loads(out)) == 2
    assert term.strip().startswith("claims-pipeline: config ") and len(term.strip().splitlines()) == 1  # no bar


def test_nothing_extra_in_a_pipe(web, tmp_path):
    p = cli(fetch_args(web, tmp_path, n=2), env=quiet_env())  # both ends are pipes
    assert p.returncode == 0
    assert p.stderr.startswith("claims-pipeline: config ") and len(p.stderr.splitlines()) == 1  # which config, nothing else
    assert [r["outcome"] for r in json.loads(p.stdout)] == ["OK", "OK"]


@pytest.mark.parametrize("command", ["audit", "worklist"])
def test_audit_and_worklist_draw_their_fetch_on_a_terminal(web, tmp_path, command):
    """Their fetch runs inside Dagster steps in the same process: the display the command installs is the one
    the fetch run reports to (progress.installed)."""
    from claims_pipeline.commands.demo import write_runtime_config

    home = tmp_path / "home"
    home.mkdir()
    config = write_runtime_config(home, f"127.0.0.1:{web.port}")
    env = quiet_env(DAGSTER_HOME=str(tmp_path / "dagster"), CLAIMS_PIPELINE_HOME=str(tmp_path))
    extra = ["--scope", "xa"] if command == "audit" else ["--sample", "6"]
    rc, _, raw = run_with_stderr_on_a_pty([command, "--config", str(config), *extra], env)
    assert rc == 0, raw[-2000:]
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    label = "re-reading cited pages" if command == "audit" else "fetching the sample's pages"
    assert label in shown and re.search(r"\d+/\d+ pages", shown), shown[-2000:]


def test_off_a_terminal_a_long_wait_is_said_once_in_a_line(capsys):
    """A log or a journal shows no bar: a wait of LONG_WAIT_S or more is said as it begins, once per wait, the
    host name written out; shorter waits are not."""
    import io

    from rich.console import Console

    from claims_pipeline.steps.pages.progress import LONG_WAIT_S, FetchEvent, FetchProgressDisplay

    with FetchProgressDisplay(Console(file=io.StringIO())) as show:
        assert not show.enabled
        show(FetchEvent("wait", host="quick.gov.xa", wait_s=LONG_WAIT_S / 2))
        show(FetchEvent("wait", host="slow\x1b[2J.gov.xa", wait_s=120))
        show(FetchEvent("wait", host="slow\x1b[2J.gov.xa", wait_s=119.9))  # the same wait, told again
    err = capsys.readouterr().err
    assert err.splitlines() == ["claims-pipeline: waiting 120 s before the next request to slow\\x1b[2J.gov.xa "
                                "(its interval, robots.txt Crawl-delay or Retry-After; Ctrl-C stops the run)"]
