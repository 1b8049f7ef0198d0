"""`claims-pipeline demo` end to end: every prior appears, and the changed page gives CONTENT_CHANGED and
stale_changed on the third audit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from claims_pipeline_tests.time_scale import scaled

BIN = Path(sys.executable).parent


@pytest.mark.slow
def test_demo_shows_every_prior_and_a_confirmed_change(tmp_path: Path):
    """... and reads its settings once: its three audits and its verdicts run on the one read of its config."""
    from claims_pipeline_tests.settings_reads import counting_env, reads

    env, log = counting_env(tmp_path / "probe", {**os.environ, "CLAIMS_PIPELINE_HOME": str(tmp_path),
                                                  "DAGSTER_HOME": str(tmp_path / "dagster")})
    (tmp_path / "dagster").mkdir()
    out = subprocess.run([str(BIN / "claims-pipeline"), "demo", "--json"], env=env, capture_output=True, text=True, timeout=scaled(180), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert reads(log) == (1, True)
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

    # every file and folder the demo (audits and verdicts) leaves in its home is one the home's layout names,
    # or inside one, beside the demo's own config file (home.py owns the layout)
    from claims_pipeline.config.home import HomeLayout

    home = tmp_path / "demo"
    named = {getattr(HomeLayout(home), n) for n, v in vars(HomeLayout).items() if isinstance(v, property)}

    def covered(p: Path) -> bool:  # a named path, inside or above one, or its SQLite -wal/-shm companion
        return any(p == n or n in p.parents or p in n.parents or (p.parent == n.parent and p.name.startswith(f"{n.name}-"))
                   for n in named)

    assert {p for p in home.rglob("*") if not covered(p)} == {home / "demo.yaml"}
    assert (HomeLayout(home).judge_cache.is_file() and HomeLayout(home).cache_index.is_file()
            and HomeLayout(home).fixture_epoch_file.is_file())


@pytest.mark.slow
def test_an_audit_in_the_demo_deployment_after_the_demo_reaches_a_fixture_web_of_its_own(tmp_path: Path):
    """README: after the demo, runs from the UI or `CLAIMS_PIPELINE_DEPLOYMENT=demo claims-pipeline audit` use the
    config the demo wrote (<home>/demo/demo.yaml). That file's routes name the demo's fixture web, whose port is
    closed once the demo ends; the new run starts its own fixture web and must reach it, not the dead port."""
    import pandas as pd

    from claims_pipeline.commands.demo import write_runtime_config
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    (tmp_path / "demo").mkdir()
    with FixtureWeb() as demo_web:  # the demo's fixture web: gone when the demo ends
        config = write_runtime_config(tmp_path / "demo", f"127.0.0.1:{demo_web.port}")
        dead = f"127.0.0.1:{demo_web.port}"
    env = {**os.environ, "CLAIMS_PIPELINE_HOME": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster"),
           "CLAIMS_PIPELINE_DEPLOYMENT": "demo"}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    out = subprocess.run([str(BIN / "claims-pipeline"), "audit", "--json"], env=env,
                         capture_output=True, text=True, timeout=scaled(180), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stderr.splitlines()[0].startswith(f"claims-pipeline: config {config} (the demo's: ")
    report = Path(out.stderr.split("audit done → ")[1].split()[0])
    pages = pd.read_parquet(report.parent / "pages.parquet")
    notes = [n for n in pages["note"].dropna() if dead in n]
    assert notes == [], f"{config}: pages fetched from the demo's closed fixture web {dead}: {notes[:3]}"
    assert "OK" in set(pages["fetch_status"]), pages[["url", "fetch_status", "note"]].to_string()
    assert json.loads(out.stdout)["by_prior"].get("TOKENS_PRESENT", 0) >= 1


def test_demo_help_says_it_ignores_config(capsys):
    import pytest

    from claims_pipeline.cli import main

    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--config FILE ignored by demo" in help_text, help_text


def test_a_demo_whose_audits_write_no_report_does_not_show_an_earlier_one(tmp_path: Path, monkeypatch, capsys):
    """An earlier demo's report stays under reports/; a demo whose own audits fail must not print it as its own."""
    import claims_pipeline.steps.audit.publish as publish
    from claims_pipeline.cli import main

    monkeypatch.setenv("CLAIMS_PIPELINE_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    earlier = tmp_path / "demo" / "reports" / "20260101T000000"
    earlier.mkdir(parents=True)
    (earlier / "report.md").write_text("an earlier demo's report")
    (earlier / "report.json").write_text(json.dumps({"headline": {"flagged": 99}}))
    (tmp_path / "demo" / "reports" / "LATEST").write_text(str(earlier) + "\n")

    def no_folder(*args, **kwargs):
        raise OSError("reports folder not writable")

    monkeypatch.setattr(publish, "report_dir_for", no_folder)
    assert main(["demo"]) == 1
    out = capsys.readouterr()
    assert "no report written by audit 1" in out.err and "flagged 99" not in out.err
    assert "report → " not in out.err and out.out.strip() == ""


def test_the_ui_command_of_an_installed_package_is_dg_dev_on_the_module(tmp_path: Path, monkeypatch):
    """Without a checkout's pyproject (an installed wheel) the demo still prints `dg dev` (its dependency), on the
    module: `dagster dev` would open with Dagster's SupersessionWarning ("Use 'dg dev' instead")."""
    import shlex

    import claims_pipeline.config.settings as settings
    from claims_pipeline.commands.demo import ui_command

    checkout = ui_command(tmp_path / "demo.yaml", str(tmp_path / "dagster"))
    assert shlex.split(checkout.split(" && ")[1])[-2:] == [str(BIN / "dg"), "dev"]
    monkeypatch.setattr(settings, "PACKAGE_DIR", tmp_path / "site-packages" / "claims_pipeline")
    words = shlex.split(ui_command(tmp_path / "demo.yaml", str(tmp_path / "dagster")))
    assert words[:3] == [f"CLAIMS_PIPELINE_CONFIG={tmp_path / 'demo.yaml'}", f"DAGSTER_HOME={tmp_path / 'dagster'}",
                         "CLAIMS_PIPELINE_DEPLOYMENT=demo"]
    assert words[3:] == [str(BIN / "dg"), "dev", "-m", "claims_pipeline.definitions"]
    assert (BIN / "dg").is_file()
