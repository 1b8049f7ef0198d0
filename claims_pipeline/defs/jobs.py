"""The jobs a user launches: one country (scope) end to end, or the whole corpus in one run.

Both select by group: the per-scope assets (group "scopes"), then the cross-scope audit and its report (group
"audit"), with their checks, in the same run, so a re-audit of one scope ends with a fresh report."""

from __future__ import annotations

import dagster as dg

from claims_pipeline.defs.groups import AUDIT_GROUP, SCOPES_GROUP, VERDICTS_GROUP
from claims_pipeline.defs.partitions import scope_partitions

SCOPE_TAG = "claims_pipeline/scope"
# On every run of a job that rebuilds the cross-scope audit tables and the report: the instance's queue lets one
# such run go at a time (orchestration/dagster.yaml), since another landing between a run's tables and its report
# fails that report step. Given as the jobs' `tags`, not `run_tags`: Dagster 1.13 puts `run_tags` only on the runs
# of sensors and schedules, while `dagster job launch`, a launch through GraphQL (the UI), a job backfill and a
# re-execution copy the job's `tags` (dagster-io/dagster#28813), so such a run went beside another; `tags` without
# `run_tags` are put on every run of the job (test_run_queue_limits launches with the CLI).
CROSS_SCOPE_TAGS = {"claims_pipeline/cross_scope_audit": "true"}

# What started a run and what it covers, so the runs list tells one audit from another: the trigger (schedule,
# sensor, automation, cli, demo, ui), a short name, and the month (the schedule) or the scope(s).
TRIGGER_TAG = "claims_pipeline/trigger"
RUN_NAME_TAG = "claims_pipeline/run"
MONTH_TAG = "claims_pipeline/month"
# A launch from the UI (or `dagster job launch`) carries only the job's own tags: these say so. Every other
# trigger gives its own, which take precedence over the job's (a RunRequest's and execute_in_process's tags).
UI_TAGS = {TRIGGER_TAG: "ui", RUN_NAME_TAG: "launched from the UI"}


def run_tags(trigger: str, name: str, *, month: str | None = None, scope: str | None = None) -> dict[str, str]:
    """The tags that name a run: trigger, name, and its month or scope (`all` for every scope in one run)."""
    tags = {TRIGGER_TAG: trigger, RUN_NAME_TAG: name}
    if month:
        tags[MONTH_TAG] = month
    if scope:
        tags[SCOPE_TAG] = scope
    return tags

scope_assets = dg.AssetSelection.groups(SCOPES_GROUP)
audit_assets = dg.AssetSelection.groups(AUDIT_GROUP)
verdict_assets = dg.AssetSelection.groups(VERDICTS_GROUP)
audit_selection = scope_assets | audit_assets


ALL_SCOPES = "all"  # the scope tag of a run over every scope (a partition range)


audit_scope = dg.define_asset_job(
    name="audit_scope",
    tags={**CROSS_SCOPE_TAGS, **UI_TAGS},
    selection=audit_selection,
    partitions_def=scope_partitions,
    description="Re-audit one scope (a country, or a shared file group): re-read its cited pages, rebuild its "
    "claims and priors, then the cross-scope audit tables and the report. Pick the scope as the partition.",
)

# A backfill of many scopes as separate runs, several at once (the PostgreSQL instance's queue): each run
# rebuilds its scope's values only. The cross-scope audit follows once, not once per run: runs that each
# rebuilt it side by side would replace each other's tables between a table step and its report step.
refresh_scopes = dg.define_asset_job(
    name="refresh_scopes",
    tags=UI_TAGS,
    selection=scope_assets,
    partitions_def=scope_partitions,
    description="Re-read one scope's cited pages and rebuild its claims, pages and priors, without the "
    "cross-scope audit: for a backfill of many scopes as separate runs. The audit follows once, by the "
    "audit_automation sensor or a refresh_audit run.",
)

audit_corpus = dg.define_asset_job(
    name="audit_corpus",
    tags={**CROSS_SCOPE_TAGS, **UI_TAGS},
    selection=audit_selection,
    partitions_def=scope_partitions,
    description="Audit every scope in one run (a partition range over all scopes), then the tables and the "
    "report: what the monthly schedule launches.",
)

refresh_audit = dg.define_asset_job(
    name="refresh_audit",
    tags={**CROSS_SCOPE_TAGS, **UI_TAGS},
    selection=audit_assets,
    description="Rebuild the cross-scope audit tables and the report from the scopes' stored values (after a "
    "scope was removed from the corpus).",
)

verify_scope = dg.define_asset_job(
    name="verify_scope",
    tags=UI_TAGS,
    selection=verdict_assets,
    partitions_def=scope_partitions,
    description="Ask the judge about one scope's claims (from its stored audit values), check every answer by "
    "code, then write the verdict report. Needs judge.provider set; with none it records why nothing was judged.",
)

audit_and_verify_corpus = dg.define_asset_job(
    name="audit_and_verify_corpus",
    tags={**CROSS_SCOPE_TAGS, **UI_TAGS},
    selection=audit_selection | verdict_assets,
    partitions_def=scope_partitions,
    description="audit_corpus, then the verdicts of every scope: what the monthly schedule launches when "
    "judge.on_schedule is true.",
)
