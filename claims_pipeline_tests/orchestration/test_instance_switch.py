"""CLAIMS_PIPELINE_INSTANCE chooses the instance template a DAGSTER_HOME gets (no server needed here; the
PostgreSQL instance itself runs in test_postgres_instance.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from claims_pipeline.config.settings import ConfigError, settings_from_dict
from claims_pipeline.orchestration.instance import INSTANCE_ENV, INSTANCE_TEMPLATES, prepare_dagster_home
from claims_pipeline_tests.time_scale import scaled


def test_the_switch_chooses_the_template_and_a_users_own_file_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv(INSTANCE_ENV, raising=False)
    settings = settings_from_dict({"home": str(tmp_path / "home")})
    sqlite, postgres = INSTANCE_TEMPLATES["sqlite"].read_bytes(), INSTANCE_TEMPLATES["postgres"].read_bytes()
    instance_yaml = tmp_path / "dagster" / "dagster.yaml"

    assert prepare_dagster_home(settings.home_dir) == tmp_path / "dagster"
    assert instance_yaml.read_bytes() == sqlite
    monkeypatch.setenv(INSTANCE_ENV, " Postgres ")
    prepare_dagster_home(settings.home_dir)
    assert instance_yaml.read_bytes() == postgres  # an unedited copy follows the switch
    history = tmp_path / "dagster" / "history"
    history.mkdir()
    monkeypatch.setenv(INSTANCE_ENV, "")
    prepare_dagster_home(settings.home_dir)
    assert instance_yaml.read_bytes() == sqlite and history.is_dir()  # and back; the SQLite history stays

    edited = sqlite + b"\n# my own retention\n"
    instance_yaml.write_bytes(edited)
    monkeypatch.setenv(INSTANCE_ENV, "postgres")
    prepare_dagster_home(settings.home_dir)
    assert instance_yaml.read_bytes() == edited  # a file someone edited is never replaced

    monkeypatch.setenv(INSTANCE_ENV, "mysql")
    with pytest.raises(ConfigError, match="CLAIMS_PIPELINE_INSTANCE='mysql': expected one of postgres, sqlite"):
        prepare_dagster_home(settings.home_dir)
    assert instance_yaml.read_bytes() == edited


def test_make_dev_stops_on_an_unknown_instance(tmp_path):
    env = {**os.environ, INSTANCE_ENV: "postgress", "CLAIMS_PIPELINE_HOME": str(tmp_path)}
    env.pop("DAGSTER_HOME", None)
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    out = subprocess.run([sys.executable, "-m", "claims_pipeline.orchestration.instance"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=scaled(60))
    assert out.returncode == 2 and "CLAIMS_PIPELINE_INSTANCE='postgress'" in out.stderr, out.stderr
    assert not (tmp_path / "dagster" / "dagster.yaml").exists()


def test_the_postgres_template_takes_every_connection_field_from_the_environment():
    config = yaml.safe_load(INSTANCE_TEMPLATES["postgres"].read_text(encoding="utf-8"))
    db = config["storage"]["postgres"]["postgres_db"]
    assert {k: v for k, v in db.items() if k not in ("params", "scheme")} == {
        "hostname": {"env": "PGHOST"}, "port": {"env": "PGPORT"}, "db_name": {"env": "PGDATABASE"},
        "username": {"env": "PGUSER"}, "password": {"env": "PGPASSWORD"}}
    assert db["scheme"] == "postgresql+psycopg2"  # dagster-postgres's driver (SQLAlchemy 2.1 would pick psycopg 3)
    assert db["params"] == {"options": "-csearch_path=dagster"}
    queue = config["run_coordinator"]
    assert queue["class"] == "QueuedRunCoordinator" and queue["config"]["max_concurrent_runs"] > 1
    limits = {lim["key"]: lim for lim in queue["config"]["tag_concurrency_limits"]}
    assert limits["dagster/partition"] == {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}
    assert limits["dagster/asset_partition_range_start"]["limit"] == 1
    # the SQLite default is unchanged by the switch's existence
    assert "BatchingSqliteEventLogStorage" in INSTANCE_TEMPLATES["sqlite"].read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_both_templates_queue_several_runs_one_per_scope_and_one_cross_scope_audit(kind):
    """Politeness is shared across runs (the page cache's host leases), so several runs may go at once; what must
    not overlap is two runs of one scope, and two runs that rebuild the cross-scope tables and report."""
    from claims_pipeline.defs.jobs import CROSS_SCOPE_TAGS

    queue = yaml.safe_load(INSTANCE_TEMPLATES[kind].read_text(encoding="utf-8"))["run_coordinator"]
    assert queue["class"] == "QueuedRunCoordinator" and queue["config"]["max_concurrent_runs"] == 4
    limits = {lim["key"]: lim for lim in queue["config"]["tag_concurrency_limits"]}
    assert limits["dagster/partition"]["limit"] == 1 and limits["dagster/partition"]["value"] == {
        "applyLimitPerUniqueValue": True}
    [(key, _)] = CROSS_SCOPE_TAGS.items()
    assert limits[key] == {"key": key, "limit": 1}


def test_jobs_that_rebuild_the_audit_carry_the_cross_scope_tag_and_the_others_do_not():
    from claims_pipeline.definitions import defs
    from claims_pipeline.defs.jobs import CROSS_SCOPE_TAGS

    tagged = {job.name for job in defs().resolve_all_job_defs()
              if CROSS_SCOPE_TAGS.items() <= dict(job.run_tags or {}).items()}
    assert tagged == {"audit_scope", "audit_corpus", "refresh_audit", "audit_and_verify_corpus"}
