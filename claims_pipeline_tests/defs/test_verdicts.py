"""The verdict step through Dagster: one scope audited, then `verdicts` and `verdict_report` materialized on a real
instance, the real anthropic / openai SDKs talking to the scripted judge server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.defs.metadata import full_path
from claims_pipeline.defs.resources import JudgeResource
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.scripted_judge import ScriptedJudgeServer
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, ALL_CHECKS, QUIET, config_with, resources_for
from claims_pipeline_tests.support.stored_values import stored_json

SCOPES = ["xa", "xb", "xc", "shared/exit/regional"]
AUDIT = dg.AssetSelection.groups("scopes", "audit")
VERIFY = dg.AssetSelection.groups("verdicts")
KEY_ENV = "CLAIMS_PIPELINE_TEST_JUDGE_KEY"


def _materialize(instance, resources, selection, scope="xa") -> dg.ExecuteInProcessResult:
    return dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources, selection=selection,
                          partition_key=scope, run_config=QUIET, raise_on_error=False)


def _judge_config(config: Path, server: ScriptedJudgeServer, provider: str) -> Path:
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    return config_with(config, judge__provider=provider, judge__base_url=url, judge__api_key_env=KEY_ENV,
                       judge__model="claude-haiku-4-5" if provider == "anthropic" else "gpt-4o-mini")


def _mat(result: dg.ExecuteInProcessResult, key: str) -> dict:
    mats = [e.materialization for e in result.get_asset_materialization_events()
            if e.materialization.asset_key.to_user_string() == key]
    assert mats, f"{key} was not materialized"
    return {k: v.value for k, v in mats[-1].metadata.items()}


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
def test_one_scope_judged_end_to_end_then_cached(instance, demo_config, home, provider, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-secret")
    sync_scope_partitions(instance, SCOPES)
    assert _materialize(instance, resources_for(demo_config), AUDIT).success
    with ScriptedJudgeServer() as server:
        config = _judge_config(demo_config, server, provider)
        resources = resources_for(config)  # the judge holds this run's claims_config (one instance per run)
        resources = {**resources, "judge": JudgeResource(config=resources["claims_config"], api_key=dg.EnvVar(KEY_ENV))}
        first = _materialize(instance, resources, VERIFY)
        sent_first = len(server.requests("verdict"))
        b_first = len(server.requests("direction_b"))
        stored = stored_json(home, "verdicts", "xa")
        second = _materialize(instance, resources, VERIFY)
        sent_second = len(server.requests()) - sent_first - b_first
    assert first.success and second.success
    checks = {c.check_name: c.passed for c in first.get_asset_check_evaluations()}
    assert checks["verdict_counts_recount"] is True
    verdicts = stored["verdicts"]
    assert verdicts and all(v["scope"] == "xa" for v in verdicts)
    assert stored["run"]["provider"] == provider and stored["run"]["requests_sent"] == sent_first > 0
    # every MATCH was confirmed after a second ask, framed to refute, went over the wire
    assert stored["run"]["b_requests_sent"] == b_first == sum(1 for v in stored["verdicts"] if v["verdict"] == "MATCH") > 0
    # unreadable pages are never sent: their verdict is set by code
    unreadable = [v for v in verdicts if v["prior"] in ("SOURCE_UNAVAILABLE", "SOURCE_BINARY", "PDF_NO_TEXT")]
    assert unreadable and all(v["verdict"] == "SOURCE_UNAVAILABLE" and v["draft"] is None for v in unreadable)
    sent_ids = {r.claim_id for r in server.requests()}
    assert not sent_ids & {v["id"] for v in unreadable}
    # quote or abstain: nothing that claims the page ships without a verbatim quote
    for v in verdicts:
        if v["verdict"] in ("MATCH", "MISMATCH", "STALE", "PARTIAL"):
            assert v["quote"].strip()
    # a second materialization with nothing changed: no request, no cost
    assert sent_second == 0
    again = stored_json(home, "verdicts", "xa")
    assert again["run"]["requests_sent"] == 0 and again["run"]["cost_usd"] == 0
    assert again["run"]["cached"] == stored["run"]["requests_sent"]
    # the report lands next to the audit report, and report.html gets a verdict section
    meta = _mat(first, "verdict_report")
    report_dir = Path(full_path(meta["report_dir"], meta.get("home")))
    latest = HomeLayout(home).latest_report_dir()
    assert report_dir == latest
    assert (latest / "verdicts.md").is_file() and (latest / "verdicts.json").is_file()
    assert "verdict" in (latest / "report.html").read_text().lower() and meta["appended_to_report_html"] is True
    # the key never reaches a stored file or the metadata
    for path in [*latest.iterdir(), *(home / "assets" / "verdicts.store").iterdir()]:
        if path.is_file():
            assert "sk-test-not-a-secret" not in path.read_text(errors="replace")


def test_no_judge_configured_materializes_and_says_how_to_configure(instance, demo_config, home):
    sync_scope_partitions(instance, SCOPES)
    assert _materialize(instance, resources_for(demo_config), AUDIT).success
    result = _materialize(instance, resources_for(demo_config), VERIFY)
    assert result.success
    meta = _mat(result, "verdicts")
    assert meta["judged"] is False and "set judge.provider" in meta["reason"]
    report = _mat(result, "verdict_report")
    assert report["judged"] is False
    assert "No judge ran" in Path(full_path(report["report"], report.get("home"))).read_text()


def test_a_count_that_does_not_recount_stops_the_run_before_the_report(instance, demo_config, home, monkeypatch):
    """An engine bug (the stored counts disagree with the verdicts) fails the blocking check: no verdict report."""
    import claims_pipeline.steps.verdicts as verdicts_core

    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-secret")
    sync_scope_partitions(instance, SCOPES)
    assert _materialize(instance, resources_for(demo_config), AUDIT).success
    real = verdicts_core.judge_scope

    def miscounted(*args, **kwargs):
        out = real(*args, **kwargs)
        out.counts["by_verdict"]["MATCH"] = out.counts["by_verdict"].get("MATCH", 0) + 1
        return out

    monkeypatch.setattr(verdicts_core, "judge_scope", miscounted)
    with ScriptedJudgeServer() as server:
        config = _judge_config(demo_config, server, "anthropic")
        resources = resources_for(config)  # the judge holds this run's claims_config (one instance per run)
        resources = {**resources, "judge": JudgeResource(config=resources["claims_config"], api_key=dg.EnvVar(KEY_ENV))}
        result = _materialize(instance, resources, VERIFY)
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks["verdict_counts_recount"] is False
    assert not result.success
    assert "verdict_report" not in {e.materialization.asset_key.to_user_string() for e in result.get_asset_materialization_events()}


@pytest.mark.parametrize("on_schedule, job", [(False, "audit_corpus"), (True, "audit_and_verify_corpus")])
def test_the_monthly_schedule_takes_the_verdicts_only_with_judge_on_schedule(instance, demo_config, on_schedule, job):
    """judge.on_schedule is read when the schedules tick (never when the definitions load): one of the two
    monthly schedules requests the run, the other skips and names it."""
    from datetime import UTC, datetime

    from claims_pipeline.defs.automation import monthly_audit_and_verify_schedule, monthly_audit_schedule
    from claims_pipeline.defs.resources import ClaimsConfig

    config = ClaimsConfig(config_path=str(config_with(demo_config, judge__on_schedule=on_schedule)))
    instance.add_dynamic_partitions("scope", ["xa", "xb"])
    # a `with`: the instance the context opens (from the test instance's ref) is closed before the test's, so
    # Dagster's defs-state storage variable is left as it was, not on a storage whose instance is gone
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=datetime(2026, 12, 1, 6, tzinfo=UTC),
                                   resources={"claims_config": config}) as ctx:
        requested = {s.job_name: s(ctx) for s in (monthly_audit_schedule, monthly_audit_and_verify_schedule)}
    assert [name for name, r in requested.items() if isinstance(r, dg.RunRequest)] == [job]
    skipped = next(r for name, r in requested.items() if name != job)
    assert isinstance(skipped, dg.SkipReason) and f"judge.on_schedule is {str(on_schedule).lower()}" in (skipped.skip_message or "")


# A scope's run as the step stored it before VerdictRun (JudgeRun.summary() + a few keys): it must still load.
OLD_SCOPE_RUN = {"provider": "anthropic", "model": "claude-haiku-4-5", "requests_sent": 3, "attempts": 4,
                 "input_tokens": 900, "output_tokens": 120, "cost_usd": 0.0021, "price_known": True, "cached": 1,
                 "b_requests_sent": 2, "b_cached": 0, "b_unasked": 0, "unreadable": 1, "failed": 0,
                 "stopped_by": "max_cost", "dry_run": False, "est_input_tokens": 0, "est_output_tokens": 0,
                 "est_cost_usd": 0.0, "est_b_requests": 0, "wall_s": 1.5, "verdicts": 4, "skipped": 2,
                 "prompt_version": "v7", "run_at": "2026-12-01T18:00:00+00:00", "scripted": False,
                 "skipped_ids": ["c9", "c10"]}
# the keys, in order, of the merged run verdicts.json has always carried (old merged_run_info)
MERGED_KEYS = ["provider", "model", "prompt_version", "run_at", "scripted", "requests_sent", "input_tokens",
               "output_tokens", "cached", "b_requests_sent", "b_cached", "b_unasked", "unreadable", "failed", "skipped",
               "cost_usd", "price_known", "stopped_by", "scopes"]


def test_a_verdict_run_stored_before_the_type_loads_merges_and_keeps_its_json_form(tmp_path: Path) -> None:
    from claims_pipeline.steps.verdict_run import VerdictRun
    from claims_pipeline.steps.verdicts import VERDICTS

    VERDICTS.legacy_path(tmp_path, "xa").parent.mkdir(parents=True, exist_ok=True)
    VERDICTS.legacy_path(tmp_path, "xa").write_text(json.dumps({"verdicts": [], "run": OLD_SCOPE_RUN, "counts": {}}))
    VERDICTS.legacy_path(tmp_path, "xb").write_text(json.dumps(
        {"verdicts": [], "run": {"judged": False, "reason": "scope not audited yet", "run_at": "x"}, "counts": {}}))
    old = VERDICTS.read(tmp_path, "xa")
    assert old is not None and old.run.stopped_by == ("max_cost",) and old.run.skipped_ids == ("c9", "c10")
    assert (old.run.requests_sent, old.run.cost_usd, old.run.verdicts) == (3, 0.0021, 4)
    not_judged = VERDICTS.read(tmp_path, "xb")
    assert not_judged is not None and not not_judged.run.judged and not_judged.run.reason == "scope not audited yet"

    second = VerdictRun.from_json({**OLD_SCOPE_RUN, "stopped_by": ["max_claims"], "requests_sent": 2, "cost_usd": 0})
    merged = VerdictRun.merged([old.run, not_judged.run, second])
    doc = merged.to_json()
    assert list(doc) == MERGED_KEYS
    assert doc["requests_sent"] == 5 and doc["scopes"] == 3 and doc["stopped_by"] == ["max_claims", "max_cost"]
    assert isinstance(doc["cost_usd"], float) and doc["cost_usd"] == 0.0021  # an int 0 stays a float
    assert VerdictRun.from_json(doc) == merged  # verdicts.json's run reads back as the same merged run
    assert VerdictRun.from_json(old.run.to_json()) == old.run
    assert VerdictRun.merged([not_judged.run]).to_json() == {"judged": False, "reason": "scope not audited yet"}
