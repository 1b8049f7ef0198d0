"""One process per run: the steps are I/O-bound and run one after another per scope, so a process per step
would only add Python start-ups (benchmarks/bench_audit.py)."""

import dagster as dg


@dg.definitions
def executor() -> dg.Definitions:
    return dg.Definitions(executor=dg.in_process_executor)
