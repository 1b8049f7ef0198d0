"""Settings are read once per run: every resource that holds the ClaimsConfig (page cache, fetcher, judge, IO
manager) shares the run's one instance of it (set up at launch), and the run's log names the configuration file
once. An entry point that read its settings hands them to its runs as a resource: the runs read no file."""

from __future__ import annotations

import dagster as dg

import claims_pipeline.config.run_settings as run_settings_mod
from claims_pipeline.config.settings import load_settings
from claims_pipeline.defs.resources import ClaimsConfig, PageCacheResource
from claims_pipeline.orchestration import runner
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, ALL_CHECKS, QUIET, resources_for


def test_a_run_reads_its_settings_once_and_says_which_file_once(instance, demo_config, monkeypatch):
    sync_scope_partitions(instance, ["xb"])
    resources = resources_for(demo_config)  # built as the CLI and the code location build them
    reads: list[object] = []
    real = run_settings_mod.load_settings

    def counted(path, **kwargs):
        reads.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(run_settings_mod, "load_settings", counted)
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


def test_an_entry_points_settings_reach_its_runs_as_a_resource(instance, demo_config, monkeypatch):
    """The CLI's resources (orchestration/runner.resources_for) carry the settings it read in the claims_config
    resource itself: its runs read no file, every resource of the run sees the same sections, and two commands
    in one process keep their own settings (no global hands them over)."""
    sync_scope_partitions(instance, ["xb"])
    settings = load_settings(demo_config)
    other = settings.model_copy(update={"home": demo_config.parent / "other-home"})
    resources = runner.resources_for(settings, clock="2026-03-01T09:00:00+00:00")
    runner.resources_for(other)  # a later command's resources do not replace these (they did: one global slot)
    reads: list[object] = []
    monkeypatch.setattr(run_settings_mod, "load_settings", lambda *a, **k: reads.append(a) or load_settings(*a, **k))
    seen: list[tuple[object, ...]] = []

    @dg.asset
    def probe(claims_config: ClaimsConfig, page_cache: PageCacheResource) -> None:
        held = page_cache.config
        seen.append((claims_config is held, claims_config.home_dir, claims_config.now().isoformat(),
                     claims_config.corpus is held.corpus))

    result = dg.materialize([probe], instance=instance, resources=resources, run_config=QUIET)
    assert result.success
    assert reads == []
    assert seen == [(True, settings.home_dir, "2026-03-01T09:00:00+00:00", True)]
    logged = [r.user_message for r in instance.all_logs(result.run_id) if r.user_message.startswith("settings: ")]
    assert len(logged) == 1 and str(demo_config) in logged[0], logged
