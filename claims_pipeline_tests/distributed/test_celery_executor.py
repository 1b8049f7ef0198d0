"""The same audit, in one process and on two Celery workers (dagster-celery, Redis broker), gives the same tables.

Everything is real: Debian's redis-server on 127.0.0.1, two Celery workers loading the code location (one started
with dagster-celery's CLI, one with celery's), runs executed by `dagster job execute` on the code location with
the deployment's own run config (deploy/celery/run_config.yaml), a SQLite Dagster instance and the claims home on
local disk shared by every process, the fixture web playing the cited sites.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import yaml

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import DEMO_CORPUS_DIR, ENV_CONFIG, load_settings
from claims_pipeline.corpus.scopes import list_scopes
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.distributed.celery_workers import BACKEND_ENV, BROKER_ENV, WORKER_YAML, celery_workers
from claims_pipeline_tests.distributed.redis_server import redis_server
from claims_pipeline_tests.time_scale import scaled

PROJECT_ROOT = Path(__file__).resolve().parents[2]
RUN_CONFIG = PROJECT_ROOT / "deploy" / "celery" / "run_config.yaml"
LAUNCH_TIMEOUT_S = scaled(150)
# columns that say when or in which run, not what was found
VOLATILE = {"run_at", "run_at_utc", "previous_run", "previous_run_utc", "fetched_at", "stable_since", "changed_at",
            "change_reported_at", "cache_identity"}


def _config(home: Path, corpus: Path, address: str) -> Path:
    home.mkdir()
    path = write_runtime_config(home, address)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["extraction"]["corpus_dir"] = str(corpus)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _launch(scopes: list[str], env: dict[str, str], run_config: Path | None = None) -> subprocess.Popen[bytes]:
    """`dagster job execute` on the code location: the run executes in this new process (its executor decides
    where the steps go). Over a scope range, as the monthly schedule's audit_corpus run."""
    tags = {"dagster/asset_partition_range_start": scopes[0], "dagster/asset_partition_range_end": scopes[-1]}
    cmd = [str(Path(sys.executable).parent / "dagster"), "job", "execute", "-m", "claims_pipeline.definitions",
           "-a", "defs", "-j", "audit_corpus", "--tags", json.dumps(tags)]
    if run_config:
        cmd += ["-c", str(run_config)]
    return subprocess.Popen(cmd, cwd=PROJECT_ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def _finish(proc: subprocess.Popen[bytes]) -> None:
    out, _ = proc.communicate(timeout=LAUNCH_TIMEOUT_S)
    assert proc.returncode == 0, out.decode(errors="replace")[-4000:]


def _tables(home: Path) -> dict[str, list[dict]]:
    out = {}
    for f in sorted((home / "audit" / "tables").glob("*.parquet")):
        t = pd.read_parquet(f)
        t = t.drop(columns=[c for c in t.columns if c in VOLATILE])
        out[f.stem] = sorted(json.loads(t.to_json(orient="records")), key=json.dumps)
    return out


def _report_rows(home: Path) -> dict:
    latest = HomeLayout(home).latest_report_dir()
    doc = json.loads((latest / "report.json").read_text(encoding="utf-8"))
    return {k: v for k, v in doc.items() if k not in VOLATILE}


@pytest.fixture
def dagster_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.mark.redis
def test_celery_run_gives_the_in_process_tables_with_steps_in_the_workers(tmp_path, dagster_home):
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS_DIR, corpus)
    shutil.rmtree(corpus / "countries" / "xc")  # three scopes: xa, xb, shared/exit/regional

    with FixtureWeb() as web, redis_server() as redis_url:
        address = f"127.0.0.1:{web.port}"
        config_local = _config(tmp_path / "home_local", corpus, address)
        config_celery = _config(tmp_path / "home_celery", corpus, address)
        scopes = list(list_scopes(corpus_source(load_settings(config_celery))))
        assert len(scopes) == 3
        with dg.DagsterInstance.get() as instance:
            sync_scope_partitions(instance, scopes)

        # the broker URLs reach the run and the workers as the deployment files say: environment variables
        broker = {BROKER_ENV: f"{redis_url}/0", BACKEND_ENV: f"{redis_url}/1"}
        env_celery = {ENV_CONFIG: str(config_celery), "DAGSTER_HOME": str(dagster_home), **broker}

        with celery_workers({"w1": "dagster-celery", "w2": "celery"}, env_celery, PROJECT_ROOT, tmp_path) as workers:
            # the in-process run (the default executor) goes on while the workers start
            local = _launch(scopes, {ENV_CONFIG: str(config_local), "DAGSTER_HOME": str(dagster_home)})
            nodes = workers.wait_ready()
            _finish(local)
            assert [n.split("@")[0] for n in nodes] == ["w1", "w2"]

            run = _launch(scopes, env_celery, RUN_CONFIG)
            run_pid = run.pid
            _finish(run)
            worker_pids = workers.pids()

        with dg.DagsterInstance.get() as instance:
            runs = {r.run_id: r for r in instance.get_runs()}
            assert len(runs) == 2 and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs.values())
            by_executor = {("celery" in json.dumps(r.run_config.get("execution", {}))): rid for rid, r in runs.items()}
            # the stored run config names the broker's variable, not its URL (which may hold a password)
            assert redis_url not in json.dumps(runs[by_executor[True]].run_config)
            logs = instance.all_logs(by_executor[True])
            local_logs = instance.all_logs(by_executor[False])

    # the celery run: orchestrated in the `dagster job execute` process, every step executed in a worker process
    starts = {e.step_key: e.dagster_event.pid for e in logs
              if e.dagster_event and e.dagster_event.event_type == dg.DagsterEventType.STEP_START}
    run_start = [e.dagster_event.pid for e in logs
                 if e.dagster_event and e.dagster_event.event_type == dg.DagsterEventType.RUN_START]
    assert run_start == [run_pid]
    assert len(starts) >= 8, starts  # the per-scope assets, the audit tables, the report
    assert set(starts.values()) <= set(worker_pids), (starts, worker_pids)
    assert {worker_pids[p] for p in starts.values()} == {"w1", "w2"}  # both workers took steps
    handed = [e for e in logs if e.dagster_event and "in celery worker" in (e.dagster_event.message or "")]
    assert {e.step_key for e in handed} == set(starts)
    # the in-process run: every step in its own run process
    assert len({e.dagster_event.pid for e in local_logs if e.dagster_event and e.dagster_event.pid}) == 1

    # same findings, row for row
    local_tables, celery_tables = _tables(tmp_path / "home_local"), _tables(tmp_path / "home_celery")
    assert set(local_tables) >= {"priors"} and local_tables == celery_tables
    assert len(celery_tables["priors"]) > 10
    assert _report_rows(tmp_path / "home_local") == _report_rows(tmp_path / "home_celery")


