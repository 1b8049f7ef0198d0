"""The monthly schedule's run request, and the corpus sensor (partition sync + runs for changed scopes)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from claims_pipeline.config.settings import DEMO_CORPUS_DIR
from claims_pipeline.definitions import defs as build_definitions
from claims_pipeline.defs.automation import corpus_sensor, monthly_audit_schedule
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline_tests.defs.conftest import config_with
from claims_pipeline_tests.support.sensor_results import apply_partition_requests
from claims_pipeline_tests.time_scale import scaled

DEMO_CORPUS = DEMO_CORPUS_DIR


def test_definitions_load_with_schedule_running_by_default():
    defs = build_definitions()
    dg.Definitions.validate_loadable(defs)
    schedule = defs.resolve_schedule_def("monthly_audit")
    assert schedule.cron_schedule == "0 6 1 * *"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert defs.resolve_sensor_def("corpus_sensor").default_status == dg.DefaultSensorStatus.RUNNING


def test_audit_assets_follow_by_an_automation_condition_sensor_running_by_default():
    """README: after per-scope runs "the audit assets follow by AutomationCondition.eager()". That needs an
    automation condition sensor that is RUNNING in a fresh `dagster dev` (Dagster's implicit
    default_automation_condition_sensor starts STOPPED)."""
    defs = build_definitions()
    repo = defs.get_repository_def()
    automation = [s for s in repo.sensor_defs if isinstance(s, dg.AutomationConditionSensorDefinition)]
    assert [s.name for s in automation] == ["audit_automation"], [(s.name, s.default_status) for s in automation]
    sensor = automation[0]
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    graph = defs.resolve_asset_graph()
    targeted = {k.to_user_string() for k in sensor.asset_selection.resolve(graph)}
    with_conditions = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).automation_condition is not None}
    assert with_conditions == {"audit_tables", "audit_report", "audit_notification"}
    assert targeted == with_conditions


def test_schedule_requests_one_run_over_every_scope_then_the_audit(instance):
    when = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    # a `with`: the instance the context opens (from the test instance's ref) is closed before the test's, so
    # Dagster's defs-state storage variable is left as it was, not on a storage whose instance is gone
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=when,
                                   resources={"claims_config": ClaimsConfig()}) as ctx:  # judge.on_schedule false
        assert isinstance(monthly_audit_schedule(ctx), dg.SkipReason)  # no partitions yet
        instance.add_dynamic_partitions("scope", ["xa", "xb", "xc", "shared/exit/regional"])
        req = monthly_audit_schedule(ctx)
    assert isinstance(req, dg.RunRequest)
    assert req.run_key == "monthly-2026-12"
    assert req.tags["dagster/asset_partition_range_start"] == "xa"
    assert req.tags["dagster/asset_partition_range_end"] == "shared/exit/regional"
    assert monthly_audit_schedule.job_name == "audit_corpus"
    defs = build_definitions()
    job_keys = {k.to_user_string() for k in defs.resolve_job_def("audit_corpus").asset_layer.selected_asset_keys}
    assert {"fetched_pages", "priors", "audit_tables", "audit_report"} <= job_keys


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    c = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, c)
    return c


def _evaluate(instance, config_path: Path, cursor: str | None) -> dg.SensorResult:
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"claims_config": ClaimsConfig(config_path=str(config_path))})
    return corpus_sensor(ctx)


def test_sensor_syncs_partitions_and_requests_runs_for_changed_scopes(instance, demo_config, corpus):
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))

    first = _evaluate(instance, config, None)  # everything is new
    assert {r.partition_key for r in first.run_requests} == {"xa", "xb", "xc", "shared/exit/regional"}
    assert sorted(first.dynamic_partitions_requests[0].partition_keys) == ["shared/exit/regional", "xa", "xb", "xc"]
    apply_partition_requests(instance, first)

    quiet = _evaluate(instance, config, first.cursor)  # nothing changed
    assert quiet.run_requests == [] and not quiet.dynamic_partitions_requests

    # edit one country, add a new country folder (no code change), remove another
    play = corpus / "countries" / "xb" / "playbook.md"
    play.write_text(play.read_text() + "\n- Late note: **2%** surcharge ([Impôts](http://impots.gouv.xb/non-residents.html)).\n")
    (corpus / "countries" / "xd").mkdir()
    (corpus / "countries" / "xd" / "playbook.md").write_text("# Xd\n\n- Duty **3%** ([Tax](http://www.tax.gov.xd/duty.html)).\n")
    shutil.rmtree(corpus / "countries" / "xc")

    later = _evaluate(instance, config, quiet.cursor)
    assert {r.partition_key for r in later.run_requests} == {"xb", "xd", None}
    audit = [r for r in later.run_requests if r.partition_key is None]  # the report drops xc without waiting
    assert audit[0].job_name == "refresh_audit"  # the audit and report without the removed scope
    assert audit[0].run_key.startswith("removed:xc:")
    adds = [r for r in later.dynamic_partitions_requests if isinstance(r, dg.AddDynamicPartitionsRequest)]
    deletes = [r for r in later.dynamic_partitions_requests if isinstance(r, dg.DeleteDynamicPartitionsRequest)]
    assert list(adds[0].partition_keys) == ["xd"] and list(deletes[0].partition_keys) == ["xc"]
    assert all(r.run_key.startswith(f"{r.partition_key}:") for r in later.run_requests if r.partition_key)
    assert set(json.loads(later.cursor)["scopes"]) == {"xa", "xb", "xd", "shared/exit/regional"}


def test_an_edit_reverted_is_requested_again_with_a_new_run_key(instance, demo_config, corpus):
    """xa edited A→B then back to A: each change is a run, and no two share a run key (Dagster skips a run
    whose key it has already seen, which left the stored claims on the reverted edit)."""
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))
    first = _evaluate(instance, config, None)
    apply_partition_requests(instance, first)
    play = corpus / "countries" / "xa" / "playbook.md"
    original = play.read_text()
    keys = [r.run_key for r in first.run_requests if r.partition_key == "xa"]
    cursor = first.cursor
    for text in (original.replace("4.5", "4.6"), original, original.replace("4.5", "4.6")):
        assert text != original or keys  # the corpus really moves
        play.write_text(text)
        result = _evaluate(instance, config, cursor)
        assert [r.partition_key for r in result.run_requests] == ["xa"]
        keys.append(result.run_requests[0].run_key)
        cursor = result.cursor
    assert len(keys) == 4 and len(set(keys)) == 4, keys


def test_sensor_requests_nothing_for_scopes_already_materialized_with_the_same_files(instance, demo_config, corpus):
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.steps.corpus import DOCUMENTS, CorpusDocuments, current_scope_hashes, stored_scope_hashes

    config = config_with(demo_config, extraction__corpus_dir=str(corpus))
    settings = load_settings(config)
    home = settings.home_dir
    hashes = current_scope_hashes(corpus_source(settings))
    DOCUMENTS.write(home, "xa", CorpusDocuments(str(corpus), {}, hashes["xa"]))  # a run of xa, then one of xb
    DOCUMENTS.write(home, "xb", CorpusDocuments(str(corpus), {}, hashes["xb"]))
    assert stored_scope_hashes(home, ["xa", "xb", "xc"]) == {"xa": hashes["xa"], "xb": hashes["xb"]}  # xc: never

    first = _evaluate(instance, config, None)  # a fresh sensor cursor, e.g. the UI started after a CLI audit
    assert {r.partition_key for r in first.run_requests} == {"xc", "shared/exit/regional"}
    assert sorted(first.dynamic_partitions_requests[0].partition_keys) == ["shared/exit/regional", "xa", "xb", "xc"]


def test_the_instance_queues_runs_one_per_scope_and_one_cross_scope_audit_at_a_time(tmp_path, monkeypatch):
    """Politeness is shared across runs through the page cache's host leases, so the instance the CLI creates
    (from orchestration/dagster.yaml) lets several runs go at once, as Dagster loads it: at most one per scope and
    one of the jobs that rebuild the cross-scope audit (their run tag)."""
    from claims_pipeline.config.settings import settings_from_dict
    from claims_pipeline.defs.jobs import CROSS_SCOPE_TAGS
    from claims_pipeline.orchestration.instance import open_instance

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    instance = open_instance(settings_from_dict({"home": str(tmp_path)}).home_dir)
    try:
        coordinator = instance.run_coordinator
        assert isinstance(coordinator, dg.QueuedRunCoordinator)
        queue = coordinator.get_run_queue_config()
        assert queue.max_concurrent_runs == 4
        limits = {(lim["key"], str(lim.get("value"))): lim["limit"] for lim in queue.tag_concurrency_limits}
        [(key, _)] = CROSS_SCOPE_TAGS.items()
        assert limits[(key, "None")] == 1
        assert limits[("dagster/partition", str({"applyLimitPerUniqueValue": True}))] == 1
    finally:
        instance.dispose()


def test_make_dev_gives_the_ui_the_clis_instance(tmp_path, monkeypatch):
    """`make dev` sets DAGSTER_HOME to what ui_dagster_home prints: the CLI's instance, made from the template
    (a bare `dg dev` would use a throwaway instance with Dagster's defaults, up to 10 runs at once)."""
    import subprocess
    import sys

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    env = {k: v for k, v in __import__("os").environ.items() if k != "DAGSTER_HOME"}
    env["CLAIMS_PIPELINE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "claims_pipeline.orchestration.instance"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=scaled(60))
    assert out.returncode == 0, out.stderr
    home = Path(out.stdout.strip())
    assert home == tmp_path / "dagster"
    assert "max_concurrent_runs: 4" in (home / "dagster.yaml").read_text(encoding="utf-8")
    # make dev gives the UI that folder and the same deployment; the demo's is the demo's own instance
    make = subprocess.run(["make", "-n", "dev", "DEPLOYMENT=demo"], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=scaled(60))
    said = " ".join(make.stdout.split())
    assert ('home="$(CLAIMS_PIPELINE_DEPLOYMENT=demo .venv/bin/python -m claims_pipeline.orchestration.instance)" && '
            'CLAIMS_PIPELINE_DEPLOYMENT=demo DAGSTER_HOME="$home" .venv/bin/dg dev') in said, make.stdout + make.stderr
    demo = subprocess.run([sys.executable, "-m", "claims_pipeline.orchestration.instance"], cwd=tmp_path,
                          env={**env, "CLAIMS_PIPELINE_DEPLOYMENT": "demo"}, capture_output=True, text=True, timeout=scaled(60))
    assert (demo.returncode, demo.stdout.strip()) == (0, str(tmp_path / "demo" / "dagster")), demo.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("fetch:\n  concurency: 3\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "claims_pipeline.orchestration.instance"], env={**env, "CLAIMS_PIPELINE_CONFIG": str(bad)},
                         cwd=tmp_path, capture_output=True, text=True, timeout=scaled(60))
    assert out.returncode == 2 and out.stdout == "" and "concurency" in out.stderr and "Traceback" not in out.stderr


def test_the_sensor_names_its_settings_on_the_first_tick_and_when_they_change(instance, demo_config, corpus, capfd):
    """A tick's log names the settings it ran on only when they differ from the last tick's (its cursor keeps
    the line): the daemon does not print the same line every minute, and a new file or home shows at once."""
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))

    def said(cursor: str | None, path: Path) -> tuple[dg.SensorResult, list[str]]:
        capfd.readouterr()
        result = _evaluate(instance, path, cursor)  # a tick's context.log writes to the console (stderr)
        return result, [line for line in capfd.readouterr().err.splitlines() if "settings: config " in line]

    first, lines = said(None, config)
    assert len(lines) == 1 and f"settings: config {config}" in lines[0], lines
    apply_partition_requests(instance, first)
    again, lines = said(first.cursor, config)
    assert lines == []
    moved = config_with(demo_config, extraction__corpus_dir=str(corpus), home=str(corpus.parent / "other-home"))
    _, lines = said(again.cursor, moved)
    assert len(lines) == 1 and str(corpus.parent / "other-home") in lines[0], lines
