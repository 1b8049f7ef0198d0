"""The worklist asset as a run from the UI starts it: a missing corpus or an unmatched scope fails the run with
one clear message, and the last worklist is left as it was (not overwritten with 0 items)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from claims_pipeline_tests.defs.conftest import ALL_ASSETS, QUIET, config_with, resources_for


def _materialize_worklist(instance, config: Path, **worklist_config) -> dg.ExecuteInProcessResult:
    return dg.materialize(ALL_ASSETS, instance=instance, resources=resources_for(config), selection=["worklist"],
                          run_config={**QUIET, "ops": {"worklist": {"config": worklist_config}}}, raise_on_error=False)


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    [failure] = [ev for ev in result.all_events if ev.is_step_failure]
    return failure.event_specific_data.error.message


@pytest.mark.parametrize("case", ["missing corpus", "unmatched scope"])
def test_worklist_run_fails_clearly_and_keeps_the_last_worklist(case, instance, demo_config, home, tmp_path):
    out = home / "worklist.json"
    out.write_text('{"items": ["previous"]}', encoding="utf-8")
    if case == "missing corpus":
        missing = tmp_path / "nonexistent"
        config = config_with(demo_config, extraction__corpus_dir=str(missing))
        result = _materialize_worklist(instance, config, out=str(out))
        expected = f"corpus directory not found: {missing} (extraction.corpus_dir in {config})"
    else:
        result = _materialize_worklist(instance, demo_config, out=str(out), scope="zz")
        expected = "no scope matches --scope 'zz' (scopes: xa, xb, xc, shared/exit/regional)"
    assert not result.success
    assert expected in _failure_message(result)
    assert out.read_text(encoding="utf-8") == '{"items": ["previous"]}'
