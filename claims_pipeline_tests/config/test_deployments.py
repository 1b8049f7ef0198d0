"""Deployments chosen on purpose ($CLAIMS_PIPELINE_DEPLOYMENT), never guessed from the corpus, in real
subprocesses: production on the bundled demo corpus starts no fixture web, imports no demo part and tells its
channel; production lacking what it needs stops before writing, one line per setting; loading the code location
reads no settings (whatever they lack) and imports no demo part; a command without a corpus says how to set one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from claims_pipeline.config.settings import DEMO_CONFIG_FILE, DEMO_CORPUS_DIR
from claims_pipeline_tests.notify.receivers import Webhook
from claims_pipeline_tests.production_config import write_production_config
from claims_pipeline_tests.settings_reads import counting_env, reads
from claims_pipeline_tests.store.postgres_server import postgres_server
from claims_pipeline_tests.time_scale import scaled

BIN = Path(sys.executable).parent


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAIMS_PIPELINE_", "DAGSTER_"))}
    return {**env, "HOME": str(tmp_path / "user"), "CLAIMS_PIPELINE_HOME": str(tmp_path / "home"), **extra}


@pytest.fixture(scope="module")
def new_database() -> Iterator[Callable[[], str]]:
    with postgres_server() as new_database:
        yield new_database


@pytest.mark.postgres
@pytest.mark.timeout(300)
def test_production_on_the_demo_corpus_reads_once_starts_no_fixture_web_and_refuses_a_loopback_channel(
        tmp_path: Path, new_database):
    """The demo corpus in a production config (a home, the page cache on PostgreSQL, a webhook channel, no route
    to loopback): one audit reads the settings once; the demo's fictional hosts reach nothing, as no fixture web
    is started and nothing sends them to loopback, so no cited page reads (exit 1, said in one line); the
    channel, on loopback, is refused as the fetches are (issue 35: production never sends to loopback), and the
    audit says so."""
    with Webhook() as hook:
        config = write_production_config(tmp_path, db_url=new_database(),
                                         notify_url=f"json://127.0.0.1:{hook.port}/kb-audit")
        env, log = counting_env(tmp_path / "probe", _clean_env(tmp_path, CLAIMS_PIPELINE_DEPLOYMENT="production"))
        out = subprocess.run([str(BIN / "claims-pipeline"), "audit", "--config", str(config), "--scope", "xa"],
                             env=env, capture_output=True, text=True, timeout=scaled(240), cwd=tmp_path)
        assert out.returncode == 1, out.stderr[-3000:]
        assert out.stderr.splitlines()[0] == f"claims-pipeline: config {config} · deployment production"
        assert "no cited page could be read" in out.stderr and "fixture web" not in out.stderr
        assert reads(log) == (1, False)
        assert hook.received == [], out.stderr[-3000:]
        assert "notification failed: channel 1 (json): failed (failure: refused address 127.0.0.1 (loopback: never " \
               "a notification's destination in this deployment)" in out.stderr, out.stderr[-3000:]
    assert not list(tmp_path.rglob("*.sqlite"))


@pytest.mark.parametrize("command", ["worklist", "audit"])
def test_production_refuses_to_start_on_what_it_lacks_one_line_each(tmp_path: Path, command: str):
    """The demo's own settings in production: the command stops before it writes anything, exit 2, one line per
    missing setting, each saying how to set it."""
    config = tmp_path / "demo.yaml"
    config.write_text(DEMO_CONFIG_FILE.read_text(encoding="utf-8").replace("corpus_dir: corpus",
                                                                          f"corpus_dir: {DEMO_CORPUS_DIR}"))
    env = {k: v for k, v in _clean_env(tmp_path, CLAIMS_PIPELINE_DEPLOYMENT="production").items()
           if k != "CLAIMS_PIPELINE_HOME"}
    out = subprocess.run([str(BIN / "claims-pipeline"), command, "--config", str(config)], env=env,
                         capture_output=True, text=True, timeout=scaled(240), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-3000:]
    assert [line.split(": ")[:3] for line in out.stderr.splitlines()[1:]] == [
        ["claims-pipeline", "production", "home"], ["claims-pipeline", "production", "cache.db_url"],
        ["claims-pipeline", "production", "notify.urls"], ["claims-pipeline", "production", "fetch.address_map"]]
    assert f"set home in {config} (or $CLAIMS_PIPELINE_HOME)" in out.stderr
    assert out.stdout == "" and not (tmp_path / "user" / ".claims_pipeline").exists()


@pytest.mark.parametrize("deployment", ["production", "local", "demo"])
def test_loading_the_code_location_reads_no_settings_and_imports_no_demo_part(tmp_path: Path, deployment: str):
    """What `dg dev` and the daemon load: the definitions with the deployment's resources. The settings are read
    when a run or a tick starts; the demo's parts are imported when a demo run starts its resources."""
    code = ("import sys, claims_pipeline.definitions as d\n"
            "defs = d.defs()\n"
            "print(sorted(type(r).__name__ for r in defs.resources.values()))\n")
    env, log = counting_env(tmp_path / "probe", _clean_env(tmp_path, CLAIMS_PIPELINE_DEPLOYMENT=deployment))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=scaled(240), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    demo = deployment == "demo"
    assert ("DemoFetcherResource" in out.stdout, "DemoJudgeResource" in out.stdout) == (demo, demo), out.stdout
    assert reads(log) == (0, False)


