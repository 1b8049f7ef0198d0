"""The CLI's runs: the same jobs the UI launches (defs/jobs.py), executed in-process against the configured
Dagster instance, with the resources of the CLI's settings and clock.

A run is `dg.execute_job`, not `execute_in_process`: the latter keeps every step's output in memory until the
run ends (its result's captured outputs: 0.5 GB at 100k claims, and seconds to free at exit), while the steps
already hand their values on through the IO manager, on disk. execute_job rebuilds its job by a module-level
function (`cli_job`); the CLI's executor is in-process, so that happens only in this process, from a registry
of the jobs its runs execute."""

from __future__ import annotations

import logging
import re
import sys
from typing import TYPE_CHECKING, Any

import dagster as dg

from claims_pipeline.common.text_safety import terminal_escaped
from claims_pipeline.defs.dead_runs import process_tags, reap_dead_runs
from claims_pipeline.orchestration.stops import CLI_RUN_TAG, run_stoppable

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings

# The CLI prints its own summary; Dagster's per-event DEBUG lines would bury it (the UI keeps them all).
PARTITION_TAG = "dagster/partition"  # the run of one scope (execute_in_process's partition_key)
QUIET_RUN_CONFIG: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
# Failures the CLI says itself, one line each (run_failures): Dagster's console wrote each with its traceback
_SAID_BY_THE_CLI = {"STEP_FAILURE", "PIPELINE_FAILURE", "RUN_FAILURE", "PIPELINE_CANCELED", "RUN_CANCELED"}


class _OneLine(logging.Formatter):
    """A run's warning on the terminal: one line, '[warning] <step>: <message>', control and bidi characters
    written out (a message may quote a corpus file's name or a page)."""

    def format(self, record: logging.LogRecord) -> str:
        meta = getattr(record, "dagster_meta", None) or {}
        text = str(meta.get("orig_message") or record.getMessage())
        text = " / ".join(line.strip() for line in text.strip().splitlines() if line.strip())
        step = meta.get("step_key")
        return terminal_escaped(f"[{record.levelname.lower()}] {f'{step}: ' if step else ''}{text}")


def _not_said_by_the_cli(record: logging.LogRecord) -> bool:
    meta = getattr(record, "dagster_meta", None) or {}
    if getattr(meta.get("dagster_event"), "event_type_value", None) in _SAID_BY_THE_CLI:
        return False
    # the steps left out after a failure ('Dependencies for step X failed: [...]. Not executing.', a plain
    # error line of Dagster's executor) follow from the failure the CLI names
    message = str(meta.get("orig_message") or "")
    return not (message.startswith("Dependencies for step ") and message.endswith("Not executing."))


@dg.logger(config_schema={"log_level": dg.Field(str, is_required=False, default_value="WARNING")},
           description="The CLI's console: one escaped line per warning; failures are said by the command.")
def cli_console(init_context: dg.InitLoggerContext) -> logging.Logger:
    logger = logging.Logger("claims_pipeline.run", level=init_context.logger_config["log_level"].upper())
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    handler.addFilter(_not_said_by_the_cli)
    logger.addHandler(handler)
    return logger


def resources_for(settings: Settings, *, clock: str = "", fixture_web: bool = True) -> dict[str, Any]:
    """The resources of the settings' deployment, bound to the settings the command read (its runs do not read
    them again), and the clock: the sections of the settings go to the runs as a resource (RunSettings, held by
    the claims_config resource), never through a global."""
    from claims_pipeline.config.run_settings import RunSettings
    from claims_pipeline.defs.resources import resources_for_run

    return resources_for_run(RunSettings.given(settings, clock), fixture_web=fixture_web)


CLI_WORKLIST_JOB = "cli_worklist"


def definitions_with(resources: dict[str, Any], extra_jobs: list[Any] | None = None) -> dg.Definitions:
    """Every definition of the code location, bound to these resources instead of the deployment's."""
    from claims_pipeline.definitions import defs

    loaded = defs()
    return dg.Definitions(assets=loaded.assets, asset_checks=loaded.asset_checks, jobs=[*(loaded.jobs or []), *(extra_jobs or [])],
                          resources=resources, executor=dg.in_process_executor, loggers={"console": cli_console})


_JOBS: dict[str, dg.JobDefinition] = {}  # the job of each CLI run under way, by the run's token


def cli_job(token: str) -> dg.JobDefinition:
    """The job of the CLI run `token` (execute_job's reconstructor)."""
    return _JOBS[token]


