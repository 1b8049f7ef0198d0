"""The production instance on a real PostgreSQL server: a backfill of three scopes as separate queued runs,
dequeued by a real `dagster-daemon run` process, two or more at once, every row and history entry once.

One database serves both Dagster (schema `dagster`, the template's search_path) and the page cache (schema
`claims_cache`, the cache URL's), both reaching it through the same PG* variables, as docs/deploy-postgres.md
tells a deployment to do.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
from pathlib import Path

import dagster as dg
import pandas as pd
import psycopg
import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import make_url

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import DEMO_CORPUS_DIR, ENV_CONFIG, load_settings
from claims_pipeline.corpus.scopes import list_scopes
from claims_pipeline.orchestration.instance import INSTANCE_ENV, INSTANCE_TEMPLATES, open_instance
from claims_pipeline.orchestration.runner import (
    QUIET_RUN_CONFIG,
    definitions_with,
    resources_for,
    run_failures,
    sync_scope_partitions,
)
from claims_pipeline.store import schema as cache_schema
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.defs.conftest import config_with
from claims_pipeline_tests.orchestration.deployment import (
    SENSORS,
    cli,
    failures,
    finish,
    start_code_server,
    start_daemon,
    stop_all,
    wait_runs,
)
from claims_pipeline_tests.store.postgres_server import postgres_server
from claims_pipeline_tests.support.stored_values import stored_json

# Scopes that cite disjoint hosts (*.xa, *.xb, *.xc), so that the runs overlap all the way: runs sharing a
# host take turns on it (its lease in the cache's database), which this test does not measure. The shared
# file, which cites a host of each, is left out of this corpus for that reason.
SCOPES = ["xa", "xb", "xc"]
CACHE_URL = "postgresql+psycopg:///?options=-csearch_path%3Dclaims_cache"  # host, user, db: from PG*
SCOPE_ASSETS = ["corpus_documents", "claims", "citation_lint", "fetched_pages", "page_changes", "priors"]
T = dg.DagsterEventType


@pytest.mark.slow
@pytest.mark.postgres
def test_a_backfill_of_three_scopes_runs_as_separate_runs_two_at_once_each_row_once(tmp_path, monkeypatch):
    daemon_log = tmp_path / "daemon.log"
    with postgres_server() as new_database, FixtureWeb() as web:
        db = make_url(new_database())
        pg_env = {"PGHOST": "127.0.0.1", "PGPORT": str(db.port), "PGUSER": "postgres", "PGPASSWORD": "",
                  "PGDATABASE": str(db.database)}
        with psycopg.connect(host="127.0.0.1", port=db.port, user="postgres", dbname=db.database,
                             autocommit=True) as conn:  # the one-time set-up the doc gives
            conn.execute("CREATE SCHEMA dagster")
            conn.execute("CREATE SCHEMA claims_cache")

        home = tmp_path / "home"
        home.mkdir()
        corpus = tmp_path / "corpus"
        shutil.copytree(DEMO_CORPUS_DIR / "countries", corpus / "countries")
        config = write_runtime_config(home, f"127.0.0.1:{web.port}")
        config_with(config, extraction__corpus_dir=str(corpus), cache__db_url=CACHE_URL)
        env = {**os.environ, **pg_env, INSTANCE_ENV: "postgres", "DAGSTER_HOME": str(tmp_path / "dagster"),
               ENV_CONFIG: str(config)}
        for key in (*pg_env, INSTANCE_ENV, "DAGSTER_HOME", ENV_CONFIG):
            monkeypatch.setenv(key, env[key])

        settings = load_settings(config)
        assert sorted(list_scopes(corpus_source(settings))) == SCOPES
        instance = open_instance(settings.home_dir)
        assert (tmp_path / "dagster" / "dagster.yaml").read_bytes() == INSTANCE_TEMPLATES["postgres"].read_bytes()
        started: list[subprocess.Popen[bytes]] = []
        try:
            assert type(instance.run_storage).__name__ == "PostgresRunStorage"
            assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
            assert type(instance.schedule_storage).__name__ == "PostgresScheduleStorage"
            assert isinstance(instance.run_coordinator, dg.QueuedRunCoordinator)
            sync_scope_partitions(instance, SCOPES)

            # the whole test took 55-65 s on 2 busy cores; every wait is bounded (deployment.WAIT_S)
            server, ws = start_code_server(env, tmp_path)
            started.append(server)
            # the sensors would launch runs of their own on their first tick: stopped, as an operator would
            calls = [cli("sensor", "stop", name, *ws, env=env, cwd=tmp_path) for name in SENSORS]
            backfill = cli("job", "backfill", "-j", "refresh_scopes", "--partitions", ",".join(SCOPES), "--noprompt",
                           *ws, env=env, cwd=tmp_path)
            for p in calls:
                finish(p)
            started.append(start_daemon(ws, env, tmp_path, daemon_log))
            backfill_id = re.search(r"Launched backfill job `([^`]+)`", finish(backfill))
            assert backfill_id, "no backfill id printed"

            runs = wait_runs(instance, "refresh_scopes", len(SCOPES), daemon_log)
            assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == SCOPES  # separate runs, one each
            assert {r.dagster_run.tags["dagster/backfill"] for r in runs} == {backfill_id.group(1)}
            assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in runs), failures(instance, runs)
            # each went through the queue: enqueued by the backfill, dequeued (started) by the daemon
            lifecycle = [T.RUN_ENQUEUED, T.RUN_STARTING, T.RUN_START, T.RUN_SUCCESS]
            for r in runs:
                kinds = [e.event_log_entry.dagster_event_type for e in instance.get_records_for_run(r.dagster_run.run_id).records]
                assert [k for k in kinds if k in lifecycle] == lifecycle, kinds
            # at least two at once, from the instance's own start and end times
            spans = sorted((r.start_time, r.end_time) for r in runs)
            assert all(s is not None and e is not None for s, e in spans)
            overlapping = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1:] if b[0] < a[1] and a[0] < b[1]]
            assert overlapping, f"no two runs overlapped: {spans}"
            # each in its own process (the default run launcher), none in the daemon, the code server or this one
            pids = {r.dagster_run.run_id: _run_pid(instance, r.dagster_run.run_id) for r in runs}
            assert len(set(pids.values())) == len(SCOPES) and not {os.getpid(), *(p.pid for p in started)} & set(pids.values())

            launched = [int(n) for n in re.findall(r"QueuedRunCoordinatorDaemon - .*Launched (\d+) runs?", daemon_log.read_text())]
            assert sum(launched) == len(SCOPES), daemon_log.read_text()[-3000:]  # all three, by the daemon

            # then the cross-scope audit, once, after the backfill (here in this process, as the CLI runs it; a
            # deployment leaves it to the audit_automation sensor or launches refresh_audit)
            defs = definitions_with(resources_for(load_settings(config)))
            audit = defs.resolve_job_def("refresh_audit").execute_in_process(
                instance=instance, run_config=QUIET_RUN_CONFIG, raise_on_error=False)
            assert audit.success, run_failures([audit])

            # Dagster's event log: each scope asset materialized once per scope
            for key in SCOPE_ASSETS:
                for scope in SCOPES:
                    mats = instance.fetch_materializations(
                        dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=[scope]), limit=10).records
                    assert len(mats) == 1, (key, scope, len(mats))
        finally:
            stop_all(started)  # each in its own session: it and the processes it started
            instance.dispose()

        _every_row_once(home, web)
        _one_database_two_schemas(pg_env)


def _run_pid(instance: dg.DagsterInstance, run_id: str) -> int:
    """The process that executed the run: RUN_START is emitted by the run's own process."""
    for e in instance.get_records_for_run(run_id).records:
        ev = e.event_log_entry.dagster_event
        if ev is not None and ev.event_type == T.RUN_START and ev.pid is not None:
            return ev.pid
    raise AssertionError(f"run {run_id}: no RUN_START event with a pid")