@pytest.mark.parametrize("command", ["extract", "audit"])
def test_a_command_without_a_corpus_says_in_one_line_how_to_set_one(tmp_path: Path, command: str):
    (tmp_path / "user").mkdir()
    out = subprocess.run([str(BIN / "claims-pipeline"), command], env=_clean_env(tmp_path), capture_output=True,
                         text=True, timeout=scaled(240), cwd=tmp_path)
    assert (out.returncode, out.stderr.splitlines()[1:]) == (2, [
        "claims-pipeline: no corpus: set extraction.corpus_dir in a config file ($CLAIMS_PIPELINE_CONFIG or "
        "./config/claims_pipeline.yaml) (`claims-pipeline init` writes one; `claims-pipeline demo` runs on the "
        "bundled demo corpus)"]), out.stderr[-3000:]
    assert out.stdout == ""


def test_make_dev_in_production_opens_the_instance_only_on_settings_production_can_run(tmp_path: Path):
    """`make dev`'s first step (the instance folder it gives the UI): on the demo's own settings production stops
    with exit 2 and one line per missing setting, making no instance; on ready settings it prints the
    deployment's instance, under the home the settings name."""
    def instance_step(config: Path) -> subprocess.CompletedProcess[str]:
        env = _clean_env(tmp_path, CLAIMS_PIPELINE_DEPLOYMENT="production", CLAIMS_PIPELINE_CONFIG=str(config))
        return subprocess.run([sys.executable, "-m", "claims_pipeline.orchestration.instance"], env=env,
                              capture_output=True, text=True, timeout=scaled(120), cwd=tmp_path)

    refused = instance_step(DEMO_CONFIG_FILE)
    assert refused.returncode == 2 and refused.stdout == "", refused.stderr[-3000:]
    assert [line.split(": ")[2] for line in refused.stderr.splitlines()] == [
        "cache.db_url", "notify.urls", "fetch.address_map"]
    assert not list(tmp_path.rglob("dagster.yaml"))
    ready = write_production_config(tmp_path / "srv", db_url="postgresql+psycopg://claims@127.0.0.1:1/claims",
                                    notify_url="json://127.0.0.1:9/kb-audit")
    opened = instance_step(ready)
    assert (opened.returncode, opened.stdout.strip()) == (0, str(tmp_path / "srv" / "home" / "dagster")), opened.stderr


@pytest.mark.parametrize("deployment", ["local", "production", "demo"])
def test_the_launchpad_shows_no_test_switch_or_internal(deployment, monkeypatch):
    """The code location's run config (what the launchpad shows and lets one edit) holds the settings file and the
    deployment, never a test's clock, an entry point's settings key, the demo's epoch or the refresh switch."""
    from claims_pipeline.definitions import defs

    monkeypatch.setenv("CLAIMS_PIPELINE_DEPLOYMENT", deployment)
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)

    def field_names(config_type, out: set[str]) -> set[str]:
        for name, field in (getattr(config_type, "fields", None) or {}).items():
            out.add(name)
            field_names(field.config_type, out)
        return out

    for job_name in ("audit_scope", "audit_corpus"):
        schema = defs().resolve_job_def(job_name).run_config_schema.config_type
        shown = field_names(schema.fields["resources"].config_type, set())
        assert {"config_path", "deployment"} <= shown
        assert not shown & {"clock", "entry_key", "fixture_epoch", "force_refresh"}, (job_name, sorted(shown))
