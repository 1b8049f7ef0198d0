"""Browser test: materialize the demo, serve the Dagster UI on loopback, drive Debian's chromium headless with
Playwright, find the asset graph and the audit asset's metadata, and save screenshots (also of report.html)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SHOTS = REPO / "benchmarks" / "out"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, deadline_s: float, proc: subprocess.Popen) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"dagster-webserver exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} not up after {deadline_s}s")


@pytest.mark.timeout(240)
def test_ui_shows_asset_graph_and_audit_metadata(tmp_path: Path):
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "CLAIMS_PIPELINE_HOME": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster"),
           "NO_PROXY": "127.0.0.1,localhost"}
    (tmp_path / "dagster").mkdir()
    demo = subprocess.run([str(BIN / "claims-pipeline"), "demo"], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr[-3000:]
    report_html = Path(demo.stderr.split("report for people → ")[1].split()[0])
    assert report_html.is_file()

    port = _free_port()
    env["CLAIMS_PIPELINE_CONFIG"] = str(tmp_path / "demo" / "demo.yaml")
    log = open(tmp_path / "webserver.log", "w")
    server = subprocess.Popen([str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), "-m", "claims_pipeline.definitions"],
                              env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_http(f"{base}/server_info", 90, server)
        SHOTS.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.set_default_timeout(30_000)
            # the asset graph ("Global asset lineage"), grouped corpus → web → audit
            page.goto(f"{base}/asset-groups", wait_until="domcontentloaded")
            try:
                page.get_by_text("Global asset lineage").first.wait_for(timeout=45_000)
                page.get_by_text("Materialize all").first.wait_for(timeout=45_000)
            except Exception:
                page.screenshot(path=str(SHOTS / "ui_failure.png"))
                raise
            skip = page.get_by_text("Skip", exact=True)  # the community sign-up dialog, when shown
            if skip.count():
                skip.first.click()
            graph_text = page.inner_text("body")
            for group in ("corpus", "web", "audit"):
                assert group in graph_text
            page.screenshot(path=str(SHOTS / "ui_asset_graph.png"))
            # the catalog lists every asset of the pipeline
            page.goto(f"{base}/assets", wait_until="domcontentloaded")
            page.get_by_text("fetched_pages").first.wait_for(timeout=45_000)
            catalog = page.inner_text("body")
            for name in ("corpus_documents", "claims", "citation_lint", "fetched_pages", "page_changes", "priors",
                         "audit_tables", "audit_report", "worklist"):
                assert name in catalog
            # the audit asset's page: its latest materialization's metadata
            page.goto(f"{base}/assets/audit_tables", wait_until="domcontentloaded")
            page.get_by_text("stale_changed_claims").first.wait_for(timeout=45_000)
            text = page.inner_text("body")
            assert "flagged" in text and "tokens_absent" in text
            for key in ("stale_changed_claims", "tokens_absent_claims", "content_changed", "by_prior"):
                assert key in text  # metadata entries of the latest materialization (markdown tables open on click)
            page.screenshot(path=str(SHOTS / "ui_audit_tables.png"), full_page=True)
            # the report a reviewer reads
            page.goto(report_html.as_uri(), wait_until="load")
            assert "TOKENS_ABSENT" in page.inner_text("body") or "absent" in page.inner_text("body").lower()
            page.screenshot(path=str(SHOTS / "report_html.png"), full_page=True)
            browser.close()
        for shot in ("ui_asset_graph.png", "ui_audit_tables.png", "report_html.png"):
            assert (SHOTS / shot).stat().st_size > 10_000
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
