"""What each deployment requires of its settings (config/deployments.py), on settings as they load: production
names what it lacks, one line per setting; local and demo require nothing more than valid settings. The runs
that fail on them are in defs/test_production_deployment.py and test_deployments.py."""

from __future__ import annotations

from typing import Any

import pytest

from claims_pipeline.config.deployments import DeploymentNotReady, check_deployment, deployment_problems
from claims_pipeline.config.settings import Settings, settings_from_dict

READY: dict[str, Any] = {
    "home": "/srv/claims",
    "cache": {"db_url": "postgresql+psycopg://claims@db.internal/claims"},
    "notify": {"urls": ["slack://${SLACK_TOKEN}/#audits"]},
}
ENV = {"SLACK_TOKEN": "t"}


def _settings(deployment: str = "production", **sections: Any) -> Settings:
    return settings_from_dict({**READY, **sections}, source="/srv/claims/claims_pipeline.yaml",
                              deployment=deployment)  # type: ignore[arg-type]


def _keys(problems: list[str]) -> list[str]:
    return [line.split(": ", 2)[1] for line in problems]


def test_ready_settings_start_and_the_worst_settings_start_locally_and_in_the_demo():
    assert deployment_problems(_settings(), ENV) == []
    check_deployment(_settings(), ENV)
    # no file, no home, the SQLite index, no channel, no judge's key, routes to loopback
    worst = {"fetch": {"address_map": {"*.xa": "127.0.0.1:8000"}, "allow_networks": ["127.0.0.1/32"]},
             "judge": {"provider": "anthropic"}}
    for deployment in ("local", "demo"):
        assert deployment_problems(settings_from_dict(worst, deployment=deployment), {}) == []
    with pytest.raises(DeploymentNotReady) as raised:
        check_deployment(settings_from_dict(worst, deployment="production"), {})
    assert _keys(raised.value.problems) == ["no settings file (built-in defaults)", "home", "cache.db_url",
                                            "notify.urls", "judge.api_key_env", "fetch.address_map",
                                            "fetch.allow_networks"]
    assert str(raised.value).splitlines() == raised.value.problems


def test_the_home_may_come_from_its_variable():
    assert _keys(deployment_problems(_settings(home=None), ENV)) == ["home"]
    assert deployment_problems(_settings(home=None), {**ENV, "CLAIMS_PIPELINE_HOME": "/srv/claims"}) == []


@pytest.mark.parametrize(("judge", "env", "keys"), [
    ({"provider": "anthropic"}, {}, ["judge.api_key_env"]),
    ({"provider": "anthropic"}, {"ANTHROPIC_API_KEY": "k"}, []),
    ({"provider": "openai-compatible", "api_key_env": "KB_KEY"}, {"OPENAI_API_KEY": "k"}, ["judge.api_key_env"]),
    ({"provider": "openai-compatible", "base_url": "http://127.0.0.1:11434/v1"}, {}, []),  # a local server: no key
    ({"provider": "none"}, {}, []),
])
def test_the_judges_key_is_required_only_when_its_provider_needs_one(judge, env, keys):
    assert _keys(deployment_problems(_settings(judge=judge), {**ENV, **env})) == keys


@pytest.mark.parametrize(("fetch", "keys"), [
    ({"address_map": {"a.example": "[::1]:8080"}}, ["fetch.address_map"]),
    ({"address_map": {"a.example": "::ffff:127.0.0.1"}}, ["fetch.address_map"]),
    ({"address_map": {"a.example": "203.0.113.7:443"}}, []),  # a route to another machine is curl --resolve
    ({"allow_networks": ["0.0.0.0/0"]}, ["fetch.allow_networks"]),  # holds loopback
    ({"allow_networks": ["::/0"]}, ["fetch.allow_networks"]),
    ({"allow_networks": ["10.0.0.0/8", "fd00::/8"]}, []),  # an intranet is not loopback
    ({"allow_hosts": ["127.0.0.53", "intranet.example"]}, ["fetch.allow_hosts"]),
])
def test_no_route_reaches_loopback(fetch, keys):
    assert _keys(deployment_problems(_settings(fetch=fetch), ENV)) == keys


def test_every_channel_variable_is_named_when_unset():
    settings = _settings(notify={"urls": ["json://hooks.example/${HOOK_A}", "mailtos://${USER_B}:${PASS_B}@mail.example"],
                                 "urls_env": "MORE_CHANNELS"})
    assert [line.split(": the environment variable ")[1].split()[0] for line in deployment_problems(settings, {})] == [
        "MORE_CHANNELS", "HOOK_A", "PASS_B", "USER_B"]
    assert deployment_problems(settings, {"HOOK_A": "a", "USER_B": "b", "PASS_B": "c", "MORE_CHANNELS": "json://x"}) == []
