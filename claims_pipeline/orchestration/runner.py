"""Materialize the assets in-process against the configured Dagster instance (the CLI's audit/worklist/demo).

DAGSTER_HOME: used when set; otherwise <settings.home_dir>/dagster, a persistent folder, so run history
survives and `dagster dev` with the same DAGSTER_HOME shows the CLI's runs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import dagster as dg

from claims_pipeline.settings import PACKAGE_DIR, Settings

INSTANCE_TEMPLATE = PACKAGE_DIR.parent / "config" / "dagster.yaml"  # present in a checkout
MINIMAL_INSTANCE_YAML = "telemetry:\n  enabled: false\n"


def dagster_home_for(settings: Settings) -> Path:
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).expanduser() if env else settings.home_dir / "dagster"


def open_instance(settings: Settings) -> dg.DagsterInstance:
    home = dagster_home_for(settings)
    home.mkdir(parents=True, exist_ok=True)
    yaml_path = home / "dagster.yaml"
    if not yaml_path.exists():
        if INSTANCE_TEMPLATE.is_file():
            shutil.copyfile(INSTANCE_TEMPLATE, yaml_path)
        else:
            yaml_path.write_text(MINIMAL_INSTANCE_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.get()


def sync_scope_partitions(instance: dg.DagsterInstance, scopes: list[str]) -> None:
    """Same effect as the corpus sensor's partition requests, for in-process runs."""
    from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME

    existing = set(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    new = [s for s in scopes if s not in existing]
    if new:
        instance.add_dynamic_partitions(SCOPE_PARTITIONS_NAME, new)
    for gone in sorted(existing - set(scopes)):
        instance.delete_dynamic_partition(SCOPE_PARTITIONS_NAME, gone)


# The CLI prints its own summary; Dagster's per-event DEBUG lines would bury it (the UI keeps them all).
QUIET_RUN_CONFIG: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _all_defs() -> list[Any]:
    from claims_pipeline.defs import ALL_ASSETS
    from claims_pipeline.defs.checks import ALL_CHECKS

    return [*ALL_ASSETS, *ALL_CHECKS]


def run_audit(
    instance: dg.DagsterInstance, resources: dict[str, Any], all_scopes: list[str], scopes: list[str] | None = None
) -> list[dg.ExecuteInProcessResult]:
    """Materialize the per-scope assets (all scopes in one run, or only the named ones), then the audit and
    its report with every check. Returns the run results (the last one carries the audit)."""
    from claims_pipeline.defs.automation import AUDIT_ASSET_NAMES, SCOPE_ASSET_NAMES
    from claims_pipeline.defs.partitions import range_tags

    sync_scope_partitions(instance, all_scopes)
    defs = _all_defs()
    everything = [*SCOPE_ASSET_NAMES, *AUDIT_ASSET_NAMES]
    selection_all = dg.AssetSelection.assets(*everything) | dg.AssetSelection.checks_for_assets(*AUDIT_ASSET_NAMES)
    if scopes is None:  # the whole corpus: one run over the partition range (single-run backfill policy)
        return [dg.materialize(defs, instance=instance, resources=resources, selection=selection_all,
                               tags=range_tags(all_scopes), raise_on_error=False, run_config=QUIET_RUN_CONFIG)]
    results = []
    scope_sel = dg.AssetSelection.assets(*SCOPE_ASSET_NAMES)
    for i, scope in enumerate(scopes):
        last = i == len(scopes) - 1
        sel = selection_all if last else scope_sel  # the audit once, after the last scope
        results.append(dg.materialize(defs, instance=instance, resources=resources, selection=sel,
                                      partition_key=scope, raise_on_error=False, run_config=QUIET_RUN_CONFIG))
        if not results[-1].success:
            break
    return results


def run_failures(results: list[dg.ExecuteInProcessResult]) -> list[str]:
    out = []
    for r in results:
        for ev in r.all_events:
            if ev.is_step_failure:
                err = ev.event_specific_data.error
                out.append(f"{ev.step_key}: {err.message.strip().splitlines()[-1] if err else 'failed'}")
        for c in r.get_asset_check_evaluations():
            if not c.passed and c.severity == dg.AssetCheckSeverity.ERROR:
                out.append(f"check {c.check_name} failed")
    return out


def check_results(results: list[dg.ExecuteInProcessResult]) -> dict[str, bool]:
    return {c.check_name: c.passed for r in results for c in r.get_asset_check_evaluations()}


def ui_dagster_home() -> Path:
    """The folder `make dev` gives the UI as DAGSTER_HOME: the CLI's instance (created from config/dagster.yaml
    when new), so the UI's runs queue one at a time and share the CLI's run history. A bare `dg dev` uses a
    throwaway instance with Dagster's defaults instead."""
    from claims_pipeline.settings import find_config_file, load_settings

    settings = load_settings(find_config_file(None))
    instance = open_instance(settings)
    instance.dispose()
    return dagster_home_for(settings)


if __name__ == "__main__":
    import sys

    from claims_pipeline.settings import ConfigError

    try:
        print(ui_dagster_home())
    except ConfigError as exc:  # make dev stops here instead of starting a UI on a throwaway instance
        print(f"claims-pipeline: config error:\n{exc}", file=sys.stderr)
        sys.exit(2)