def execute(instance: dg.DagsterInstance, job: dg.JobDefinition, token: str, *, tags: dict[str, str],
            run_config: dict[str, Any], asset_selection: list[dg.AssetKey] | None = None) -> dg.JobExecutionResult:
    """One run of `job` on the instance, found by its token (tag CLI_RUN_TAG); no output is kept in memory."""
    _JOBS[token] = job
    try:
        return dg.execute_job(dg.build_reconstructable_job(__name__, cli_job.__name__, reconstructable_args=(token,)),
                              instance=instance, run_config=run_config, tags={**tags, CLI_RUN_TAG: token},
                              asset_selection=asset_selection, raise_on_error=False)
    finally:
        del _JOBS[token]


def sync_scope_partitions(instance: dg.DagsterInstance, scopes: list[str]) -> None:
    """Same effect as the corpus sensor's partition requests, for in-process runs."""
    from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME

    existing = set(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    new = [s for s in scopes if s not in existing]
    if new:
        instance.add_dynamic_partitions(SCOPE_PARTITIONS_NAME, new)
    for gone in sorted(existing - set(scopes)):
        instance.delete_dynamic_partition(SCOPE_PARTITIONS_NAME, gone)


def run_audit(instance: dg.DagsterInstance, resources: dict[str, Any], all_scopes: list[str],
              scopes: list[str] | None = None, *, trigger: str = "cli", name: str = "") -> list[dg.JobExecutionResult]:
    """The whole corpus: one audit_corpus run over the partition range. Named scopes: audit_scope for each, the
    audit and report once, after the last one. Returns the run results (the last one carries the audit).
    trigger and name tag the runs (defs/jobs.run_tags): `cli`, or `demo` with the demo's step as the name."""
    from claims_pipeline.defs.jobs import scope_assets

    defs = definitions_with(resources)
    only_scope = list(scope_assets.resolve(defs.resolve_asset_graph()))
    job = "audit_corpus" if scopes is None else "audit_scope"
    return _run_by_scope(instance, defs, job, all_scopes, scopes, QUIET_RUN_CONFIG, only_scope,
                         (trigger, name or f"{trigger} audit"))


def run_verify(instance: dg.DagsterInstance, resources: dict[str, Any], all_scopes: list[str],
               scopes: list[str] | None = None, *, max_claims: int = 0, trigger: str = "cli",
               name: str = "") -> list[dg.JobExecutionResult]:
    """verify_scope over every scope in one run (a partition range), or scope by scope; the verdict report once,
    after the last."""
    run_config = {**QUIET_RUN_CONFIG, "ops": {"verdicts": {"config": {"max_claims": max_claims}}}}
    return _run_by_scope(instance, definitions_with(resources), "verify_scope", all_scopes, scopes, run_config,
                         [dg.AssetKey("verdicts")], (trigger, name or f"{trigger} verify"))


def _run_by_scope(instance: dg.DagsterInstance, defs: dg.Definitions, job_name: str, all_scopes: list[str],
                  scopes: list[str] | None, run_config: dict[str, Any],
                  per_scope_only: list[dg.AssetKey], named: tuple[str, str]) -> list[dg.JobExecutionResult]:
    """Every scope: one run of `job_name` over the partition range. Named scopes: a run each, with only the
    per-scope assets until the last, whose run adds the cross-scope ones; stops at the first failed run.
    `named`: (trigger, name) of the runs' tags; a run of one scope has the scope after its name."""
    from claims_pipeline.defs.jobs import ALL_SCOPES, run_tags
    from claims_pipeline.defs.partitions import range_tags

    trigger, name = named
    reap_dead_cli_runs(instance)
    sync_scope_partitions(instance, all_scopes)
    job = defs.resolve_job_def(job_name)
    if scopes is None:
        tags = {**range_tags(all_scopes), **run_tags(trigger, f"{name}: all scopes", scope=ALL_SCOPES),
                **process_tags()}
        return [run_stoppable(instance, lambda token: execute(instance, job, token, tags=tags, run_config=run_config))]
    results = []
    for i, scope in enumerate(scopes):
        selection = None if i == len(scopes) - 1 else per_scope_only

        def one_scope(token: str, scope: str = scope, selection: list[dg.AssetKey] | None = selection) -> dg.JobExecutionResult:
            return execute(instance, job, token, asset_selection=selection, run_config=run_config,
                           tags={**run_tags(trigger, f"{name}: {scope}", scope=scope), **process_tags(),
                                 PARTITION_TAG: scope})

        results.append(run_stoppable(instance, one_scope))
        if not results[-1].success:
            break
    return results


def run_worklist(instance: dg.DagsterInstance, resources: dict[str, Any], config: dict[str, Any]) -> dg.JobExecutionResult:
    # a job of the worklist asset alone, in the CLI's definitions: its run logs through cli_console too
    defs = definitions_with(resources, extra_jobs=[dg.define_asset_job(CLI_WORKLIST_JOB, selection=["worklist"])])
    job = defs.resolve_job_def(CLI_WORKLIST_JOB)
    reap_dead_cli_runs(instance)
    return run_stoppable(instance, lambda token: execute(
        instance, job, token, tags=process_tags(), run_config={**QUIET_RUN_CONFIG, "ops": {"worklist": {"config": config}}}))


def reap_dead_cli_runs(instance: dg.DagsterInstance) -> None:
    """Before a command's runs: the runs of an earlier command of this host that died mid-run (kill -9) are marked
    failed (defs/dead_runs.py), so that neither they nor the queue wait for them. Never stops the command."""
    try:
        reaped = reap_dead_runs(instance)
    except Exception as exc:  # the daemon's sensor reaps them too
        print(terminal_escaped(f"claims-pipeline: could not check for runs of a dead process: {exc}"), file=sys.stderr)
        return
    if reaped:
        print(f"claims-pipeline: marked failed {len(reaped)} run(s) whose process had ended without finishing them: "
              f"{', '.join(r[:8] for r in reaped)}", file=sys.stderr)


def run_failures(results: list[dg.JobExecutionResult]) -> list[str]:
    from claims_pipeline.defs.scope_state import FINDING_CHECKS

    out: list[str] = []
    for r in results:
        before = len(out)
        for ev in r.all_events:
            if ev.is_step_failure:
                err = ev.step_failure_data.error
                # an exception the step raised comes wrapped ('Error occurred while executing op ...'): the line
                # names its cause ('FileExistsError: [Errno 17] File exists: <home>/judge'), not the wrapper
                while err is not None and err.cause is not None and err.cls_name in _WRAPPERS:
                    err = err.cause
                # the error may quote a file name or a page: written out, as every line the CLI prints
                out.append(terminal_escaped(f"{ev.step_key}: {_one_line(err.message, ev.step_key) if err else 'failed'}"))
        for c in r.get_asset_check_evaluations():
            if not c.passed and c.severity == dg.AssetCheckSeverity.ERROR and c.check_name not in FINDING_CHECKS:
                out.append(f"check {c.check_name} failed")
        if not r.success and len(out) == before:  # failed, and no step or check says why
            said = [ev.message or "" for ev in r.all_events if ev.event_type_value in _SAID_BY_THE_CLI]
            out.append(terminal_escaped(f"run failed: {(said[-1].strip().splitlines() or ['no reason given'])[0]}"
                                        if said else "run failed"))
    return out


def notification_summary(results: list[dg.JobExecutionResult], asset: str) -> str | None:
    """The one line a notification asset (defs/notify.py) recorded of what it sent, from the runs' events."""
    for r in results:
        for event in r.get_asset_materialization_events():
            mat = event.materialization
            if mat.asset_key.to_user_string() == asset and "summary" in mat.metadata:
                return str(mat.metadata["summary"].value)
    return None


# Dagster's wrappers of what a step's own code raised: the line names the cause inside
_WRAPPERS = {"DagsterExecutionStepExecutionError", "DagsterExecutionLoadInputError", "DagsterExecutionHandleOutputError"}


def _one_line(message: str, step: str | None = None) -> str:
    """The line that says what happened: an exception's message is its last line ('FileExistsError: …'), but
    SQLAlchemy's ends in '(Background on this error at: …)' after the driver's words, which come first; then
    the line names the database the step uses and what to check."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if any(line.startswith("(Background on this error at:") for line in lines):
        lines = [line for line in lines if not line.startswith(("(Background on this error", "[SQL:", "[parameters:"))]
        said = re.sub(r"^sqlalchemy\.exc\.\w+: ", "", lines[0]) if lines else "failed"
        which = ("the judge's answer cache (<home>/judge/verdicts.sqlite)" if step and step.startswith("verdict")
                 else "the page cache index (cache.db_url, by default <home>/cache/index.sqlite)")
        if "malformed" in said or "not a database" in said:
            return (f"database error in {which}: {said}; check it with `python -m claims_pipeline.store.consistency`, "
                    "or move the damaged file aside (it is rebuilt: pages fetched again, answers asked again)")
        return f"database error in {which}: {said}"
    # 'claims_pipeline.defs.storage.StoredValueDamaged: …' reads as 'StoredValueDamaged: …'
    return re.sub(r"^(?:\w+\.)+(?=\w+: )", "", lines[-1]) if lines else "failed"

