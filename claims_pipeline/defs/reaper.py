"""The sensor that ends the runs of a dead `claims-pipeline` command (defs/dead_runs.py): such a run stays
STARTED for ever and, through its tags, holds every queued audit back; and of the run workers of the default run
launcher, whose health Dagster's run monitoring (on in the shipped instance) cannot ask about. It runs in the code
server, the process that starts those run workers: their pids mean something here."""

import dagster as dg

from claims_pipeline.defs.dead_runs import reap_dead_runs


@dg.sensor(name="reap_dead_runs", minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Marks failed the runs whose process is gone (killed, or the machine restarted): a "
           "claims-pipeline command's, and the run workers the code server started, so that the queued runs their "
           "tags held back can start.")
def reap_dead_runs_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    reaped = reap_dead_runs(context.instance, run_workers=True)
    if reaped:
        context.log.warning(f"marked failed: {', '.join(reaped)} (their process had ended without finishing them)")
        return dg.SkipReason(f"marked failed {len(reaped)} run(s) of a dead process: {', '.join(reaped)}")
    return dg.SkipReason("no unfinished run of a dead process")
