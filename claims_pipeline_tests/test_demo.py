"""`claims-pipeline demo` end to end: every prior appears, and the changed page gives CONTENT_CHANGED and
stale_changed on the third audit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def test_demo_shows_every_prior_and_a_confirmed_change(tmp_path: Path):
    env = {**os.environ, "CLAIMS_PIPELINE_HOME": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster")}
    (tmp_path / "dagster").mkdir()
    out = subprocess.run([str(BIN / "claims-pipeline"), "demo"], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    headline = json.loads(out.stdout)
    assert set(headline["by_prior"]) == {"TOKENS_PRESENT", "WEAK_MATCH", "TOKENS_ABSENT", "SOURCE_BINARY", "PDF_NO_TEXT", "SOURCE_UNAVAILABLE"}
    assert headline["content_changed"] >= 1 and headline["stale_changed"] >= 1
    assert headline["flagged"] >= headline["tokens_absent"] - headline["content_changed"]
    lines = out.stderr.splitlines()
    assert any("audit 1/3" in line for line in lines) and any("CONTENT_CHANGED 0" in line for line in lines)
    report = Path(out.stderr.split("report → ")[1].split()[0])
    assert report.is_file() and "TOKENS_ABSENT" in report.read_text(encoding="utf-8")

    # the demo corpus exercises every fetch status a real audit meets, and every kind of citation and stamp
    import pandas as pd

    pages = pd.read_parquet(report.parent / "pages.parquet")
    assert set(pages["fetch_status"]) == {
        "OK", "DEAD", "BINARY", "PDF_NO_TEXT", "PDF_ERROR", "UNREADABLE", "BLOCKED", "EXCLUDED", "ROBOTS",
        "REFUSED", "TOO_LARGE", "UNAVAILABLE",
    }
    refused = pages[pages["fetch_status"] == "REFUSED"]["note"].iloc[0]
    assert "127.0.0.2" in refused  # the guard refused the one host mapped off the fixture web's address
    claims = pd.read_parquet(report.parent / "claims.parquet")
    assert set(claims["link_kind"]) == {"markdown", "backticked", "bare"}
    assert set(claims["last_verified_origin"]) == {"inline", "file", "none"}
    assert "stale-marker" in set(claims["stamp_kind"].dropna())
