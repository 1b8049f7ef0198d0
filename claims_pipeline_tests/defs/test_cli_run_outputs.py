"""The CLI's run keeps no step's output in memory (issue 32): the steps hand their values on through the IO manager
(on disk), and a run's result does not hold them to its end, as execute_in_process's captured outputs did (0.5 GB
at 100k claims). A real run of the CLI's runner on the demo corpus against the fixture web and a real instance."""

from __future__ import annotations

import gc

from claims_pipeline.config.settings import load_settings
from claims_pipeline.orchestration.runner import resources_for, run_audit
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import ScopePriors

SCOPES = ["xa", "xb", "xc", "shared/exit/regional"]


def _step_values() -> dict[int, str]:
    gc.collect()
    return {id(o): type(o).__name__ for o in gc.get_objects() if isinstance(o, ScopeClaims | ScopePages | ScopePriors)}


def test_no_step_output_outlives_its_step_in_a_cli_run(instance, demo_config, web):
    before = _step_values()  # what earlier tests in this process may still hold is not this run's
    results = run_audit(instance, resources_for(load_settings(demo_config)), SCOPES)
    assert [r.success for r in results] == [True]
    assert {e.step_key for e in results[-1].all_events if e.is_successful_output} >= {"claims", "priors", "audit_tables"}
    alive = [name for key, name in _step_values().items() if key not in before]
    assert alive == []  # held by the result (execute_in_process's output capture): every scope's claims, pages, priors
