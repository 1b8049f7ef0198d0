"""deploy/k8s/values.yaml (the Dagster Helm chart's values), checked as far as it can be without a cluster or the
chart itself (no network here):

- the instance config the chart renders from these values (run launcher, run queue, PostgreSQL storage,
  scheduler) is transcribed below from the chart's templates (helm/dagster/templates/helpers/instance/*.tpl) and
  validated by Dagster's own instance schema and by each class's config schema (dagster-k8s's K8sRunLauncher,
  QueuedRunCoordinator, dagster-postgres's storages);
- every Kubernetes fragment (env, volumes, mounts, resources, security contexts, the run pods' container, pod and
  Job specs) is deserialized into the `kubernetes` client's models, which refuse unknown and missing fields;
- what the values name in this project (the code location, the settings variable, the judge's key variable, the
  settings ConfigMap and the volumes its paths live on) exists and agrees.

Not checked: the chart's own values.schema.json and templates, and a real cluster (docs/deploy-distributed.md).
"""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path
from typing import Any

import kubernetes.client as k8s
import pytest
import yaml
from dagster._config import process_config, resolve_to_config_type
from dagster._core.instance.config import dagster_instance_config
from dagster._serdes import ConfigurableClassData
from dagster_k8s.models import k8s_model_from_dict, k8s_snake_case_dict

from claims_pipeline.config.deployments import deployment_problems
from claims_pipeline.config.settings import ENV_CONFIG, ENV_DEPLOYMENT, load_settings

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "deploy" / "k8s" / "values.yaml"
SETTINGS_CONFIGMAP = ROOT / "deploy" / "k8s" / "claims-pipeline-settings.yaml"
RELEASE = "claims-pipeline"  # the release name and namespace in docs/deploy-distributed.md
CHART_DAGSTER_HOME = "/opt/dagster/dagster_home"  # the chart's default global.dagsterHome


def _values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text(encoding="utf-8"))


def _deployment(values: dict[str, Any]) -> dict[str, Any]:
    (dep,) = values["dagster-user-deployments"]["deployments"]
    return dep


def _model(cls: type, data: Any) -> Any:
    """The kubernetes client's model of `data` (camelCase as in YAML); raises on an unknown or missing field."""
    return k8s_model_from_dict(cls, k8s_snake_case_dict(cls, data))


def _render_instance(values: dict[str, Any]) -> dict[str, Any]:
    """The dagster.yaml of configmap-instance.yaml for these values (K8sRunLauncher, QueuedRunCoordinator,
    PostgreSQL storage, the daemon scheduler), key for key as the chart's helper templates write it."""
    pg = values["postgresql"]
    postgres_db = {"username": pg["postgresqlUsername"], "password": {"env": "DAGSTER_PG_PASSWORD"},
                   "hostname": pg["postgresqlHost"], "db_name": pg["postgresqlDatabase"],
                   "port": pg["service"]["port"], "params": pg.get("postgresqlParams") or {}}
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    config: dict[str, Any] = {
        "load_incluster_config": launcher["loadInclusterConfig"],
        "job_namespace": launcher.get("jobNamespace") or RELEASE,
        "image_pull_policy": launcher.get("imagePullPolicy"),
        "service_account_name": f"{RELEASE}-dagster",
        "dagster_home": CHART_DAGSTER_HOME,
        "instance_config_map": f"{RELEASE}-dagster-instance",
        "postgres_password_secret": values["global"]["postgresqlSecretName"],
    }
    if launcher.get("kubeconfigFile"):
        config["kubeconfig_file"] = launcher["kubeconfigFile"]
    for key, name in [("envConfigMaps", "env_config_maps"), ("envSecrets", "env_secrets")]:
        if launcher.get(key):
            config[name] = [e["name"] for e in launcher[key] if "name" in e]
    for key, name in [("envVars", "env_vars"), ("volumeMounts", "volume_mounts"), ("volumes", "volumes"),
                      ("labels", "labels"), ("resources", "resources"), ("securityContext", "security_context")]:
        if launcher.get(key):
            config[name] = launcher[key]
    run_k8s = launcher.get("runK8sConfig") or {}
    parts = {"containerConfig": "container_config", "podSpecConfig": "pod_spec_config",
             "podTemplateSpecMetadata": "pod_template_spec_metadata", "jobSpecConfig": "job_spec_config",
             "jobMetadata": "job_metadata"}
    if run_k8s:
        config["run_k8s_config"] = {parts[p]: v for p, v in run_k8s.items() if v}
    queued = values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]
    coordinator = {"max_concurrent_runs": queued.get("maxConcurrentRuns", -1)}
    for key, name in [("tagConcurrencyLimits", "tag_concurrency_limits"),
                      ("dequeueIntervalSeconds", "dequeue_interval_seconds"),
                      ("dequeueUseThreads", "dequeue_use_threads"), ("dequeueNumWorkers", "dequeue_num_workers")]:
        if queued.get(key):
            coordinator[name] = queued[key]
    storage = {"config": {"postgres_db": postgres_db}}
    return {
        "scheduler": {"module": "dagster.core.scheduler", "class": "DagsterDaemonScheduler"},
        "schedule_storage": {"module": "dagster_postgres.schedule_storage", "class": "PostgresScheduleStorage", **storage},
        "run_launcher": {"module": "dagster_k8s", "class": "K8sRunLauncher", "config": config},
        "run_storage": {"module": "dagster_postgres.run_storage", "class": "PostgresRunStorage", **storage},
        "event_log_storage": {"module": "dagster_postgres.event_log", "class": "PostgresEventLogStorage", **storage},
        "run_coordinator": {"module": "dagster.core.run_coordinator", "class": "QueuedRunCoordinator",
                            "config": coordinator},
        "telemetry": {"enabled": values["telemetry"]["enabled"]},
    }


