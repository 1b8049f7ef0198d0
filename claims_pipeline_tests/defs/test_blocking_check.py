"""A corrupted audit table makes the blocking headline check fail the run, and no report is written."""

from __future__ import annotations

import dagster as dg
import pandas as pd

import claims_pipeline.steps.audit.cross_scope as audit_assets
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline.steps.audit.tables import read_audit, read_priors, write_tables
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, ALL_CHECKS, QUIET, resources_for

SELECTION = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist")


def _run(instance, config):
    return dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config),
                          selection=SELECTION, partition_key="xb", run_config=QUIET, raise_on_error=False)


def test_corrupted_priors_table_stops_the_run(instance, demo_config, home, monkeypatch):
    sync_scope_partitions(instance, ["xb"])

    def write_with_a_lost_row(tables, directory):
        # a storage fault: the priors table loses its TOKENS_PRESENT rows on the way to disk
        tables = dict(tables)
        p = tables["priors"]
        tables["priors"] = p[p["prior"] != "TOKENS_PRESENT"]
        return write_tables(tables, directory)

    monkeypatch.setattr(audit_assets, "write_tables", write_with_a_lost_row)
    result = _run(instance, demo_config)

    assert not result.success  # the run fails
    check = next(c for c in result.get_asset_check_evaluations() if c.check_name == "recount_matches_headline")
    assert check.passed is False
    assert "by_prior" in check.metadata["mismatches"].value
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert "audit_tables" in materialized and "audit_report" not in materialized  # blocked before the report
    assert not (home / "reports" / "LATEST").exists()


def test_intact_tables_pass_and_report_is_written(instance, demo_config, home):
    sync_scope_partitions(instance, ["xb"])
    result = _run(instance, demo_config)
    assert result.success
    assert (home / "reports" / "LATEST").is_file()
    # the review checks read the priors table alone: the same frame as the whole audit's
    priors = read_priors(home)
    pd.testing.assert_frame_equal(priors, read_audit(home).priors)
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    absent = int((priors["prior"] == "TOKENS_ABSENT").sum())
    assert checks["no_tokens_absent"].metadata["count"].value == absent
    assert checks["no_stale_changed"].metadata["count"].value == int(priors["stale_changed"].sum())


def test_the_automation_sensor_does_not_report_tables_whose_blocking_check_failed(instance, demo_config, home, monkeypatch):
    """audit_tables materialized alone (the UI, `dagster asset materialize`) with a failing blocking check:
    the next automation tick must not start a run writing the report from those tables."""
    from claims_pipeline.definitions import defs as build_definitions

    sync_scope_partitions(instance, ["xb"])
    scope_assets = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist", "audit_tables", "audit_report")
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=scope_assets, partition_key="xb", run_config=QUIET).success
    defs = build_definitions()
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)  # a tick before: its cursor

    def write_with_a_lost_row(tables, directory):
        tables = dict(tables)
        tables["priors"] = tables["priors"][tables["priors"]["prior"] != "TOKENS_PRESENT"]
        return write_tables(tables, directory)

    monkeypatch.setattr(audit_assets, "write_tables", write_with_a_lost_row)
    tables_only = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                                 selection=dg.AssetSelection.assets("audit_tables"), run_config=QUIET, raise_on_error=False)
    check = next(c for c in tables_only.get_asset_check_evaluations() if c.check_name == "recount_matches_headline")
    assert check.passed is False

    after = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    assert after.get_requested_partitions(dg.AssetKey("audit_report")) == set()
    assert not (home / "reports" / "LATEST").exists()


def test_the_automation_sensor_reports_tables_whose_check_passed(instance, demo_config):
    from claims_pipeline.definitions import defs as build_definitions

    sync_scope_partitions(instance, ["xb"])
    scope_assets = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist", "audit_tables", "audit_report")
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=scope_assets, partition_key="xb", run_config=QUIET).success
    defs = build_definitions()
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=dg.AssetSelection.assets("audit_tables"), run_config=QUIET).success
    after = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    # the report, and its notification after it in the same run (eager on a dependency that will be requested)
    assert after.total_requested == 2 and after.get_num_requested(dg.AssetKey("audit_report")) == 1
    assert after.get_num_requested(dg.AssetKey("audit_notification")) == 1
