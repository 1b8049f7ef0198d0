"""The run queue's tag limits of the default instance (orchestration/dagster.yaml, SQLite), enforced by a real
`dagster-daemon run`: runs launched with `dagster job launch` against a code server, as a user launches them,
each run in its own process (the default run launcher), each fetch held a few seconds by a slow fixture-web page
so that runs let through together overlap measurably.

  - two runs of one scope (dagster/partition, 1 per value): the second waits QUEUED while the first runs;
  - runs of two scopes: they run at once;
  - two cross-scope audit runs (claims_pipeline/cross_scope_audit, 1), here of two other scopes: one at a time.

Start and end times come from the instance's run records. Every limit is checked both ways: a limit the queue
did not apply shows as two overlapping runs (a copy of the template with a limit of 2 fails this test).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import dagster as dg

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.corpus.scopes import list_scopes
from claims_pipeline.defs.jobs import CROSS_SCOPE_TAGS
from claims_pipeline.fixture_web.server import FixtureWeb
from claims_pipeline.orchestration.instance import INSTANCE_ENV, INSTANCE_TEMPLATES, open_instance
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline.settings import ENV_CONFIG, load_settings
from claims_pipeline_tests.defs.conftest import config_with
from claims_pipeline_tests.orchestration.deployment import (
    SENSORS,
    WAIT_S,
    cli,
    failures,
    finish,
    start_code_server,
    start_daemon,
    stop,
)

# Each scope cites one page on a host of its own (runs that share a host take turns on its lease, which would
# serialize them for another reason than the queue); the page answers after SLOW_S seconds.
HOSTS = {"xa": "slow.gov.xa", "xb": "slow.gov.xb", "xc": "slow.gov.xc", "xd": "slow-d.gov.xa"}
SLOW_S = 3
S = dg.DagsterRunStatus
# What is launched, before the daemon starts so that its first dequeue sees them all: (job, scope), highest
# dagster/priority first. The daemon launches the runs it dequeues one after another, each launch waiting for the
# run's process to load the code (seconds on 2 busy cores): the priorities make it launch the first of each pair
# before the second, so that the runs the limits let through together start close enough to overlap.
LAUNCHES = [("refresh_scopes", "xa"), ("refresh_scopes", "xb"), ("audit_scope", "xc"), ("refresh_scopes", "xa"),
            ("audit_scope", "xd")]


def _write_corpus(root: Path) -> None:
    for scope, host in HOSTS.items():
        folder = root / "countries" / scope
        folder.mkdir(parents=True)
        (folder / "playbook.md").write_text(
            f"# {scope} (fictional) — Playbook\n\nISO2: `{scope}`.\nStatus: ✅ Fully populated.\n\n"
            "## Section: `--costs`\n\n"
            f"- **Transfer duty**: **4.5%** of the declared price ([Revenue Service — duty]"
            f"(http://{host}/_/slow?delay={SLOW_S})) (2026-03-02 verified, source {host})\n",
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


def _in_order(first: dg.RunRecord, second: dg.RunRecord, snapshots: list[dict[str, S]]) -> bool:
    """Seen at least once: `first` running while `second` still waited in the queue."""
    a, b = first.dagster_run.run_id, second.dagster_run.run_id
    return any(s.get(a) == S.STARTED and s.get(b) == S.QUEUED for s in snapshots)


def _timeline(runs: list[dg.RunRecord], t0: float) -> str:
    """One line per run: job, scope, start and end in seconds from t0 (the assertion messages)."""
    return "\n".join(f"{r.dagster_run.job_name} {r.dagster_run.tags['dagster/partition']}: "
                     f"{(r.start_time or t0) - t0:.1f} -> {(r.end_time or t0) - t0:.1f} s"
                     for r in sorted(runs, key=lambda r: r.start_time or 0))


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
        config_with(config, extraction__corpus_dir=str(corpus), fetch__request_timeout_s=SLOW_S + 10)
        monkeypatch.delenv(INSTANCE_ENV, raising=False)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        monkeypatch.setenv(ENV_CONFIG, str(config))
        settings = load_settings(config)
        assert sorted(list_scopes(settings)) == sorted(HOSTS)
        instance = open_instance(settings)  # as the CLI and `make dev` make it: <home>/dagster, SQLite template
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
            calls = [cli("sensor", "stop", name, *ws, env=env, cwd=tmp_path) for name in SENSORS]
            calls += [cli("job", "launch", "-j", job, "--tags",
                          json.dumps({"dagster/partition": scope, "dagster/priority": str(len(LAUNCHES) - i)}), *ws,
                          env=env, cwd=tmp_path) for i, (job, scope) in enumerate(LAUNCHES)]
            for p in calls:
                finish(p)
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
            for proc in reversed(started):  # each in its own session: it and the processes it started
                stop(proc)
            instance.dispose()

    def of(job: str, scope: str) -> list[dg.RunRecord]:
        return sorted((r for r in runs if r.dagster_run.job_name == job and r.dagster_run.tags["dagster/partition"] == scope),
                      key=lambda r: r.start_time or 0)

    timeline = _timeline(runs, t0)
    print(timeline)
    # one scope: one run at a time, the second waiting in the queue while the first ran
    first_xa, second_xa = of("refresh_scopes", "xa")
    assert not _overlap(first_xa, second_xa), timeline
    assert _in_order(first_xa, second_xa, snapshots), timeline
    # two scopes: at once
    (xb,) = of("refresh_scopes", "xb")
    assert _overlap(first_xa, xb), timeline
    # two cross-scope audits, of two scopes (so only their tag holds them apart): one at a time
    audits = sorted([*of("audit_scope", "xc"), *of("audit_scope", "xd")], key=lambda r: r.start_time or 0)
    assert all(r.dagster_run.tags.items() >= CROSS_SCOPE_TAGS.items() for r in audits), [r.dagster_run.tags for r in audits]
    assert not _overlap(*audits), timeline
    assert _in_order(*audits, snapshots), timeline
    # ... while another run went beside the first: the tag held the second back, not the run count
    assert any(_overlap(audits[0], r) for r in (first_xa, xb)), timeline
