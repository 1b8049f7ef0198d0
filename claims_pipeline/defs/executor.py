"""How a run's steps execute, chosen by run config; in-process unless a run asks otherwise.

Default, in one process: the steps are I/O-bound and run one after another per scope, so a process per step
would only add Python start-ups (benchmarks/bench_audit.py). A run can instead send each step to Celery
workers (dagster-celery, maintained with Dagster) through a broker such as Redis:

    execution:
      config:
        celery:
          broker: redis://127.0.0.1:6379/0
          backend: redis://127.0.0.1:6379/1

The workers must load this code location (claims_pipeline.definitions) with the same $CLAIMS_PIPELINE_CONFIG,
and reach the same Dagster instance and home (docs/deploy-distributed.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg
from dagster_celery import celery_executor

# name in run config -> Dagster's own executor; the first is the default
EXECUTORS: dict[str, dg.ExecutorDefinition] = {"in_process": dg.in_process_executor, "celery": celery_executor}


def _requirements(config: Mapping[str, Any]) -> Sequence[dg.ExecutorRequirement]:
    # only the chosen executor's: celery needs a reconstructable job and a persistent instance, in-process nothing
    ((name, sub),) = config.items()
    return EXECUTORS[name].get_requirements(sub)


@dg.executor(
    name="in_process_or_celery",
    config_schema=dg.Field(
        dg.Selector({name: e.config_schema.as_field() for name, e in EXECUTORS.items()}),  # type: ignore[no-untyped-call]  # Dagster's Selector.__init__ is unannotated
        default_value={"in_process": {}},
        description="in_process (the default), or celery: the steps go to Celery workers through the broker.",
    ),
    requirements=_requirements,
)
def in_process_or_celery(init_context: dg.InitExecutorContext) -> dg.Executor:
    ((name, sub),) = init_context.executor_config.items()
    assert isinstance(sub, Mapping)  # the selector's branch: that executor's own (processed) config
    chosen = EXECUTORS[name]
    create = chosen.executor_creation_fn
    assert create is not None  # both are built with @dg.executor
    return create(dg.InitExecutorContext(job=init_context.job, executor_def=chosen, executor_config=sub,
                                         instance=init_context.instance))


@dg.definitions
def executor() -> dg.Definitions:
    return dg.Definitions(executor=in_process_or_celery)
