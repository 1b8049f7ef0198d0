"""Which page-cache fetch run a Dagster run records under (pages.refresh_pages resumes by that id)."""

from __future__ import annotations

import dagster as dg

# The tags Dagster sets on a run it re-executes: from the failed step (UI "Re-execute from failure", the
# run-retry daemon with the FROM_FAILURE strategy) or from the failed assets, and the first run of the chain.
RESUME_TAGS = ("dagster/is_resume_retry", "dagster/is_asset_resume_retry")
ROOT_RUN_TAG = "dagster/root_run_id"


def fetch_run_id(run: dg.DagsterRun) -> str:
    """A retry from failure continues its root run's fetch run, so the pages recorded before the failure (or
    a kill) are not requested again; every other run, a re-execution of all steps included, is a fresh fetch
    run that asks for every page (conditionally)."""
    if any(run.tags.get(t) == "true" for t in RESUME_TAGS):
        return run.tags.get(ROOT_RUN_TAG) or run.root_run_id or run.run_id
    return run.run_id
