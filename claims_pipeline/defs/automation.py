"""The monthly audit schedule, the corpus sensor (partition sync + runs for changed scopes) and the automation
condition sensor that runs the audit assets after per-scope runs."""


import json

import dagster as dg

from claims_pipeline.defs.corpus_files import combined_hash, scope_file_hashes
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME, range_tags, scope_partitions
from claims_pipeline.defs.resources import ClaimsConfig

SCOPE_ASSET_NAMES = ["corpus_documents", "claims", "citation_lint", "fetched_pages", "page_changes", "priors"]
AUDIT_ASSET_NAMES = ["audit_tables", "audit_report"]

scope_assets_selection = dg.AssetSelection.assets(*SCOPE_ASSET_NAMES)
audit_selection = dg.AssetSelection.assets(*AUDIT_ASSET_NAMES)
monthly_selection = scope_assets_selection | audit_selection


def whole_corpus_request(instance: dg.DagsterInstance, run_key: str | None) -> dg.RunRequest | dg.SkipReason:
    """One run over every scope (a partition range: the per-scope assets run once for all of them, see
    partitions.single_run_backfill), then the cross-scope audit and report in the same run."""
    keys = list(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    if not keys:
        return dg.SkipReason("no scopes yet: the corpus sensor adds one partition per scope folder")
    return dg.RunRequest(run_key=run_key, asset_selection=[dg.AssetKey(n) for n in SCOPE_ASSET_NAMES + AUDIT_ASSET_NAMES], tags=range_tags(keys))


@dg.schedule(
    name="monthly_audit",
    cron_schedule="0 6 1 * *",  # 06:00 UTC on the 1st of every month
    execution_timezone="UTC",
    target=monthly_selection,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-reads every cited page of every scope, then writes the audit and its report.",
)
def monthly_audit_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    when = context.scheduled_execution_time
    key = f"monthly-{when:%Y-%m}" if when else None
    return whole_corpus_request(context.instance, key)


def stored_scope_hash(home, scope: str) -> str | None:
    """The file hash that the last materialization of `corpus_documents` stored for this scope, if any."""
    from claims_pipeline.defs.storage import scope_file

    path = scope_file(home, dg.AssetKey("corpus_documents"), scope)
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("hash")
    except (OSError, ValueError, AttributeError):
        return None


def current_scope_hashes(config: ClaimsConfig) -> dict[str, str]:
    from claims_pipeline.corpus.extract import list_scopes

    settings = config.load()
    return {s: combined_hash(scope_file_hashes(files, settings.corpus_dir)) for s, files in list_scopes(settings).items()}


@dg.sensor(
    name="corpus_sensor",
    minimum_interval_seconds=60,
    target=monthly_selection,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Keeps one partition per corpus scope, and requests a run for each scope whose files changed "
    "(cursor = per-scope file hashes). The audit then follows by its automation condition; when scopes are "
    "removed, the sensor requests the audit itself (removing a partition triggers no automation).",
)
def corpus_sensor(context: dg.SensorEvaluationContext, claims_config: ClaimsConfig) -> dg.SensorResult:
    current = current_scope_hashes(claims_config)
    seen, tick = _read_cursor(context.cursor)
    existing = set(context.instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    added = sorted(set(current) - existing)
    removed = sorted(existing - set(current))
    home = claims_config.load().home_dir
    # A scope is due when its files differ from what the sensor last saw AND from what was last materialized
    # (so starting the UI after a CLI audit does not re-fetch scopes that are already up to date).
    changed = sorted(s for s, h in current.items() if seen.get(s) != h and stored_scope_hash(home, s) != h)
    requests = [
        # the tick number keeps the key unique when a scope's files go back to an earlier state (an edit
        # reverted): with the hash alone Dagster skipped that run as already done, and the stored claims kept
        # the edited text
        dg.RunRequest(run_key=f"{s}:{current[s]}:{tick}", partition_key=s, asset_selection=[dg.AssetKey(n) for n in SCOPE_ASSET_NAMES])
        for s in changed
    ]
    if removed:  # the audit and report without them
        requests.append(dg.RunRequest(run_key=f"removed:{','.join(removed)}:{tick}",
                                      asset_selection=[dg.AssetKey(n) for n in AUDIT_ASSET_NAMES]))
    partition_requests = []
    if added:
        partition_requests.append(scope_partitions.build_add_request(added))
    if removed:
        partition_requests.append(scope_partitions.build_delete_request(removed))
    if changed or added or removed:
        context.log.info(f"scopes added {added}, removed {removed}, changed {changed}")
    cursor = json.dumps({"scopes": current, "tick": tick + 1}, sort_keys=True)
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=cursor)


def _read_cursor(cursor: str | None) -> tuple[dict[str, str], int]:
    """(per-scope file hashes last seen, tick number). An older cursor was the hashes alone."""
    data = json.loads(cursor) if cursor else {}
    if isinstance(data.get("scopes"), dict):
        return data["scopes"], int(data.get("tick", 0))
    return data, 0


# Dagster only evaluates AutomationCondition.eager() on the audit assets through an automation condition sensor;
# the implicit `default_automation_condition_sensor` starts STOPPED, so after the corpus sensor's per-scope
# runs nothing would follow in a fresh `dagster dev`. This one starts RUNNING.
audit_automation_sensor = dg.AutomationConditionSensorDefinition(
    name="audit_automation",
    target=audit_selection,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Evaluates the audit assets' automation conditions (eager): after per-scope runs update the "
    "scopes, one run rebuilds audit_tables and audit_report.",
)
