"""The Dagster instance the CLI and `make dev` share.

DAGSTER_HOME: used when set; otherwise <settings.home_dir>/dagster, a persistent folder, so run history
survives and the UI started with the same DAGSTER_HOME shows the CLI's runs. A new folder gets a template
shipped beside this module, so an installed wheel gets the same instance as a checkout. Which template:
CLAIMS_PIPELINE_INSTANCE, `sqlite` (default: SQLite files under DAGSTER_HOME, up to four runs at once, the
batching event log) or `postgres` (dagster-postgres, connection from the PG* variables, several runs at once;
docs/deploy-postgres.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import ConfigError
from claims_pipeline.orchestration.event_log_storage import show_automation_on
from claims_pipeline.store.errors import InstanceError

INSTANCE_ENV = "CLAIMS_PIPELINE_INSTANCE"
_HERE = Path(__file__).resolve().parent
INSTANCE_TEMPLATES = {"sqlite": _HERE / "dagster.yaml", "postgres": _HERE / "dagster-postgres.yaml"}


def instance_kind() -> str:
    """The instance CLAIMS_PIPELINE_INSTANCE names: sqlite (unset or empty) or postgres."""
    kind = os.environ.get(INSTANCE_ENV, "").strip().lower() or "sqlite"
    if kind not in INSTANCE_TEMPLATES:
        raise ConfigError(f"{INSTANCE_ENV}={kind!r}: expected one of {', '.join(sorted(INSTANCE_TEMPLATES))}")
    return kind


def instance_template() -> Path:
    return INSTANCE_TEMPLATES[instance_kind()]


def dagster_home_for(home_dir: Path) -> Path:
    """The instance folder of the outputs root home_dir (settings.home_dir): DAGSTER_HOME when set."""
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).expanduser() if env else HomeLayout(home_dir).dagster_home


def prepare_dagster_home(home_dir: Path) -> Path:
    """The instance folder, with dagster.yaml from the chosen template when it has none. A file that is an
    unedited copy of the other shipped template (the switch changed: the SQLite history under DAGSTER_HOME stays,
    for a switch back) is replaced; a user's own file is kept as it is."""
    home = dagster_home_for(home_dir)
    home.mkdir(parents=True, exist_ok=True)
    yaml_path = home / "dagster.yaml"
    template = instance_template()
    if not yaml_path.exists() or _is_other_template(yaml_path, template):
        shutil.copyfile(template, yaml_path)
    return home


def _is_other_template(path: Path, chosen: Path) -> bool:
    current = path.read_bytes()
    return any(t != chosen and current == t.read_bytes() for t in INSTANCE_TEMPLATES.values())


def open_instance(home_dir: Path) -> dg.DagsterInstance:
    """The instance under DAGSTER_HOME, its database reached once. InstanceError (one line: which file or
    database, what to check) when its dagster.yaml cannot be read or its database does not answer."""
    home = prepare_dagster_home(home_dir)
    os.environ["DAGSTER_HOME"] = str(home)
    yaml_path = home / "dagster.yaml"
    try:
        instance = dg.DagsterInstance.get()
    except Exception as exc:
        if _from_database(exc):
            raise InstanceError(_database_message(yaml_path, exc)) from None
        raise InstanceError(f"{yaml_path}: the Dagster instance file cannot be used ({_first_line(exc)}); fix it, "
                            "or delete it to get the default one back (the run history under "
                            f"{home} stays)") from None
    try:
        instance.get_runs(limit=1)  # the run storage answers now, not halfway through the command
    except Exception as exc:
        if not _from_database(exc):
            raise
        raise InstanceError(_database_message(yaml_path, exc)) from None
    show_automation_on(instance)
    return instance


def _first_line(exc: BaseException) -> str:
    from claims_pipeline.store.errors import database_problem

    return database_problem(exc)


def _from_database(exc: BaseException) -> bool:
    return any(type(e).__module__.split(".")[0] in ("sqlalchemy", "psycopg2", "psycopg", "sqlite3")
               for e in (exc, exc.__cause__, exc.__context__) if e is not None)


def _database_message(yaml_path: Path, exc: BaseException) -> str:
    from claims_pipeline.store.errors import unreachable

    problem = _first_line(exc)
    if unreachable(problem):
        return (f"the Dagster instance's database does not answer ({problem}); it is named in {yaml_path} "
                "(storage: postgres reads the PG* variables: PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE): "
                "check that the server runs and accepts connections from here")
    return (f"the Dagster instance's database under {yaml_path.parent} cannot be used ({problem}); check the "
            f"database {yaml_path} names, or move a damaged SQLite file aside (the run history starts afresh)")



def ui_dagster_home() -> Path:
    """The folder `make dev` gives the UI as DAGSTER_HOME: the CLI's instance, so the UI's runs queue as the
    instance says and share the CLI's run history. The settings come from the same default chain and deployment
    as the CLI's (in the demo deployment: the demo's). In production, settings lacking what that deployment
    requires stop it here (DeploymentNotReady), rather than open a UI whose every run would fail."""
    from claims_pipeline.config.deployments import check_deployment
    from claims_pipeline.config.settings import load_settings

    settings = load_settings()
    check_deployment(settings)
    home = prepare_dagster_home(settings.home_dir)
    os.environ["DAGSTER_HOME"] = str(home)  # the instance's event log storage finds its folder through it
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            show_automation_on(instance)
    except Exception:  # a badge only: `make dev` starts the UI all the same
        pass
    return home


if __name__ == "__main__":
    import sys

    from claims_pipeline.config.deployments import DeploymentNotReady

    try:
        print(ui_dagster_home())
    except DeploymentNotReady as exc:  # one line per missing setting, as the commands say it
        print("\n".join(f"claims-pipeline: {line}" for line in exc.problems), file=sys.stderr)
        sys.exit(2)
    except ConfigError as exc:  # make dev stops here instead of starting a UI on a throwaway instance
        print(f"claims-pipeline: config error:\n{exc}", file=sys.stderr)
        sys.exit(2)
