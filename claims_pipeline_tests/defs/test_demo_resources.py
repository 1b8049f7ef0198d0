"""Resources by deployment: the demo's fetcher starts the fixture web at the epoch the demo left, so a UI run after
`claims-pipeline demo` sees the pages the demo's last audit saw (production never starts it, whatever the corpus:
test_production_deployment.py)."""

from __future__ import annotations

import dagster as dg

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.defs.resources import (
    DemoFetcherResource,
    DemoJudgeResource,
    resources_for_file,
)
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.routes import save_epoch
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, QUIET
from claims_pipeline_tests.defs.test_page_change import LEVY, SCOPES
from claims_pipeline_tests.support.stored_values import stored_json


def _fetch_xa(instance, resources) -> dg.ExecuteInProcessResult:
    result = dg.materialize(ALL_ASSETS, instance=instance, resources=resources,
                            selection=["corpus_documents", "claims", "fetched_pages"], partition_key="xa", run_config=QUIET)
    assert result.success
    return result


def _levy_hash(instance, config, home, epoch: int) -> str:
    save_epoch(home, epoch)
    _fetch_xa(instance, resources_for_file(str(config), "demo"))
    pages = stored_json(home, "fetched_pages", "xa")
    assert pages[LEVY]["fetch_status"] == "OK"
    return pages[LEVY]["text_hash"]


def test_the_demo_fetcher_serves_the_epoch_the_demo_left(instance, home):
    config = write_runtime_config(home, "127.0.0.1:9")  # the demo's own web is gone: the resource starts one
    resources = resources_for_file(str(config), "demo")
    assert isinstance(resources["fetcher"], DemoFetcherResource) and isinstance(resources["judge"], DemoJudgeResource)
    sync_scope_partitions(instance, SCOPES)
    at_1 = _levy_hash(instance, config, home, 1)
    _levy_hash(instance, config, home, 2)  # first sighting of the new text: not yet a change
    confirmed = _levy_hash(instance, config, home, 2)
    assert confirmed != at_1  # the levy page changed at epoch 2 on the fixture web, and the run saw it

