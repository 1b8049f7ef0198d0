"""Resources by deployment: the demo's fetcher starts the fixture web at the epoch the demo left, so a UI run after
`claims-pipeline demo` sees the pages the demo's last audit saw; local and production never start it, whatever
the corpus."""

from __future__ import annotations

import json

import dagster as dg
import yaml

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.config.settings import DEMO_CONFIG_FILE, DEMO_CORPUS_DIR
from claims_pipeline.defs.resources import (
    DemoFetcherResource,
    DemoJudgeResource,
    FetcherResource,
    JudgeResource,
    resources_for_file,
)
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_demo.routes import save_epoch
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, QUIET
from claims_pipeline_tests.defs.test_page_change import LEVY, SCOPES


def _fetch_xa(instance, resources) -> dg.ExecuteInProcessResult:
    result = dg.materialize(ALL_ASSETS, instance=instance, resources=resources,
                            selection=["corpus_documents", "claims", "fetched_pages"], partition_key="xa", run_config=QUIET)
    assert result.success
    return result


def _levy_hash(instance, config, home, epoch: int) -> str:
    save_epoch(home, epoch)
    _fetch_xa(instance, resources_for_file(str(config), "demo"))
    pages = json.loads((home / "assets" / "fetched_pages" / "xa.json").read_text())
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


def test_production_never_starts_the_fixture_web_even_on_the_demo_corpus(instance, tmp_path):
    """The bundled demo corpus named in a production config: the production fetcher and judge, no fixture web,
    no route to loopback; the demo's fictional hosts do not resolve, so no cited page reads."""
    data = yaml.safe_load(DEMO_CONFIG_FILE.read_text(encoding="utf-8"))
    data["home"] = str(tmp_path / "home")
    data["extraction"]["corpus_dir"] = str(DEMO_CORPUS_DIR)
    config = tmp_path / "production.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    for deployment in ("production", "local"):
        resources = resources_for_file(str(config), deployment)
        assert (type(resources["fetcher"]), type(resources["judge"])) == (FetcherResource, JudgeResource)
    sync_scope_partitions(instance, ["xa"])
    result = _fetch_xa(instance, resources_for_file(str(config), "production"))
    logs = [r.user_message for r in instance.all_logs(result.run_id)]
    assert any(m.startswith("settings: ") and "deployment production" in m for m in logs), logs
    assert not [m for m in logs if m.startswith("demo: ") or "fixture web" in m]
    pages = json.loads((tmp_path / "home" / "assets" / "fetched_pages" / "xa.json").read_text())
    assert pages and all(p["fetch_status"] != "OK" for p in pages.values()), {u: p["fetch_status"] for u, p in pages.items()}
    fetch = resources_for_file(str(config), "production")["claims_config"].load().fetch
    assert not [h for h in fetch.address_map if h.startswith("*.")] and fetch.allow_networks == []
