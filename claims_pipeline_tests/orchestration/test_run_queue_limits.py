"""The run queue's tag limits of the default instance (orchestration/dagster.yaml, SQLite), enforced by a real
`dagster-daemon run`: runs launched as a user launches them, from the UI (its GraphQL API, dagster-webserver) and
with `dagster job launch`, against one code server; each run in its own process (the default run launcher), its
fetch held a few seconds by a slow fixture-web page so that runs let through together overlap measurably.

  - two runs of one scope (dagster/partition, 1 per value): the second stays QUEUED while the first runs;
  - runs of two scopes: they run at once;
  - two cross-scope audit runs (claims_pipeline/cross_scope_audit, 1), of two scopes: one at a time.

Start and end times come from the instance's run records. A limit the queue did not apply shows as two
overlapping runs: with a copy of the template whose limits are 2, this test fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster_graphql import DagsterGraphQLClient

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import ENV_CONFIG, load_settings
from claims_pipeline.corpus.scopes import list_scopes
from claims_pipeline.defs.jobs import CROSS_SCOPE_TAGS
from claims_pipeline.orchestration.instance import INSTANCE_ENV, INSTANCE_TEMPLATES, open_instance
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.defs.conftest import config_with
from claims_pipeline_tests.orchestration.deployment import (
    WAIT_S,
    cli,
    failures,
    finish,
    start_code_server,
    start_daemon,
    start_webserver,
    stop_all,
    stop_sensors,
)

# Each scope cites one page on a host of its own (runs that share a host take turns on its lease, which would
# serialize them for another reason than the queue), answered after DELAY_S seconds.
HOSTS = {"xa": "slow.gov.xa", "xb": "slow.gov.xb", "xc": "slow.gov.xc"}
DELAY_S = {"xa": 5, "xb": 3, "xc": 0}  # xc's run is only ever the second of a pair: its length matters to no assertion
S = dg.DagsterRunStatus
# What is launched, before the daemon starts so that its first dequeue sees them all: (job, scope), highest
# dagster/priority first. The daemon launches the runs it dequeues one after another, each launch waiting for the
# run's process to load the code (seconds on 2 busy cores); in this order, a run a limit failed to hold back is
# launched right after the one it would overlap. audit_scope carries the cross-scope tag; refresh_scopes does not,
# so the first two (two scopes) may go at once. The last is launched with the CLI, the others through the UI's
# GraphQL API: a run launched either way must carry the job's cross-scope tag.
LAUNCHES = [("refresh_scopes", "xa"), ("refresh_scopes", "xa"), ("audit_scope", "xb"), ("audit_scope", "xc")]


def _tags(i: int, scope: str) -> dict[str, str]:
    return {"dagster/partition": scope, "dagster/priority": str(len(LAUNCHES) - i)}


def _write_corpus(root: Path) -> None:
    for scope, host in HOSTS.items():
        folder = root / "countries" / scope
        folder.mkdir(parents=True)
        (folder / "playbook.md").write_text(
            f"# {scope} (fictional) — Playbook\n\nISO2: `{scope}`.\nStatus: ✅ Fully populated.\n\n"
            "## Section: `--costs`\n\n"
            f"- **Transfer duty**: **4.5%** of the declared price ([Revenue Service — duty]"
            f"(http://{host}/_/slow?delay={DELAY_S[scope]})) (2026-03-02 verified, source {host})\n",
            encoding="utf-8")


def _overlap(a: dg.RunRecord, b: dg.RunRecord) -> bool:
    """Each started before the other ended (the instance's own start and end times)."""
    assert a.start_time is not None and a.end_time is not None and b.start_time is not None and b.end_time is not None
    return a.start_time < b.end_time and b.start_time < a.end_time


def _watch(instance: dg.DagsterInstance, run_ids: list[str], log: Path) -> list[dict[str, S]]:
    """Every run's status, polled until all have finished: the snapshots in order."""
    snapshots: list[dict[str, S]] = []
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        records = instance.get_run_records(dg.RunsFilter(run_ids=run_ids))
        snapshots.append({r.dagster_run.run_id: r.dagster_run.status for r in records})
        if len(records) == len(run_ids) and all(r.dagster_run.is_finished for r in records):
            return snapshots
        time.sleep(0.25)
    raise AssertionError(f"the runs did not finish in {WAIT_S} s; daemon log:\n{log.read_text()[-4000:]}")


def _waited(first: dg.RunRecord, second: dg.RunRecord, snapshots: list[dict[str, S]]) -> bool:
    """`second` was QUEUED whenever `first` was seen running (and `first` was seen running)."""
    a, b = first.dagster_run.run_id, second.dagster_run.run_id
    running = [s for s in snapshots if s.get(a) == S.STARTED]
    return bool(running) and all(s.get(b) == S.QUEUED for s in running)


def _timeline(runs: list[dg.RunRecord], t0: float) -> str:
    """One line per run: job, scope, start and end in seconds from t0 (the assertion messages)."""
    return "\n".join(f"{r.dagster_run.job_name} {r.dagster_run.tags['dagster/partition']}: "
                     f"{(r.start_time or t0) - t0:.1f} -> {(r.end_time or t0) - t0:.1f} s"
                     for r in sorted(runs, key=lambda r: r.start_time or 0))


@pytest.mark.slow
def test_the_default_instances_queue_keeps_one_run_per_scope_and_one_cross_scope_audit_at_a_time(tmp_path, monkeypatch):
    t0 = time.time()
    home = tmp_path / "home"
    home.mkdir()
    corpus = tmp_path / "corpus"
    _write_corpus(corpus)
    daemon_log = tmp_path / "daemon.log"
    with FixtureWeb() as web:
        config = write_runtime_config(home, f"127.0.0.1:{web.port}")
        # the slow page must not time out; host_lease_s stays on (the default instance's politeness across runs)
        config_with(config, extraction__corpus_dir=str(corpus), fetch__request_timeout_s=max(DELAY_S.values()) + 10)
        monkeypatch.delenv(INSTANCE_ENV, raising=False)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        monkeypatch.setenv(ENV_CONFIG, str(config))
        settings = load_settings(config)
        assert sorted(list_scopes(corpus_source(settings))) == sorted(HOSTS)
        instance = open_instance(settings.home_dir)  # as the CLI and `make dev` make it: <home>/dagster, SQLite template
        dagster_home = home / "dagster"
        assert (dagster_home / "dagster.yaml").read_bytes() == INSTANCE_TEMPLATES["sqlite"].read_bytes()
        env = {**os.environ, "DAGSTER_HOME": str(dagster_home)}
        started: list[subprocess.Popen[bytes]] = []
        try:
            assert isinstance(instance.run_coordinator, dg.QueuedRunCoordinator)
            sync_scope_partitions(instance, sorted(HOSTS))
            server, ws = start_code_server(env, tmp_path)
            started.append(server)
            print(f"code server up: {time.time() - t0:.1f} s")
            *by_ui, (cli_job, cli_scope) = LAUNCHES
            by_cli = cli("job", "launch", "-j", cli_job, "--tags", json.dumps(_tags(len(by_ui), cli_scope)), *ws,
                         env=env, cwd=tmp_path)
            try:
                webserver, port = start_webserver(ws, env, tmp_path)
            finally:
                finish(by_cli)
            started.append(webserver)
            print(f"webserver up: {time.time() - t0:.1f} s")
            stop_sensors(port)  # they would launch runs of their own on the daemon's first tick
            client = DagsterGraphQLClient("127.0.0.1", port_number=port)
            for i, (job, scope) in enumerate(by_ui):
                client.submit_job_execution(job, repository_location_name="claims_pipeline",
                                            repository_name="__repository__", tags=_tags(i, scope))
            print(f"launched: {time.time() - t0:.1f} s")
            queued = instance.get_run_records(dg.RunsFilter(statuses=[S.QUEUED]))
            assert len(queued) == len(LAUNCHES)  # all waiting in the queue: none started without the daemon
            run_ids = [r.dagster_run.run_id for r in queued]
            started.append(start_daemon(ws, env, tmp_path, daemon_log))
            snapshots = _watch(instance, run_ids, daemon_log)
            print(f"finished: {time.time() - t0:.1f} s")
            runs = list(instance.get_run_records(dg.RunsFilter(run_ids=run_ids)))
            assert all(r.dagster_run.status == S.SUCCESS for r in runs), failures(instance, runs)
        finally:
            stop_all(started)  # each in its own session: it and the processes it started (the runs')
            instance.dispose()

    def of(job: str, scope: str) -> list[dg.RunRecord]:
        return sorted((r for r in runs if r.dagster_run.job_name == job and r.dagster_run.tags["dagster/partition"] == scope),
                      key=lambda r: r.start_time or 0)

    timeline = _timeline(runs, t0)
    print(timeline)
    # one scope: one run at a time, the second waiting in the queue while the first ran
    first_xa, second_xa = of("refresh_scopes", "xa")
    assert not _overlap(first_xa, second_xa), timeline
    assert _waited(first_xa, second_xa, snapshots), timeline
    # two cross-scope audits, of two scopes (so the scope's limit does not hold them apart): one at a time
    audits = [*of("audit_scope", "xb"), *of("audit_scope", "xc")]
    assert all(r.dagster_run.tags.items() >= CROSS_SCOPE_TAGS.items() for r in audits), [r.dagster_run.tags for r in audits]
    assert not _overlap(*audits), timeline
    assert _waited(*audits, snapshots), timeline
    # two scopes, as far as their tags go: at once (refresh_scopes xa beside audit_scope xb)
    assert _overlap(first_xa, audits[0]), timeline
