"""Notifications (claims_pipeline/notify): a message after each audit report and each verdict report, and one
when a run fails. Off until the settings name a channel (notify.urls). A message that cannot be sent never fails
the run: the step records it (metadata, a warning in the log) and the news goes with the next message."""

from typing import Any

import dagster as dg

from claims_pipeline.defs.audit.assets import audit_report
from claims_pipeline.defs.groups import AUDIT_GROUP, VERDICTS_GROUP
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.defs.verdicts.assets import verdict_report
from claims_pipeline.notify import Outcome


def notification_metadata(outcome: Outcome) -> dict[str, Any]:
    """What the step did, per channel (named by position and service, never by URL), and the message sent."""
    meta: dict[str, Any] = {"status": outcome.status, "summary": outcome.line()}
    if outcome.channels:
        meta["channels"] = dg.MetadataValue.json(
            {c.label: {"status": c.status, "new": c.new, **({"error": c.error} if c.error else {})}
             for c in outcome.channels})
    if outcome.new_by_kind or outcome.status not in ("off", "no report"):
        meta["new_by_kind"] = dg.MetadataValue.json(outcome.new_by_kind)
    if outcome.body:
        meta["message"] = dg.MetadataValue.text(f"{outcome.title}\n\n{outcome.body}")  # plain text: never rendered
    return meta


def _notify(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.MaterializeResult[None]:
    from claims_pipeline.notify import notify_audit

    outcome = notify_audit(claims_config.notify, claims_config.home_dir, now=claims_config.now(),
                           reach=claims_config.reach)
    (context.log.warning if outcome.status in ("failed", "partly sent") else context.log.info)(outcome.line())
    return dg.MaterializeResult(metadata=notification_metadata(outcome))


# eager, as audit_report: a report written by a run that did not include this step (the automation sensor's) is
# notified too
@dg.asset(group_name=AUDIT_GROUP, code_version="1", kinds={"python"}, deps=[audit_report],
          automation_condition=dg.AutomationCondition.eager())
def audit_notification(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.MaterializeResult[None]:
    """Tells the channels of notify.urls what the new report shows that they were not told yet (stale_changed
    claims, figures no longer on their page, pages that became unreadable, MISMATCH/STALE verdicts), with the
    headline numbers and where the report is. Off when no channel is set; a failed send is recorded here and
    retried with the next message, never failing the run."""
    return _notify(context, claims_config)


@dg.asset(group_name=VERDICTS_GROUP, code_version="1", kinds={"python"}, deps=[verdict_report])
def verdict_notification(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.MaterializeResult[None]:
    """As audit_notification, after the verdict report: the verdicts that became MISMATCH or STALE."""
    return _notify(context, claims_config)


@dg.run_failure_sensor(name="notify_run_failure", default_status=dg.DefaultSensorStatus.RUNNING,
                       description="Tells the channels of notify.urls that a run failed (its job, run id and first "
                       "error); nothing when no channel is set or notify.on_run_failure is false.")
def notify_run_failure(context: dg.RunFailureSensorContext, claims_config: ClaimsConfig) -> None:
    from claims_pipeline.notify import notify_failure

    if not claims_config.notify.configured:
        return
    run = context.dagster_run
    steps = [f"{ev.step_key}: {_cause(ev.step_failure_data.error)}" for ev in context.get_step_failure_events()]
    error = steps[0] if steps else (context.failure_event.message or "")
    outcome = notify_failure(claims_config.notify, claims_config.home_dir, job=run.job_name, run_id=run.run_id, error=error,
                             reach=claims_config.reach)
    context.log.info(outcome.line())


def _cause(error: Any) -> str:
    """The last line of what a step raised, not Dagster's wrapper around it (as the CLI says it)."""
    while error is not None and error.cause is not None and error.cls_name == "DagsterExecutionStepExecutionError":
        error = error.cause
    lines = (error.message or "").strip().splitlines() if error is not None else []
    return lines[-1] if lines else "failed"
