"""The thin Dagster layer: it wires the pure core (corpus, web, store, priors, audit, report) into assets.

`build_definitions()` is loaded by `dg dev` / `dagster dev` (claims_pipeline/definitions.py). Settings come
from $CLAIMS_PIPELINE_CONFIG, else ./config/claims_pipeline.yaml, else the bundled demo/demo.yaml. When the
corpus is the bundled demo corpus, each run starts the fixture web in-process so the demo's fictional hosts
answer on loopback (FetcherResource fixture_web="auto").
"""

from __future__ import annotations

import os
import warnings

import dagster as dg

# backfill_policy and Output(data_version=) are marked beta in Dagster 1.13; we rely on both on purpose.
warnings.filterwarnings("ignore", category=dg.BetaWarning)

from claims_pipeline.defs.audit_assets import audit_report, audit_tables
from claims_pipeline.defs.automation import audit_automation_sensor, corpus_sensor, monthly_audit_schedule
from claims_pipeline.defs.checks import ALL_CHECKS
from claims_pipeline.defs.resources import default_resources
from claims_pipeline.defs.scope_assets import citation_lint, claims, corpus_documents, fetched_pages, page_changes, priors
from claims_pipeline.defs.worklist_asset import worklist
from claims_pipeline.settings import ENV_CONFIG

SCOPE_ASSETS = [corpus_documents, claims, citation_lint, fetched_pages, page_changes, priors]
AUDIT_ASSETS = [audit_tables, audit_report]
ALL_ASSETS = [*SCOPE_ASSETS, *AUDIT_ASSETS, worklist]


def build_definitions(resources: dict | None = None) -> dg.Definitions:
    if resources is None:
        configured = bool(os.environ.get(ENV_CONFIG))
        resources = default_resources(dg.EnvVar(ENV_CONFIG) if configured else None, fixture_web="auto")
    return dg.Definitions(
        assets=ALL_ASSETS,
        asset_checks=ALL_CHECKS,
        schedules=[monthly_audit_schedule],
        sensors=[corpus_sensor, audit_automation_sensor],
        resources=resources,
        # Steps are I/O-bound and run one after another per scope; one process per run avoids paying a
        # Python start-up per step (see benchmarks/bench_audit.py and README "Running with Dagster").
        executor=dg.in_process_executor,
    )
