"""When audits run by themselves: the monthly schedules (the audit, or the audit and the verdicts, as
judge.on_schedule says when they tick), the corpus sensor (one partition per scope, and a re-audit of each scope
whose files changed), and the sensor that evaluates the audit's automation conditions. The settings are read
when a schedule or a sensor ticks, through the claims_config resource, never when this module is imported."""


import json

import dagster as dg

from claims_pipeline.defs import jobs
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME, range_tags, scope_partitions
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.steps.corpus import current_scope_hashes, stored_scope_hashes


def whole_corpus_request(instance: dg.DagsterInstance, run_key: str | None, month: str | None = None) -> dg.RunRequest | dg.SkipReason:
    """One run over every scope (a partition range: the per-scope assets run once for all of them, see
    partitions.single_run_backfill), then the cross-scope audit and report in the same run."""
    keys = list(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    if not keys:
        return dg.SkipReason("no scopes yet: the corpus sensor adds one partition per scope folder")
    name = f"monthly audit {month}" if month else "monthly audit"
    return dg.RunRequest(run_key=run_key, tags={**range_tags(keys), **jobs.run_tags("schedule", name, month=month,
                                                                                      scope=jobs.ALL_SCOPES)})


def monthly_request(context: dg.ScheduleEvaluationContext, claims_config: ClaimsConfig,
                    with_verdicts: bool) -> dg.RunRequest | dg.SkipReason:
    """The monthly run of one of the two schedules: the one judge.on_schedule chooses, read when the schedule
    ticks (nothing reads the settings when the definitions load); the other skips and says why."""
    if claims_config.judge.on_schedule != with_verdicts:
        runs = "monthly_audit_and_verify" if not with_verdicts else "monthly_audit"
        return dg.SkipReason(f"judge.on_schedule is {str(not with_verdicts).lower()}: {runs} runs this month's audit")
    when = context.scheduled_execution_time
    return whole_corpus_request(context.instance, f"monthly-{when:%Y-%m}" if when else None,
                                f"{when:%Y-%m}" if when else None)


MONTHLY = "0 6 1 * *"  # 06:00 UTC on the 1st of every month


@dg.schedule(
    name="monthly_audit",
    cron_schedule=MONTHLY,
    execution_timezone="UTC",
    job=jobs.audit_corpus,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-reads every cited page of every scope, then writes the audit and its report (with "
    "judge.on_schedule false, the default).",
)
def monthly_audit_schedule(context: dg.ScheduleEvaluationContext, claims_config: ClaimsConfig) -> dg.RunRequest | dg.SkipReason:
    return monthly_request(context, claims_config, with_verdicts=False)


@dg.schedule(
    name="monthly_audit_and_verify",
    cron_schedule=MONTHLY,
    execution_timezone="UTC",
    job=jobs.audit_and_verify_corpus,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="The monthly audit, then the verdicts of every scope (with judge.on_schedule true: they cost money).",
)
def monthly_audit_and_verify_schedule(context: dg.ScheduleEvaluationContext,
                                      claims_config: ClaimsConfig) -> dg.RunRequest | dg.SkipReason:
    return monthly_request(context, claims_config, with_verdicts=True)


# Past this many scopes due in one tick, and when they are most of the corpus (a new deployment, a corpus moved or
# reformatted), one audit_corpus run replaces a run per scope: each audit_scope run ends with the cross-scope audit
# and a report, so a run per scope would queue as many runs and write as many reports (benchmarks/bench_scopes_1000.py).
MANY_DUE = 20


def many_due(due: int, scopes: int) -> bool:
    return due > MANY_DUE and 2 * due > scopes


@dg.sensor(
    name="corpus_sensor",
    minimum_interval_seconds=60,
    jobs=[jobs.audit_scope, jobs.refresh_audit, jobs.audit_corpus],
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Keeps one partition per corpus scope, and runs audit_scope for each scope whose files changed "
    "(cursor = per-scope file hashes), or one audit_corpus run when most scopes are due at once (a new "
    "deployment); when scopes are removed, it re-runs the audit and report without them.",
)
def corpus_sensor(context: dg.SensorEvaluationContext, claims_config: ClaimsConfig) -> dg.SensorResult:
    seen, tick, said = _read_cursor(context.cursor)
    if said != claims_config.said:  # the daemon's log names the settings when they change, not every tick
        context.log.info(claims_config.said)
    current = current_scope_hashes(claims_config.corpus)
    existing = list(context.instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))  # in partition order
    added = sorted(set(current) - set(existing))
    removed = sorted(set(existing) - set(current))
    home = claims_config.home_dir
    # A scope is due when its files differ from what the sensor last saw AND from what was last materialized
    # (so starting the UI after a CLI audit does not re-fetch scopes that are already up to date).
    unseen = [s for s, h in current.items() if seen.get(s) != h]
    stored = stored_scope_hashes(home, unseen)
    changed = sorted(s for s in unseen if stored.get(s) != current[s])
    if many_due(len(changed), len(current)):
        # one run over every scope (the partitions as they will be once this tick's requests are applied), which
        # also rebuilds the audit without any removed scope
        keys = [k for k in existing if k not in removed] + added
        requests = [dg.RunRequest(run_key=f"corpus:{tick}", job_name=jobs.audit_corpus.name, tags={
            **range_tags(keys), **jobs.run_tags("sensor", f"corpus changed: {len(changed)} scopes", scope=jobs.ALL_SCOPES)})]
    else:
        requests = [
            # the tick number keeps the key unique when a scope's files go back to an earlier state (an edit
            # reverted): with the hash alone Dagster skipped that run as already done, and the stored claims kept
            # the edited text
            dg.RunRequest(run_key=f"{s}:{current[s]}:{tick}", partition_key=s, job_name=jobs.audit_scope.name,
                          tags=jobs.run_tags("sensor", f"corpus changed: {s}", scope=s))
            for s in changed
        ]
        if removed:  # the audit and report without them
            requests.append(dg.RunRequest(run_key=f"removed:{','.join(removed)}:{tick}", job_name=jobs.refresh_audit.name,
                                          tags=jobs.run_tags("sensor", f"scopes removed: {len(removed)}")))
    partition_requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    if added:
        partition_requests.append(scope_partitions.build_add_request(added))
    if removed:
        partition_requests.append(scope_partitions.build_delete_request(removed))
    if changed or added or removed:
        context.log.info(f"scopes added: {', '.join(added) or 'none'}; removed: {', '.join(removed) or 'none'}; "
                         f"changed: {', '.join(changed) or 'none'}")
    cursor = json.dumps({"scopes": current, "tick": tick + 1, "settings": claims_config.said}, sort_keys=True)
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=cursor)


def _read_cursor(cursor: str | None) -> tuple[dict[str, str], int, str]:
    """(per-scope file hashes last seen, tick number, the settings line last logged); none before the first tick."""
    data = json.loads(cursor) if cursor else {}
    return data.get("scopes", {}), int(data.get("tick", 0)), str(data.get("settings", ""))


# Dagster only evaluates AutomationCondition.eager() on the audit assets through an automation condition sensor;
# the implicit `default_automation_condition_sensor` starts STOPPED. This one starts RUNNING.
audit_automation_sensor = dg.AutomationConditionSensorDefinition(
    name="audit_automation",
    target=jobs.audit_assets,
    default_status=dg.DefaultSensorStatus.RUNNING,
    run_tags=jobs.run_tags("automation", "audit after refreshed scopes", scope=jobs.ALL_SCOPES),
    minimum_interval_seconds=30,
    description="Evaluates the audit assets' automation conditions (eager): when scopes were refreshed "
    "outside audit_scope, one run rebuilds audit_tables and audit_report.",
)