def _every_row_once(home: Path, web: FixtureWeb) -> None:
    claims = {s: stored_json(home, "claims", s)["claims"] for s in SCOPES}
    ids = [c["id"] for s in SCOPES for c in claims[s]]
    assert all(claims.values()) and len(ids) == len(set(ids))
    pages = {s: stored_json(home, "fetched_pages", s) for s in SCOPES}
    cited = {u for s in SCOPES for u in pages[s]}
    assert sum(len(pages[s]) for s in SCOPES) == len(cited)  # disjoint hosts: no URL in two scopes

    # audit tables (one audit, after the backfill): every claim of every scope once, every cited page once
    tables = home / "audit" / "tables"
    assert sorted(pd.read_parquet(tables / "claims.parquet")["id"]) == sorted(ids)
    priors = pd.read_parquet(tables / "priors.parquet")
    assert sorted(priors["claim_id"]) == sorted(ids) and set(priors["scope"]) == set(SCOPES)
    table_urls = list(pd.read_parquet(tables / "pages.parquet")["url"])
    assert len(table_urls) == len(set(table_urls)) and set(table_urls) == cited
    assert (HomeLayout(home).latest_report_dir() / "report.json").is_file()

    # the page cache: one URL row per fetched URL, one history entry (fetch) each, one fetch run per scope run
    engine = create_engine(CACHE_URL)
    try:
        with engine.connect() as conn:
            urls = set(conn.execute(select(cache_schema.urls.c.url)).scalars())
            per_url = collections.Counter(conn.execute(select(cache_schema.fetches.c.url)).scalars())
            fetch_runs = conn.execute(select(func.count()).select_from(cache_schema.runs)).scalar_one()
    finally:
        engine.dispose()
    assert urls and urls <= cited
    assert set(per_url) == urls and set(per_url.values()) == {1}, per_url
    assert fetch_runs == len(SCOPES)
    # and the server answered each page once (a 5xx is asked again, within the one fetch of its run)
    answered = collections.Counter((r["host"], r["path"]) for r in web.requests()
                                   if r["path"] != "/robots.txt" and isinstance(r["status"], int) and r["status"] < 500)
    assert answered and max(answered.values()) == 1, answered.most_common(3)


def _one_database_two_schemas(pg_env: dict[str, str]) -> None:
    with psycopg.connect(autocommit=True) as conn:  # the PG* variables, as the deployment's processes
        rows = conn.execute("SELECT table_schema, table_name FROM information_schema.tables "
                            "WHERE table_schema IN ('public', 'dagster', 'claims_cache')").fetchall()
    by_schema: dict[str, set[str]] = collections.defaultdict(set)
    for schema_name, table in rows:
        by_schema[schema_name].add(table)
    assert {"runs", "event_logs", "jobs", "job_ticks", "asset_keys"} <= by_schema["dagster"]
    assert {"urls", "fetches", "changes", "runs", "robots"} <= by_schema["claims_cache"]
    assert not by_schema["public"]
