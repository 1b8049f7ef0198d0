"""One scope end to end through dg.materialize on a real instance, against the fixture web."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, ALL_CHECKS, QUIET, resources_for
from claims_pipeline_tests.support.stored_values import stored_json

SCOPE_ASSETS = ["corpus_documents", "claims", "citation_lint", "fetched_pages", "page_changes", "priors"]
EVERYTHING = dg.AssetSelection.assets(*SCOPE_ASSETS, "audit_tables", "audit_report") | dg.AssetSelection.checks_for_assets("audit_tables", "audit_report")


def _materialize(instance, config: Path, scope: str, clock: str = "") -> dg.ExecuteInProcessResult:
    return dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config, clock),
                          selection=EVERYTHING, partition_key=scope, run_config=QUIET, raise_on_error=False)


def _version(instance, key: str, partition: str) -> str | None:
    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=[partition]), limit=1).records
    return records[0].asset_materialization.tags.get("dagster/data_version") if records else None


def test_xa_end_to_end(instance, demo_config, home, web):
    sync_scope_partitions(instance, ["xa", "xb", "xc", "shared/exit/regional"])
    result = _materialize(instance, demo_config, "xa")
    assert result.success

    # per-scope values stored, one file per scope
    stored = stored_json(home, "claims", "xa")
    ids = {c["id"].split(":")[1] for c in stored["claims"]}
    assert {"16", "18", "23", "24", "25"} <= ids
    pages = stored_json(home, "fetched_pages", "xa")
    statuses = {u.rsplit("/", 1)[-1]: p["fetch_status"] for u, p in pages.items()}
    assert statuses["application-bundle.zip"] == "BINARY"
    assert statuses["refusals.html"] == "ROBOTS"  # robots.txt honoured: never requested
    assert not any(r["path"] == "/internal/refusals.html" for r in web.requests())

    priors = {r["id"].split(":")[1]: r["prior"] for r in stored_json(home, "priors", "xa")}
    assert priors["16"] == "TOKENS_PRESENT"  # "4.5%" found as "4,5 %" on the page
    assert priors["23"] == "TOKENS_ABSENT"  # the licence page never states €900
    assert priors["24"] == "SOURCE_BINARY"

    # the audit covers the scope that exists; checks ran and the blocking one passed
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks["recount_matches_headline"] is True
    assert checks["corpus_untouched"] is True
    assert checks["no_tokens_absent"] is False  # WARN: a finding, not a failure
    t = pd.read_parquet(home / "audit" / "tables" / "priors.parquet")
    assert set(t["scope"]) == {"xa"} and len(t) == len(stored["claims"])
    latest = HomeLayout(home).latest_report_dir()
    assert (latest / "report.md").is_file()

    mat = {e.materialization.asset_key.to_user_string(): e.materialization for e in result.get_asset_materialization_events()}
    meta = mat["priors"].metadata
    assert meta["by_prior"].value["TOKENS_ABSENT"] == 1
    assert "lands.gov.xa/foreign-buyers/licence.html" in meta["tokens_absent_claims"].value

    # re-fetching unchanged pages keeps fetched_pages' data version: nothing downstream turns unsynced
    v1 = _version(instance, "fetched_pages", "xa")
    assert _materialize(instance, demo_config, "xa").success
    assert _version(instance, "fetched_pages", "xa") == v1


def test_bad_corpus_file_is_named_and_others_continue(instance, demo_config, home, tmp_path):
    import shutil

    from claims_pipeline_tests.defs.conftest import config_with

    corpus = tmp_path / "corpus"
    from claims_pipeline.config.settings import DEMO_CORPUS_DIR

    shutil.copytree(DEMO_CORPUS_DIR, corpus)
    (corpus / "countries" / "xa" / "playbook.md").write_bytes(b"# broken\n\xff\xfe not utf-8 \x00\n")
    config_with(demo_config, extraction__corpus_dir=str(corpus))
    sync_scope_partitions(instance, ["xa", "xb"])
    result = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                            selection=dg.AssetSelection.assets("corpus_documents", "claims"),
                            tags={"dagster/asset_partition_range_start": "xa", "dagster/asset_partition_range_end": "xb"},
                            run_config=QUIET, raise_on_error=False)
    assert result.success
    xa = stored_json(home, "claims", "xa")
    xb = stored_json(home, "claims", "xb")
    assert xa["claims"] == [] and any("countries/xa/playbook.md" in w for w in xa["warnings"])
    assert len(xb["claims"]) >= 5


def test_corpus_untouched_fails_when_a_corpus_file_changes_after_its_scope_was_read(instance, demo_config, tmp_path):
    import shutil

    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import DEMO_CORPUS_DIR, load_settings
    from claims_pipeline.steps.corpus import corpus_drift
    from claims_pipeline_tests.defs.conftest import config_with

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS_DIR, corpus)
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))
    sync_scope_partitions(instance, ["xa", "xb", "xc", "shared/exit/regional"])
    assert _materialize(instance, config, "xb").success
    settings = load_settings(config)
    assert corpus_drift(corpus_source(settings), settings.home_dir, ["xa", "xb", "xc", "shared/exit/regional"]) == []

    play = corpus / "countries" / "xb" / "playbook.md"  # someone (or a buggy tool) re-stamps a date
    play.write_text(play.read_text(encoding="utf-8").replace("2025-12-01", "2026-11-29"), encoding="utf-8")
    assert corpus_drift(corpus_source(settings), settings.home_dir, ["xa", "xb", "xc", "shared/exit/regional"]) == [
        "countries/xb/playbook.md: bytes differ"]
    rerun = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config),
                           selection=dg.AssetSelection.checks_for_assets("audit_report"), run_config=QUIET,
                           raise_on_error=False)
    checks = {c.check_name: c for c in rerun.get_asset_check_evaluations()}
    assert checks["corpus_untouched"].passed is False
    assert "countries/xb/playbook.md" in checks["corpus_untouched"].metadata["changed_files"].value
