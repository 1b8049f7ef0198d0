"""Fixtures for the Dagster layer: a real fixture web on 127.0.0.1, a temp home, a real (temp) instance."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.definitions import defs as load_definitions
from claims_pipeline.defs.resources import resources_for_file
from claims_pipeline_demo.fixture_web.server import FixtureWeb

warnings.filterwarnings("ignore", category=dg.BetaWarning)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("filterwarnings", "ignore::dagster.BetaWarning")


# every asset and check of the code location, as the tests materialize them with their own resources
_DEFINITIONS = load_definitions()
ALL_ASSETS: list[Any] = list(_DEFINITIONS.assets or [])
ALL_CHECKS: list[Any] = list(_DEFINITIONS.asset_checks or [])

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@pytest.fixture
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def demo_config(home: Path, web: FixtureWeb) -> Path:
    """The demo settings (bundled corpus) routed to this test's fixture web, outputs under a temp home."""
    return write_runtime_config(home, f"127.0.0.1:{web.port}")


def config_with(config: Path, **updates: Any) -> Path:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    for dotted, value in updates.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return config


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as inst:
        yield inst


def resources_for(config: Path, clock: str = "") -> dict[str, Any]:
    """The local deployment's resources, their runs reading `config` (routed to this test's fixture web)."""
    return resources_for_file(str(config), "local", clock=clock)


def another_audit_lands_during_the_checks(monkeypatch: pytest.MonkeyPatch, run_at: str,
                                          also: Any = None) -> None:
    """Each read of the audit tables by a check also replaces them with another audit's (run at `run_at`), as a
    second audit of the same home would between this run's tables and its report; `also(home_dir)` runs after."""
    import claims_pipeline.defs.audit.checks as checks_mod
    from claims_pipeline.steps.audit.tables import load_audit, tables_dir, write_tables

    real = checks_mod.read_audit

    def read_then_replace(home_dir: Path) -> Any:
        audit = real(home_dir)
        foreign = load_audit(tables_dir(home_dir))
        foreign.run_at = run_at
        write_tables(foreign.to_tables(), tables_dir(home_dir))
        if also is not None:
            also(home_dir)
        return audit

    monkeypatch.setattr(checks_mod, "read_audit", read_then_replace)
