"""Each scope's state on the per-scope assets (defs/scope_state.py), and the tags that tell runs apart, on real runs
of the CLI's runner against the fixture web and a real instance."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime

import dagster as dg
import pytest

from claims_pipeline.config.settings import load_settings
from claims_pipeline.defs import jobs
from claims_pipeline.defs.automation import audit_automation_sensor, monthly_audit_schedule
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.defs.scoped import scoped_output
from claims_pipeline.orchestration.runner import resources_for, run_audit, run_failures

SCOPES = ["xa", "xb", "xc", "shared/exit/regional"]
SCOPE_CHECKS = {("page_changes", "stale_changed_by_scope"), ("priors", "tokens_absent_by_scope"),
                ("fetched_pages", "newly_unreadable_by_scope")}


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {c.check_name: c for c in result.get_asset_check_evaluations()
            if (c.asset_key.to_user_string(), c.check_name) in SCOPE_CHECKS}


@pytest.mark.slow
def test_the_per_scope_assets_name_the_scopes_in_trouble_and_the_runs_say_who_ran_them(instance, demo_config, web):
    resources = resources_for(load_settings(demo_config))
    first = run_audit(instance, resources, SCOPES, ["xa"], trigger="demo", name="demo audit 1/3")
    assert [r.success for r in first] == [True]
    checks = _checks(first[-1])
    assert set(checks) == {name for _, name in SCOPE_CHECKS}
    # xa's licence claim states €900, nowhere on its page: the priors node fails (ERROR, so the group shows it)
    absent = checks["tokens_absent_by_scope"]
    assert not absent.passed and absent.severity == dg.AssetCheckSeverity.ERROR
    assert absent.description == "xa: 1 TOKENS_ABSENT"
    assert absent.metadata["failing_partitions"].value == ["xa"]
    # the partitions view lists xa green (materialized): its own materialization says which check it fails
    xa = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey("priors"), asset_partitions=["xa"]),
                                         limit=1).records[0].asset_materialization
    assert xa.metadata["state"].value == "in trouble: 1 TOKENS_ABSENT (check tokens_absent_by_scope fails)"
    assert list(xa.metadata)[:2] == ["scope", "state"]
    assert checks["stale_changed_by_scope"].passed
    assert checks["stale_changed_by_scope"].description == "no scope has stale_changed (1 scope checked)"
    # first fetch of xa: its zip, robots-refused and other unreadable sources are news
    new = checks["newly_unreadable_by_scope"]
    assert not new.passed and new.description.startswith("xa: ") and new.description.endswith(" sources newly unreadable")
    assert run_failures(first) == []  # findings, not failures: the command still exits 0

    run = instance.get_run_by_id(first[-1].run_id)
    assert run.tags[jobs.TRIGGER_TAG] == "demo"
    assert run.tags[jobs.RUN_NAME_TAG] == "demo audit 1/3: xa"
    assert run.tags[jobs.SCOPE_TAG] == "xa"

    # the same pages again: nothing became unreadable; xb's run checks both scopes
    again = run_audit(instance, resources, SCOPES, ["xa"])
    assert _checks(again[-1])["newly_unreadable_by_scope"].passed
    xb = run_audit(instance, resources, SCOPES, ["xb"])
    checks = _checks(xb[-1])
    assert checks["stale_changed_by_scope"].description == "no scope has stale_changed (2 scopes checked)"
    assert checks["tokens_absent_by_scope"].description.startswith("xa: 1 TOKENS_ABSENT")
    tags = instance.get_run_by_id(xb[-1].run_id).tags
    assert (tags[jobs.TRIGGER_TAG], tags[jobs.RUN_NAME_TAG]) == ("cli", "cli audit: xb")

    whole = run_audit(instance, resources, SCOPES)
    tags = instance.get_run_by_id(whole[-1].run_id).tags
    assert (tags[jobs.TRIGGER_TAG], tags[jobs.RUN_NAME_TAG], tags[jobs.SCOPE_TAG]) == ("cli", "cli audit: all scopes", "all")
    # a run over the partition range: each scope's materialization carries its own counts, read by the checks
    assert _checks(whole[-1])["stale_changed_by_scope"].description == "no scope has stale_changed (4 scopes checked)"


def test_schedule_sensor_and_ui_runs_carry_their_trigger(instance):
    instance.add_dynamic_partitions("scope", SCOPES)
    # a `with`: the instance the context opens (from the test instance's ref) is closed before the test's, so
    # Dagster's defs-state storage variable is left as it was, not on a storage whose instance is gone
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=datetime(2026, 12, 1, 6, tzinfo=UTC),
                                   resources={"claims_config": ClaimsConfig()}) as ctx:  # judge.on_schedule false
        req = monthly_audit_schedule(ctx)
    assert isinstance(req, dg.RunRequest)
    assert {k: req.tags[k] for k in (jobs.TRIGGER_TAG, jobs.RUN_NAME_TAG, jobs.MONTH_TAG, jobs.SCOPE_TAG)} == {
        jobs.TRIGGER_TAG: "schedule", jobs.RUN_NAME_TAG: "monthly audit 2026-12", jobs.MONTH_TAG: "2026-12",
        jobs.SCOPE_TAG: "all"}
    assert audit_automation_sensor.run_tags[jobs.TRIGGER_TAG] == "automation"
    # a launch from the UI carries only the job's tags
    for job in (jobs.audit_scope, jobs.audit_corpus, jobs.refresh_audit, jobs.refresh_scopes, jobs.verify_scope,
                jobs.audit_and_verify_corpus):
        assert job.tags[jobs.TRIGGER_TAG] == "ui", job.name


def test_a_per_scope_output_warns_of_nothing():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = scoped_output(None, {"xa": {"v": 1}}, lambda s: {"n": 1}, {"xa": "abc"})  # type: ignore[arg-type]
    assert out.data_version == dg.DataVersion("abc")
    assert [str(w.message) for w in caught] == []


def test_the_instance_shows_the_automation_on_and_keeps_a_choice_made(tmp_path, monkeypatch):
    from dagster._daemon.asset_daemon import get_auto_materialize_paused, set_auto_materialize_paused

    from claims_pipeline.orchestration.instance import open_instance

    monkeypatch.setenv("CLAIMS_PIPELINE_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))  # open_instance sets it: restored after
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    instance = open_instance(load_settings(None).home_dir)
    assert get_auto_materialize_paused(instance) is False  # the UI's badge: "Auto-materialize on"
    set_auto_materialize_paused(instance, True)  # someone paused it on the UI's daemons page: it stays paused
    assert get_auto_materialize_paused(open_instance(load_settings(None).home_dir)) is True


def test_the_findings_a_command_forgives_are_the_per_scope_checks_beside_their_assets():
    """orchestration/runner.py does not count these checks' failures as a failed command: the names in
    FINDING_CHECKS are exactly the checks of defs/pages/checks.py and defs/priors/checks.py, so a renamed or
    added per-scope check cannot fall out of the list unnoticed."""
    from claims_pipeline.defs.pages import checks as page_checks
    from claims_pipeline.defs.priors import checks as prior_checks
    from claims_pipeline.defs.scope_state import FINDING_CHECKS

    defined = {key.name for module in (page_checks, prior_checks) for value in vars(module).values()
               if isinstance(value, dg.AssetChecksDefinition) for key in value.check_keys}
    assert defined == FINDING_CHECKS == {"stale_changed_by_scope", "tokens_absent_by_scope", "newly_unreadable_by_scope"}
