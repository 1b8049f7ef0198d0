"""The production deployment differs from local on purpose, in real runs on a real instance: it starts only on
settings that name what a deployment others rely on needs (config/deployments.py), its page cache on a real
PostgreSQL server on 127.0.0.1, and it never starts the fixture web; settings lacking one requirement fail the
run when its resources start, with one line naming the setting, before anything is written. Local runs on the
friendly defaults the same settings lack."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg
import pytest
import sqlalchemy as sa

from claims_pipeline.config.deployments import DeploymentNotReady
from claims_pipeline.config.settings import ENV_CONFIG, ENV_HOME
from claims_pipeline.defs.automation import corpus_sensor
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME
from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource, JudgeResource, resources_for_file
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline.store import schema
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, QUIET
from claims_pipeline_tests.production_config import write_production_config
from claims_pipeline_tests.store.postgres_server import postgres_server
from claims_pipeline_tests.support.stored_values import stored_json

NOTIFY_URL = "json://127.0.0.1:9/kb-audit"  # not sent to here: these runs stop before the notification step
FETCH = ["corpus_documents", "claims", "fetched_pages"]


@pytest.fixture(scope="module")
def new_database() -> Iterator[Any]:
    with postgres_server() as new_database:
        yield new_database


def _fetch_xa(instance: dg.DagsterInstance, resources: dict[str, Any]) -> dg.ExecuteInProcessResult:
    sync_scope_partitions(instance, ["xa"])
    return dg.materialize(ALL_ASSETS, instance=instance, resources=resources, selection=FETCH, partition_key="xa",
                          run_config=QUIET, raise_on_error=False)


def _tables(db_url: str) -> list[str]:
    engine = sa.create_engine(db_url)
    try:
        return sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_production_runs_on_what_it_names_and_never_starts_the_fixture_web(instance, tmp_path, new_database):
    """The bundled demo corpus in a production config: the production fetcher and judge, no fixture web, no route
    to loopback, so the demo's fictional hosts read nothing; every fetch is recorded in PostgreSQL, none in a
    SQLite file."""
    db_url = new_database()
    config = write_production_config(tmp_path, db_url=db_url, notify_url=NOTIFY_URL)
    resources = resources_for_file(str(config), "production")
    assert (type(resources["fetcher"]), type(resources["judge"])) == (FetcherResource, JudgeResource)
    result = _fetch_xa(instance, resources)
    assert result.success
    logs = [r.user_message for r in instance.all_logs(result.run_id)]
    assert any(m.startswith("settings: ") and "deployment production" in m for m in logs), logs
    assert not [m for m in logs if m.startswith("demo: ") or "fixture web" in m]
    pages = stored_json(tmp_path / "home", "fetched_pages", "xa")
    assert pages and all(p["fetch_status"] != "OK" for p in pages.values()), {u: p["fetch_status"] for u, p in pages.items()}
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(schema.fetches)).scalar_one() == len(pages)
    engine.dispose()
    assert not list(tmp_path.rglob("*.sqlite"))


# one requirement broken at a time: (changes to the ready config, the one line the run fails with)
BROKEN = {
    "home unset": ({"home": None}, "production: home: not set, so each process would write under its own user's "
                   "~/.claims_pipeline: set home in {config} (or $CLAIMS_PIPELINE_HOME) to the deployment's folder"),
    "cache index on SQLite": ({"cache.db_url": None}, "production: cache.db_url: the page cache's index is a SQLite "
                              "file under the home; runs at once share it (and each host's politeness): set "
                              "cache.db_url: postgresql+psycopg://… in {config} (docs/deploy-postgres.md)"),
    "no notification channel": ({"notify.urls": None}, "production: notify.urls: no channel, so the monthly audit "
                                "reaches no one: set notify.urls (or notify.urls_env) in {config} "
                                "(docs/notifications.md)"),
    "a channel's secret unset": (
        {"notify.urls": [NOTIFY_URL, "json://127.0.0.1:9/${KB_HOOK_TOKEN_UNSET}"]},
        "production: notify.urls entry 2: the environment variable KB_HOOK_TOKEN_UNSET it reads is not set: set it "
        "in the environment of the code server and the daemon"),
    "the channels' variable unset": (
        {"notify.urls": None, "notify.urls_env": "KB_CHANNELS_UNSET"},
        "production: notify.urls_env: the environment variable KB_CHANNELS_UNSET is not set: set it in the "
        "environment of the code server and the daemon"),
    "the judge's key unset": (
        {"judge.provider": "anthropic", "judge.api_key_env": "KB_JUDGE_KEY_UNSET"},
        "production: judge.api_key_env: the environment variable KB_JUDGE_KEY_UNSET is not set (judge.provider: "
        "anthropic needs an API key): set it in the environment of the code server and the daemon, or set "
        "judge.provider: none"),
    "a host routed to loopback": (
        {"fetch.address_map": {"intranet.bcx.gob.xc": "127.0.0.2:9"}},
        "production: fetch.address_map: 'intranet.bcx.gob.xc' is routed to '127.0.0.2:9', a loopback address: "
        "production fetches the web, not a fixture web on this machine: remove it from {config}"),
    "loopback allowed by network": (
        {"fetch.allow_networks": ["10.0.0.0/8", "127.0.0.1/32"]},
        "production: fetch.allow_networks: '127.0.0.1/32' lets fetches reach loopback: production fetches the web, "
        "not a fixture web on this machine: remove it from {config}"),
    "loopback allowed by name": (
        {"fetch.allow_hosts": ["localhost"]},
        "production: fetch.allow_hosts: 'localhost' lets fetches reach loopback: production fetches the web, not a "
        "fixture web on this machine: remove it from {config}"),
}


def _start_failure(instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult) -> str:
    """The error the run's resources failed to start with."""
    [event] = [e for e in instance.all_logs(result.run_id, of_type=dg.DagsterEventType.RESOURCE_INIT_FAILURE)]
    error = event.dagster_event.event_specific_data.error  # type: ignore[union-attr]
    prefix = "claims_pipeline.config.deployments.DeploymentNotReady: "
    assert error.message.startswith(prefix), error.message
    return error.message.removeprefix(prefix).strip()


