"""The Dagster instance the CLI and `make dev` share.

DAGSTER_HOME: used when set; otherwise <settings.home_dir>/dagster, a persistent folder, so run history
survives and the UI started with the same DAGSTER_HOME shows the CLI's runs. A new folder gets the template
shipped beside this module (one run at a time, the batching event log): an installed wheel gets the same
instance as a checkout.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg

from claims_pipeline.home import HomeLayout
from claims_pipeline.settings import Settings

INSTANCE_TEMPLATE = Path(__file__).resolve().parent / "dagster.yaml"


def dagster_home_for(settings: Settings) -> Path:
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).expanduser() if env else HomeLayout(settings.home_dir).dagster_home


def prepare_dagster_home(settings: Settings) -> Path:
    """The instance folder, with dagster.yaml from the template when it has none (a user's own file is kept)."""
    home = dagster_home_for(settings)
    home.mkdir(parents=True, exist_ok=True)
    yaml_path = home / "dagster.yaml"
    if not yaml_path.exists():
        shutil.copyfile(INSTANCE_TEMPLATE, yaml_path)
    return home


def open_instance(settings: Settings) -> dg.DagsterInstance:
    os.environ["DAGSTER_HOME"] = str(prepare_dagster_home(settings))
    return dg.DagsterInstance.get()


def ui_dagster_home() -> Path:
    """The folder `make dev` gives the UI as DAGSTER_HOME: the CLI's instance, so the UI's runs queue one at a
    time and share the CLI's run history. The settings come from the same default chain as the CLI's."""
    from claims_pipeline.settings import find_config_file, load_settings

    return prepare_dagster_home(load_settings(find_config_file(None)))


if __name__ == "__main__":
    import sys

    from claims_pipeline.settings import ConfigError

    try:
        print(ui_dagster_home())
    except ConfigError as exc:  # make dev stops here instead of starting a UI on a throwaway instance
        print(f"claims-pipeline: config error:\n{exc}", file=sys.stderr)
        sys.exit(2)
