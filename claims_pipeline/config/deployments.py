"""What a deployment requires of its settings, checked when a run, a sensor tick or a command starts (never when
the code location loads, which reads no settings).

`local` and `demo` require nothing more than a valid file: the friendly defaults (a SQLite page cache and the
outputs under the home folder, notifications optional). `production` is a deployment other people rely on, so
it runs on nothing it did not name: a settings file, a home folder, a page-cache index on a shared PostgreSQL
database, a notification channel (the monthly audit must reach its reader), the judge's key when a judge is set,
and no route to loopback (a fixture web's, not the web's). Each problem is one line naming the setting and how to
set it; `DeploymentNotReady` carries them all, so one start shows every fix.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from claims_pipeline.config.settings import (
    DEFAULT_CONFIG_RELPATH,
    ENV_CONFIG,
    ENV_HOME,
    ENV_REF_RE,
    ConfigError,
    Deployment,
    Settings,
    split_address_target,
)


class DeploymentNotReady(ConfigError):
    """Settings the deployment cannot run on: one line per problem, each naming the setting and how to set it."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Requirement:
    key: str  # the setting, as the docs and the message name it
    required: str  # what the deployment needs of it, in words (docs/configuration.md's table)
    problems: Callable[[Settings, Mapping[str, str]], Iterator[str]]  # why these settings fail it, one line each


def _where(settings: Settings) -> str:
    return str(settings.source_file) if settings.source_file else "the settings file"


def _settings_file(settings: Settings, environ: Mapping[str, str]) -> Iterator[str]:
    if settings.source_file is None:
        yield (f"production: no settings file (built-in defaults): set ${ENV_CONFIG} to the deployment's "
               "claims_pipeline.yaml, in the environment of the code server and the daemon")


def _home(settings: Settings, environ: Mapping[str, str]) -> Iterator[str]:
    if settings.home is None and not environ.get(ENV_HOME):
        yield (f"production: home: not set, so each process would write under its own user's "
               f"~/.claims_pipeline: set home in {_where(settings)} (or ${ENV_HOME}) to the deployment's folder")


def _cache_index(settings: Settings, environ: Mapping[str, str]) -> Iterator[str]:
    from sqlalchemy.engine import make_url

    if make_url(settings.cache_db_url).get_backend_name() != "postgresql":
        now = "a SQLite file under the home" if settings.cache.db_url is None else "not PostgreSQL"
        yield (f"production: cache.db_url: the page cache's index is {now}; runs at once share it (and each "
               f"host's politeness): set cache.db_url: postgresql+psycopg://… in {_where(settings)} "
               "(docs/deploy-postgres.md)")


def _notify(settings: Settings, environ: Mapping[str, str]) -> Iterator[str]:
    notify = settings.notify
    if not notify.configured:
        yield (f"production: notify.urls: no channel, so the monthly audit reaches no one: set notify.urls (or "
               f"notify.urls_env) in {_where(settings)} (docs/notifications.md)")
        return
    if notify.urls_env and not environ.get(notify.urls_env, "").split():
        yield (f"production: notify.urls_env: the environment variable {notify.urls_env} is not set: set it in "
               "the environment of the code server and the daemon")
    for n, url in enumerate(notify.urls, start=1):
        for name in sorted({name for name in ENV_REF_RE.findall(url) if not environ.get(name)}):
            yield (f"production: notify.urls entry {n}: the environment variable {name} it reads is not set: "
                   "set it in the environment of the code server and the daemon")


def _judge_key(settings: Settings, environ: Mapping[str, str]) -> Iterator[str]:
    judge = settings.judge
    if judge.needs_api_key and not environ.get(judge.effective_api_key_env):
        yield (f"production: judge.api_key_env: the environment variable {judge.effective_api_key_env} is not set "
               f"(judge.provider: {judge.provider} needs an API key): set it in the environment of the code "
               "server and the daemon, or set judge.provider: none")


def _loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        return ip.is_loopback or (mapped is not None and mapped.is_loopback)
    except ValueError:
        return address.strip().lower().rstrip(".") == "localhost"


_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = (ipaddress.IPv6Network("::1/128"), ipaddress.IPv6Network("::ffff:127.0.0.0/104"))  # and v4-mapped


def _network_reaches_loopback(entry: str) -> bool:
    net = ipaddress.ip_network(entry.strip(), strict=False)  # validated when the settings loaded
    if isinstance(net, ipaddress.IPv4Network):
        return net.overlaps(_LOOPBACK_V4)
    return any(net.overlaps(loopback) for loopback in _LOOPBACK_V6)


def _no_loopback_routes(settings: Settings, environ: Mapping[str, str]) -> Iterator[str]:
    fetch = settings.fetch
    fix = f"production fetches the web, not a fixture web on this machine: remove it from {_where(settings)}"
    for host, target in fetch.address_map.items():
        if _loopback(split_address_target(target)[0]):
            yield f"production: fetch.address_map: {host!r} is routed to {target!r}, a loopback address: {fix}"
    for entry in fetch.allow_networks:
        if _network_reaches_loopback(entry):
            yield f"production: fetch.allow_networks: {entry!r} lets fetches reach loopback: {fix}"
    for entry in fetch.allow_hosts:
        if _loopback(entry):
            yield f"production: fetch.allow_hosts: {entry!r} lets fetches reach loopback: {fix}"
    for entry in settings.notify.allow_networks:
        if _network_reaches_loopback(entry):
            yield (f"production: notify.allow_networks: {entry!r} lets notifications reach loopback (a service of "
                   f"this machine, not a chat server): remove it from {_where(settings)}")


PRODUCTION: tuple[Requirement, ...] = (
    Requirement("settings file", f"named: `${ENV_CONFIG}` or `--config` (or `./{DEFAULT_CONFIG_RELPATH.as_posix()}`), "
                "never the built-in defaults", _settings_file),
    Requirement("`home`", f"set, in the file or as `${ENV_HOME}`", _home),
    Requirement("`cache.db_url`", "a PostgreSQL database (`postgresql+psycopg://…`), not the SQLite file under the "
                "home", _cache_index),
    Requirement("`notify.urls` / `notify.urls_env`", "at least one channel, every variable they read set",
                _notify),
    Requirement("`judge.api_key_env`", "when `judge.provider` needs a key: its variable set", _judge_key),
    Requirement("`fetch.address_map`, `allow_networks`, `allow_hosts`; `notify.allow_networks`",
                "no loopback address (no fixture web, no channel on this machine)",
                _no_loopback_routes),
)

REQUIREMENTS: dict[Deployment, tuple[Requirement, ...]] = {"demo": (), "local": (), "production": PRODUCTION}


def deployment_problems(settings: Settings, environ: Mapping[str, str] | None = None) -> list[str]:
    """Why `settings` cannot run in their deployment, one line each (none: they can). environ: the process's
    environment, where the secrets are read from when a message is sent or a judge is made."""
    env = os.environ if environ is None else environ
    return [line for requirement in REQUIREMENTS[settings.deployment] for line in requirement.problems(settings, env)]


def check_deployment(settings: Settings, environ: Mapping[str, str] | None = None) -> None:
    """DeploymentNotReady when the settings lack what their deployment requires."""
    problems = deployment_problems(settings, environ)
    if problems:
        raise DeploymentNotReady(problems)
