"""The sensor that ends the runs of a dead `claims-pipeline` command (orchestration/reaper.py): such a run stays
STARTED for ever and, through its tags, holds every queued audit back. Dagster's run monitoring (on in the
shipped instance) covers the runs the daemon launched; the CLI's runs have no run worker for it to ask about."""

import dagster as dg

from claims_pipeline.orchestration.reaper import reap_dead_runs


@dg.sensor(name="reap_dead_runs", minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Marks failed the runs a claims-pipeline command of this host started whose process is gone "
           "(killed, or the machine restarted), so that the queued runs their tags held back can start.")
def reap_dead_runs_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    reaped = reap_dead_runs(context.instance)
    if reaped:
        context.log.warning(f"marked failed: {', '.join(reaped)} (their process had ended without finishing them)")
        return dg.SkipReason(f"marked failed {len(reaped)} run(s) of a dead process: {', '.join(reaped)}")
    return dg.SkipReason("no unfinished run of a dead process")
