"""The per-scope values of a real run over several scopes (a real Dagster instance, the fixture web): one file per
asset with the scope a column, each file read once in the run, and per-scope UI metadata sized for 1,000 scopes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import dagster as dg
import pyarrow as pa

from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import load_settings
from claims_pipeline.corpus.scopes import list_scopes
from claims_pipeline.orchestration.runner import run_audit, sync_scope_partitions
from claims_pipeline.steps import stored
from claims_pipeline_tests.defs.conftest import resources_for

ROWS = 3  # defs/scoped.MANY_SCOPES_TABLE_ROWS, written out: this test names what it expects (and runs on main)
SCOPE_ASSETS = ["corpus_documents", "claims", "citation_lint", "fetched_pages", "page_changes", "priors"]


def test_the_io_manager_declares_the_settings_it_needs_as_a_resource(demo_config: Path) -> None:
    from claims_pipeline.defs.scoped import MANY_SCOPES_TABLE_ROWS
    from claims_pipeline.defs.storage import ScopeStoreIOManager

    assert MANY_SCOPES_TABLE_ROWS == ROWS
    manager = resources_for(demo_config)["io_manager"]
    assert isinstance(manager, ScopeStoreIOManager) and isinstance(manager, dg.ConfigurableIOManager)
    assert "claims_config" in ScopeStoreIOManager.model_fields


def test_a_run_over_every_scope_stores_one_file_per_asset_read_once(instance, demo_config, home, monkeypatch):
    opened: Counter[Path] = Counter()
    real_open = getattr(stored, "_open", None)

    def counting_open(path: Path) -> pa.Table:
        opened[path] += 1
        return real_open(path)  # type: ignore[misc]

    monkeypatch.setattr(stored, "_open", counting_open, raising=False)
    scopes = sorted(list_scopes(corpus_source(load_settings(demo_config))))
    assert len(scopes) >= 4
    sync_scope_partitions(instance, scopes)
    results = run_audit(instance, resources_for(demo_config), scopes)
    assert [r.success for r in results] == [True]

    for asset in SCOPE_ASSETS:
        [only] = sorted((home / "assets" / f"{asset}.store").glob("*.arrow"))
        with pa.memory_map(str(only)) as source:
            assert sorted(pa.ipc.open_file(source).read_all()["scope"].to_pylist()) == scopes, asset
        assert not (home / "assets" / asset).exists()  # no JSON file per scope any more
    # the claims are loaded by fetched_pages, page_changes, priors and audit_tables, the pages by three steps:
    # each file is read once in the run (corpus_documents' small file twice: the corpus_untouched check reads it
    # outside the IO manager)
    reads = {path.parent.name.removesuffix(".store"): n for path, n in opened.items()}
    assert reads == {"claims": 1, "fetched_pages": 1, "priors": 1, "corpus_documents": 2}, reads

    # each scope's own metadata in a run of many: its counts whole, its tables a few rows
    events = {(e.materialization.asset_key.to_user_string(), e.materialization.partition): e.materialization.metadata
              for e in results[0].get_asset_materialization_events()}
    biggest = max(scopes, key=lambda s: events[("claims", s)]["claims"].value)
    meta = events[("claims", biggest)]
    assert meta["claims"].value > ROWS  # the demo's largest scope has more claims than shown
    table = meta["claims_table"].value
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]  # the header's line left out
    assert len(rows) == ROWS, table
    assert f"{meta['claims'].value - ROWS} more" in table, table
