"""Resources by deployment: the demo's fetcher starts the fixture web at the epoch the demo left, so a UI run after
`claims-pipeline demo` sees the pages the demo's last audit saw; production's fetcher never starts it."""

from __future__ import annotations

import json

import dagster as dg

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.defs.resources import DemoFetcherResource, DemoJudgeResource, FetcherResource, default_resources
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.routes import save_epoch
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, QUIET
from claims_pipeline_tests.defs.test_page_change import LEVY, SCOPES


def _levy_hash(instance, config, home, epoch: int) -> str:
    save_epoch(home, epoch)
    result = dg.materialize(ALL_ASSETS, instance=instance, resources=default_resources(str(config)),
                            selection=["corpus_documents", "claims", "fetched_pages"], partition_key="xa", run_config=QUIET)
    assert result.success
    pages = json.loads((home / "assets" / "fetched_pages" / "xa.json").read_text())
    assert pages[LEVY]["fetch_status"] == "OK"
    return pages[LEVY]["text_hash"]


def test_the_demo_fetcher_serves_the_epoch_the_demo_left(instance, home):
    config = write_runtime_config(home, "127.0.0.1:9")  # the demo's own web is gone: the resource starts one
    resources = default_resources(str(config))
    assert isinstance(resources["fetcher"], DemoFetcherResource) and isinstance(resources["judge"], DemoJudgeResource)
    sync_scope_partitions(instance, SCOPES)
    at_1 = _levy_hash(instance, config, home, 1)
    _levy_hash(instance, config, home, 2)  # first sighting of the new text: not yet a change
    confirmed = _levy_hash(instance, config, home, 2)
    assert confirmed != at_1  # the levy page changed at epoch 2 on the fixture web, and the run saw it


def test_a_corpus_of_ones_own_gets_the_production_fetcher(tmp_path, demo_config):
    from claims_pipeline_tests.defs.conftest import config_with

    corpus = tmp_path / "corpus"
    (corpus / "countries" / "zz").mkdir(parents=True)
    (corpus / "countries" / "zz" / "p.md").write_text("# zz\n", encoding="utf-8")
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))
    fetcher = default_resources(str(config))["fetcher"]
    assert type(fetcher) is FetcherResource  # no fixture web in production