def _class_config(block: dict[str, Any]) -> dict[str, Any]:
    """The block's config processed by its class's own schema (as the instance does on load, minus building it)."""
    data = ConfigurableClassData(block["module"], block["class"], yaml.safe_dump(block.get("config") or {}))
    klass = getattr(importlib.import_module(data.module_name), data.class_name)
    result = process_config(resolve_to_config_type(klass.config_type()), data.config_dict)
    assert result.success, f"{block['class']}: {[e.message for e in result.errors or []]}"
    return result.value


def test_the_rendered_instance_passes_dagsters_schemas(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_PG_PASSWORD", "from-the-secret")  # as the chart sets it in every pod
    instance = _render_instance(_values())
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(instance), encoding="utf-8")
    dagster_instance_config(str(tmp_path))  # the instance file's own schema: raises on any error

    launcher = _class_config(instance["run_launcher"])
    assert launcher["load_incluster_config"] is True and launcher["postgres_password_secret"] == "claims-pipeline-postgresql"
    coordinator = _class_config(instance["run_coordinator"])
    assert coordinator["max_concurrent_runs"] == 4
    limits = {limit["key"]: limit for limit in coordinator["tag_concurrency_limits"]}
    assert limits["dagster/partition"]["limit"] == 1 and limits["dagster/partition"]["value"] == {"applyLimitPerUniqueValue": True}
    for key in ("run_storage", "event_log_storage", "schedule_storage"):
        db = _class_config(instance[key])["postgres_db"]
        assert db["password"] == "from-the-secret" and db["params"] == {"options": "-csearch_path=dagster"}
    assert _class_config(instance["scheduler"])["max_catchup_runs"] == 5  # its defaults


def test_a_wrong_value_is_caught():
    # the checks above can fail: a misspelt field or a bad type in the values is refused
    values = _values()
    values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]["maxConcurrentRuns"] = "four"
    with pytest.raises(AssertionError, match="QueuedRunCoordinator"):
        _class_config(_render_instance(values)["run_coordinator"])
    values = _values()
    values["runLauncher"]["config"]["k8sRunLauncher"]["envSecrets"] = [{"name": 3}]
    with pytest.raises(AssertionError, match="K8sRunLauncher"):
        _class_config(_render_instance(values)["run_launcher"])
    with pytest.raises(Exception, match="Unexpected keys"):
        _model(k8s.V1Volume, {"name": "home", "persistentVolumeClaim": {"claimname": "x"}})