@pytest.mark.postgres
@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_production_fails_at_run_start_naming_the_missing_setting(instance, tmp_path, new_database, monkeypatch,
                                                                  case):
    """Each requirement alone: the run fails when its resources start, with exactly that line, before any step:
    no value under the home, no table in the page cache's database."""
    changes, line = BROKEN[case]
    monkeypatch.delenv(ENV_HOME, raising=False)
    db_url = new_database()
    config = write_production_config(tmp_path, db_url=db_url, notify_url=NOTIFY_URL, **changes)
    result = _fetch_xa(instance, resources_for_file(str(config), "production"))
    assert not result.success
    assert _start_failure(instance, result) == line.format(config=config)
    assert not (tmp_path / "home").exists() and _tables(db_url) == []
    assert not instance.get_records_for_run(result.run_id, of_type=dg.DagsterEventType.STEP_START).records


def test_production_without_a_settings_file_fails_at_run_start(instance, tmp_path, monkeypatch):
    """No $CLAIMS_PIPELINE_CONFIG and no ./config/claims_pipeline.yaml: production does not run on the built-in
    defaults; the first line says how to name the file (the others, what those defaults lack)."""
    monkeypatch.delenv(ENV_CONFIG, raising=False)
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    result = _fetch_xa(instance, resources_for_file("", "production"))
    assert not result.success
    lines = _start_failure(instance, result).splitlines()
    assert lines[0] == ("production: no settings file (built-in defaults): set $CLAIMS_PIPELINE_CONFIG to the "
                        "deployment's claims_pipeline.yaml, in the environment of the code server and the daemon")
    assert [line.split(":")[1].strip() for line in lines[1:]] == ["cache.db_url", "notify.urls"]
    assert not (tmp_path / "home").exists()


def test_local_runs_on_the_friendly_defaults_production_refuses(instance, tmp_path, monkeypatch):
    """The settings production refuses (no home, the SQLite index, no channel, a route to loopback) run in the
    local deployment: the outputs and the SQLite index under $CLAIMS_PIPELINE_HOME."""
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "default-home"))
    config = write_production_config(tmp_path, db_url="unused", notify_url=NOTIFY_URL, home=None,
                                     **{"cache.db_url": None, "notify.urls": None,
                                        "fetch.address_map": {"intranet.bcx.gob.xc": "127.0.0.2:9"}})
    result = _fetch_xa(instance, resources_for_file(str(config), "local"))
    assert result.success
    assert (tmp_path / "default-home" / "cache" / "index.sqlite").is_file()
    assert stored_json(tmp_path / "default-home", "fetched_pages", "xa")


@pytest.mark.postgres
def test_a_production_sensor_tick_fails_on_what_it_lacks_and_adds_no_scope(instance, tmp_path, new_database):
    """The corpus sensor's tick reads the settings through the same resource: without a channel it fails with
    that line, and no scope partition appears; with one, the same tick adds the demo's scopes."""
    db_url = new_database()

    def tick(**changes: Any) -> dg.SensorResult:
        config = write_production_config(tmp_path, db_url=db_url, notify_url=NOTIFY_URL, **changes)
        resources = {"claims_config": ClaimsConfig(config_path=str(config), deployment="production")}
        return corpus_sensor(dg.build_sensor_context(instance=instance, cursor=None, resources=resources))

    with pytest.raises(dg.DagsterResourceFunctionError) as raised:  # the resource's start, as in a run
        tick(**{"notify.urls": None})
    refused = raised.value.user_exception
    assert isinstance(refused, DeploymentNotReady)
    assert [line.split(": ")[1] for line in refused.problems] == ["notify.urls"]
    assert instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME) == []
    assert {r.partition_key for r in tick().run_requests} == {"xa", "xb", "xc", "shared/exit/regional"}
