"""A corrupted audit table makes the blocking headline check fail the run, and no report is written."""

from __future__ import annotations

import dagster as dg

import claims_pipeline.defs.audit_assets as audit_assets
from claims_pipeline.defs import ALL_ASSETS
from claims_pipeline.defs.audit_tables_io import write_tables
from claims_pipeline.defs.checks import ALL_CHECKS
from claims_pipeline.defs.runner import sync_scope_partitions
from claims_pipeline_tests.defs.conftest import QUIET, resources_for

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
    check = next(c for c in result.get_asset_check_evaluations() if c.check_name == "headline_numbers_match_tables")
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