def test_kubernetes_fragments_deserialize_into_the_client_models():
    values = _values()
    dep = _deployment(values)
    env = [_model(k8s.V1EnvVar, e) for e in dep["env"]]
    volumes = {v.name: v for v in (_model(k8s.V1Volume, v) for v in dep["volumes"])}
    mounts = [_model(k8s.V1VolumeMount, m) for m in dep["volumeMounts"]]
    assert {m.name for m in mounts} <= set(volumes)
    _model(k8s.V1ResourceRequirements, dep["resources"])
    _model(k8s.V1PodSecurityContext, dep["podSecurityContext"])
    _model(k8s.V1SecurityContext, dep["securityContext"])
    for ref in dep["envSecrets"]:
        _model(k8s.V1SecretEnvSource, ref)

    # what every run's Job gets from the launcher: its container, pod spec and Job spec
    run_k8s = values["runLauncher"]["config"]["k8sRunLauncher"]["runK8sConfig"]
    container = _model(k8s.V1Container, {"name": "dagster", **run_k8s["containerConfig"]})
    assert container.resources.limits["memory"] == "2Gi"
    pod = _model(k8s.V1PodSpec, {"containers": [{"name": "dagster"}], **run_k8s["podSpecConfig"]})
    assert pod.security_context.run_as_non_root is True
    job = _model(k8s.V1JobSpec, {"template": {}, **run_k8s["jobSpecConfig"]})
    assert job.backoff_limit == 0

    # secrets come by reference only: no value of a secret-looking variable is written in the values
    by_name = {e.name: e for e in env}
    assert by_name["PGPASSWORD"].value is None and by_name["PGPASSWORD"].value_from.secret_key_ref.name == \
        values["global"]["postgresqlSecretName"]
    assert "DAGSTER_PG_PASSWORD" not in by_name and "postgresqlPassword" not in values["postgresql"]


def test_values_agree_with_the_project(tmp_path):
    values = _values()
    dep = _deployment(values)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["dg"]["project"]

    # the code location the gRPC server loads is this project's, under its dg name
    args = dep["dagsterApiGrpcArgs"]
    opts = dict(zip(args[::2], args[1::2]))
    assert opts["--module-name"] == pyproject["code_location_target_module"]
    assert opts["--location-name"] == pyproject["code_location_name"]
    assert callable(getattr(importlib.import_module(opts["--module-name"]), opts["--attribute"]))

    # the settings: the ConfigMap is a valid one, mounted where CLAIMS_PIPELINE_CONFIG points, and loads
    configmap = yaml.safe_load(SETTINGS_CONFIGMAP.read_text(encoding="utf-8"))
    cm = _model(k8s.V1ConfigMap, configmap)
    env = {e["name"]: e for e in dep["env"]}
    config_path = Path(env[ENV_CONFIG]["value"])
    settings_volume = next(v for v in dep["volumes"] if v.get("configMap", {}).get("name") == cm.metadata.name)
    mount = next(m for m in dep["volumeMounts"] if m["name"] == settings_volume["name"])
    assert config_path.parent == Path(mount["mountPath"]) and config_path.name in cm.data
    local = tmp_path / config_path.name
    local.write_text(cm.data[config_path.name], encoding="utf-8")
    settings = load_settings(local)

    # the home and the corpus live on the shared volume every run pod mounts
    home_volume = next(v for v in dep["volumes"] if "persistentVolumeClaim" in v)
    home_mount = Path(next(m for m in dep["volumeMounts"] if m["name"] == home_volume["name"])["mountPath"])
    assert settings.home_dir.is_relative_to(home_mount) and settings.corpus_dir.is_relative_to(home_mount)
    assert settings.cache.db_url and settings.cache.db_url.startswith("postgresql+psycopg://")
    assert ":" not in settings.cache.db_url.split("//", 1)[1].split("@", 1)[0]  # no password in the URL

    # the judge's key: the variable the settings read, from the Secret the values name; the run pods get it too
    assert settings.judge.effective_api_key_env == "ANTHROPIC_API_KEY"
    assert [s["name"] for s in dep["envSecrets"]] == ["claims-pipeline-judge", "claims-pipeline-notify"]

    # the production deployment: the ConfigMap meets its requirements once the Secrets' variables are set (the
    # notification channels' URLs from claims-pipeline-notify); without them, a run would name what is missing
    assert env[ENV_DEPLOYMENT]["value"] == "production"
    production = load_settings(local, deployment="production")
    secrets = {"PGPASSWORD": "p", "ANTHROPIC_API_KEY": "k", "CLAIMS_PIPELINE_NOTIFY_URLS": "json://hooks.example/kb"}
    assert deployment_problems(production, secrets) == []
    assert [line.split(": ")[1] for line in deployment_problems(production, {"PGPASSWORD": "p"})] == ["notify.urls_env"]
    assert dep["includeConfigInLaunchedRuns"]["enabled"] is True
