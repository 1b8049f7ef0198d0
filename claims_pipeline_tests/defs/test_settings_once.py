"""Settings are read once per run: every resource that holds the ClaimsConfig (page cache, fetcher, judge, IO
manager) shares the run's one read, and the run's log names the configuration file once."""

from __future__ import annotations

import dagster as dg

import claims_pipeline.defs.resources as resources_mod
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, ALL_CHECKS, QUIET, resources_for


def test_a_run_reads_its_settings_once_and_says_which_file_once(instance, demo_config, monkeypatch):
    sync_scope_partitions(instance, ["xb"])
    resources = resources_for(demo_config)  # built as the CLI and the code location build them
    reads: list[object] = []
    real = resources_mod.load_settings

    def counted(path, **kwargs):
        reads.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(resources_mod, "load_settings", counted)
    result = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources, partition_key="xb",
                            selection=dg.AssetSelection.groups("scopes") | dg.AssetSelection.groups("audit"),
                            run_config=QUIET, raise_on_error=False)
    assert result.success
    assert reads == [demo_config]
    logged = [r.user_message for r in instance.all_logs(result.run_id) if r.user_message.startswith("settings: ")]
    assert len(logged) == 1 and str(demo_config) in logged[0], logged

    reads.clear()  # the next run reads the file again (it may have changed between runs)
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources, partition_key="xb",
                          selection=["corpus_documents"], run_config=QUIET).success
    assert reads == [demo_config]