def test_in_process_stays_the_default_and_celery_is_chosen_by_run_config(monkeypatch):
    from dagster_celery.cli import get_validated_config

    from claims_pipeline.definitions import defs
    from claims_pipeline.defs.executor import in_process_or_celery

    job = defs().resolve_job_def("audit_corpus")
    assert job.executor_def is in_process_or_celery
    assert list(dg.validate_run_config(job, {})["execution"]["in_process_or_celery"]) == ["in_process"]
    monkeypatch.setenv(BROKER_ENV, "redis://127.0.0.1:1/0")
    monkeypatch.setenv(BACKEND_ENV, "redis://127.0.0.1:1/1")
    run_config = yaml.safe_load(RUN_CONFIG.read_text(encoding="utf-8"))
    chosen = dg.validate_run_config(job, run_config)["execution"]["in_process_or_celery"]
    assert chosen["celery"]["broker"] == "redis://127.0.0.1:1/0" and chosen["celery"]["backend"] == "redis://127.0.0.1:1/1"
    # the workers' file (dagster-celery's CLI reads it) resolves to the same broker and backend
    worker = get_validated_config(str(WORKER_YAML))
    assert (worker["broker"], worker["backend"]) == (chosen["celery"]["broker"], chosen["celery"]["backend"])
    with pytest.raises(dg.DagsterInvalidConfigError):  # one executor at a time; unknown names refused
        dg.validate_run_config(job, {"execution": {"config": {"multiprocess": {}}}})
