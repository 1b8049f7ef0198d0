"""Resources, chosen by deployment in one place (`resources_by_deployment`): the settings and the clock, the page
cache, the fetcher, the judge, and the IO manager of the per-scope values.

$CLAIMS_PIPELINE_DEPLOYMENT (config/settings.py) names the deployment; nothing here looks at the corpus to guess
it. `local` and `production`: the fetcher talks to the web through the SSRF guard, the judge is the one
judge.provider names; `production` starts only on settings that name what a deployment others rely on needs (a
settings file, a home, a PostgreSQL page-cache index, a notification channel, the judge's key, no loopback route:
config/deployments.py), checked by ClaimsConfig when a run or a tick starts. `demo`: the bundled fixture web
started for the run on loopback at the epoch the demo left (claims_pipeline_demo/routes.py), so the UI sees what
the demo's last audit saw, and the scripted judge unless a judge is configured. Only the demo resources import
claims_pipeline_demo, when a run starts them.
"""


import contextlib
import dataclasses
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import dagster as dg
from pydantic import PrivateAttr

from claims_pipeline.config.deployments import check_deployment
from claims_pipeline.config.settings import (
    DEFAULT_DEPLOYMENT,
    ENV_CONFIG,
    Deployment,
    JudgeSettings,
    PageFetching,
    Settings,
    deployment_from_env,
    deployment_named,
    find_config_file,
    load_settings,
    settings_source,
)
from claims_pipeline.defs.storage import ScopeStoreIOManager
from claims_pipeline.judge.providers.base import JudgeProvider
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState

# The settings of the run executing in this process, by (run id, config_path, entry_key): Dagster initializes a separate copy
# of ClaimsConfig for each resource that holds one (page cache, fetcher, judge, IO manager), and every copy takes
# the run's one read. Only the latest run is kept (a run worker executes one run; the CLI runs one after another).
_RUN_SETTINGS: dict[tuple[str, str, str], Settings] = {}
_SAID_OUTSIDE_RUNS: dict[str, str] = {}  # config_path -> the settings line a sensor tick last logged
# Settings an entry point (the CLI) already read, by key, for its in-process runs: they are not read again.
_ENTRY_SETTINGS: dict[str, Settings] = {}


def entry_settings_key(settings: Settings) -> str:
    """Hands the settings the entry point read to the resources of its in-process runs (ClaimsConfig.entry_key).
    One command at a time per process: the previous command's settings are dropped."""
    key = uuid.uuid4().hex
    _ENTRY_SETTINGS.clear()
    _ENTRY_SETTINGS[key] = settings
    return key


class ClaimsConfig(dg.ConfigurableResource):
    """Which settings file to use, for which deployment: the whole of the code location's run config (the
    launchpad shows these two and nothing of a test's or an entry point's: EntryClaimsConfig).

    config_path: a claims_pipeline YAML file; empty means the usual chain ($CLAIMS_PIPELINE_CONFIG, then
    ./config/claims_pipeline.yaml, else the built-in defaults), the same as the CLI's.
    deployment: demo, local or production (resources_by_deployment).
    """

    config_path: str = ""
    deployment: str = DEFAULT_DEPLOYMENT

    _settings: Settings | None = PrivateAttr(default=None)

    @property
    def run_clock(self) -> str:
        """An ISO-8601 instant used as "now"; empty: the wall clock (only an entry point's runs set one)."""
        return ""

    @property
    def run_entry_key(self) -> str:
        """The settings an entry point already read for its in-process runs; empty: read the file."""
        return ""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        key = (context.run_id or "", self.config_path, self.run_entry_key)
        if context.run_id and key in _RUN_SETTINGS:
            self._settings = _RUN_SETTINGS[key]
            return
        settings = self.load()  # the entry point's, else read from the file
        if context.run_id:
            _RUN_SETTINGS.clear()
            _RUN_SETTINGS[key] = settings
        line = f"settings: {settings_source(settings.source_file, settings.deployment)} · home {settings.home_dir}"
        # a run's log names them once; a sensor's tick (no run) only when they differ from the last tick's, so
        # the daemon does not print the same line every minute
        if context.log and (context.run_id or _SAID_OUTSIDE_RUNS.get(self.config_path) != line):
            context.log.info(line)
            if not context.run_id:
                _SAID_OUTSIDE_RUNS[self.config_path] = line

    def config_file(self) -> Path | None:
        return Path(self.config_path) if self.config_path else find_config_file(None)

    def load(self) -> Settings:
        """The run's settings, read once (a resource lives for one run)."""
        if self._settings is None:
            settings = _ENTRY_SETTINGS.get(self.run_entry_key)
            if settings is None:  # an entry point checked its settings where it read them (cli.command_settings)
                settings = load_settings(self.config_file(), deployment=deployment_named(
                    self.deployment, "the claims_config resource's deployment"))
                check_deployment(settings)  # production: before the run uses anything, every missing setting named
            self._settings = settings
        return self._settings

    def now(self) -> datetime:
        if not self.run_clock:
            return datetime.now(UTC)
        dt = datetime.fromisoformat(self.run_clock)
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


class EntryClaimsConfig(ClaimsConfig):
    """ClaimsConfig for an entry point's in-process runs (the CLI, the demo, tests), which the code location
    never serves: clock, the `--now` of a command or a test; entry_key, the settings the command read
    (entry_settings_key)."""

    clock: str = ""
    entry_key: str = ""

    @property
    def run_clock(self) -> str:
        return self.clock

    @property
    def run_entry_key(self) -> str:
        return self.entry_key


class PageCacheResource(dg.ConfigurableResource):
    """Opens the page cache (index + text blobs) named by the settings, for the length of a step."""

    config: ClaimsConfig

    @contextlib.contextmanager
    def open(self) -> Iterator[PageCache]:
        cache = PageCache.at(self.config.load().page_cache)
        try:
            yield cache
        finally:
            cache.close()


class FetcherResource(dg.ConfigurableResource):
    """The polite fetcher for a run, with the sections of the settings it needs (Settings.page_fetching). An audit
    re-reads every cited page (force_refresh: a constant, not run config)."""

    config: ClaimsConfig
    force_refresh: ClassVar[bool] = True

    def fetching(self) -> PageFetching:
        return self.config.load().page_fetching

    def refresh(self, urls: list[str], cache: PageCache, now: datetime, run_id: str | None = None) -> dict[str, PageState]:
        """Fetch `urls` into the cache; run_id (defs/fetch_runs.py) lets a retry from failure resume where the
        failed or killed run stopped. Without the texts: the priors read each text from the cache."""
        from claims_pipeline.steps.pages.refresh import refresh_pages

        return refresh_pages(self.fetching(), urls, cache=cache, force=self.force_refresh, now=now, run_id=run_id,
                             with_text=False)


class DemoFetcherResource(FetcherResource):
    """The fetcher for the bundled demo corpus: starts the fixture web on an ephemeral 127.0.0.1 port for the
    run and routes the demo's fictional hosts to it (and nowhere else)."""

    _address: str | None = PrivateAttr(default=None)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["DemoFetcherResource"]:
        from claims_pipeline_demo.fixture_web.server import FixtureWeb
        from claims_pipeline_demo.routes import saved_epoch

        # the epoch the last `claims-pipeline demo` left in its home
        epoch = saved_epoch(self.config.load().home_dir)  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
        with FixtureWeb() as web:
            web.set_epoch(epoch)
            self._address = f"127.0.0.1:{web.port}"
            if context.log:
                context.log.info(f"demo: fixture web for the demo hosts on http://{self._address} (epoch {epoch})")
            yield self

    def fetching(self) -> PageFetching:
        from claims_pipeline_demo.routes import with_fixture_routes

        fetching = super().fetching()
        if not self._address:
            return fetching
        return dataclasses.replace(fetching, fetch=with_fixture_routes(fetching.fetch, self._address))


class JudgeResource(dg.ConfigurableResource):
    """The verdict step's model provider, as judge.provider in the settings names it (none, anthropic,
    openai-compatible). Its API key is read from the environment when the provider is made (the variable
    judge.api_key_env names, or api_key as a dg.EnvVar), never stored in a file or in the run's config."""

    config: ClaimsConfig
    api_key: str | None = None

    def settings(self) -> JudgeSettings:
        return self.config.load().judge

    def provider(self) -> JudgeProvider:
        from claims_pipeline.judge.providers import make_provider

        judge = self.settings()
        return make_provider(judge, environ={judge.effective_api_key_env: self.api_key} if self.api_key else None)

    @property
    def scripted(self) -> bool:
        return False


class DemoJudgeResource(JudgeResource):
    """The demo deployment's judge: the one judge.provider names when one is configured; else the scripted judge
    server on 127.0.0.1, answered through the real anthropic SDK, so the demo shows verdicts with no key and no
    network. Its verdicts are labelled as the scripted demo judge's."""

    _judge: JudgeSettings | None = PrivateAttr(default=None)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["DemoJudgeResource"]:
        configured = self.config.load().judge  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
        if configured.provider != "none":
            if context.log:
                context.log.info(f"demo: judge.provider {configured.provider} is configured: it answers, not the scripted judge")
            yield self
            return
        from claims_pipeline_demo.scripted_judge import ScriptedJudgeServer, demo_answerer, demo_judge_settings

        with ScriptedJudgeServer(demo_answerer) as server:
            self._judge = demo_judge_settings(server, configured)
            if context.log:
                context.log.info(f"demo: scripted judge on {server.anthropic_url} (the project's figure readers, not a model)")
            yield self

    def settings(self) -> JudgeSettings:
        return self._judge if self._judge is not None else super().settings()

    def provider(self) -> JudgeProvider:
        if self._judge is None:
            return super().provider()
        from claims_pipeline.judge.providers import make_provider
        from claims_pipeline_demo.scripted_judge import DEMO_ENV

        return make_provider(self._judge, environ=DEMO_ENV)

    @property
    def scripted(self) -> bool:
        return self._judge is not None


def resources_by_deployment(config: ClaimsConfig, *, fixture_web: bool = True) -> dict[str, dict[str, Any]]:
    """The resources of each deployment, as in Dagster's own examples:

    | deployment | fetcher | judge | starts on |
    |---|---|---|---|
    | local | the web, through the SSRF guard | judge.provider's | any valid settings (SQLite cache in the home) |
    | production | the web, through the SSRF guard | judge.provider's | settings meeting config.deployments.PRODUCTION |
    | demo | the fixture web on 127.0.0.1 | the scripted judge unless judge.provider names one | any valid settings |

    The claims_config resource refuses, when a run or a tick starts it, settings its deployment cannot run on
    (check_deployment). fixture_web=False: the demo's fetcher without its own fixture web (`claims-pipeline demo`
    runs one for its three audits and routes to it)."""

    runtime: dict[str, Any] = {
        "judge": JudgeResource(config=config),
        "claims_config": config,
        "page_cache": PageCacheResource(config=config),
        "fetcher": FetcherResource(config=config),
        "io_manager": ScopeStoreIOManager(claims_config=config),
    }
    demo = {**runtime, "judge": DemoJudgeResource(config=config),
            "fetcher": DemoFetcherResource(config=config) if fixture_web else runtime["fetcher"]}
    return {"demo": demo, "local": runtime, "production": runtime}


def resources_for_file(config_path: str = "", deployment: Deployment = DEFAULT_DEPLOYMENT, *, clock: str = "",
                       fixture_web: bool = True) -> dict[str, Any]:
    """The resources of a deployment whose runs read the settings file (empty: the default chain) themselves."""
    config = EntryClaimsConfig(config_path=config_path, deployment=deployment, clock=clock)
    return resources_by_deployment(config, fixture_web=fixture_web)[deployment]


def resources_for_settings(settings: Settings, *, clock: str = "", fixture_web: bool = True) -> dict[str, Any]:
    """The resources of an entry point that has read its settings: its in-process runs take them as they are."""
    source = settings.source_file
    config = EntryClaimsConfig(config_path=str(source) if source else "", deployment=settings.deployment,
                               clock=clock, entry_key=entry_settings_key(settings))
    return resources_by_deployment(config, fixture_web=fixture_web)[settings.deployment]


@dg.definitions
def resources() -> dg.Definitions:
    """The code location's resources: the deployment $CLAIMS_PIPELINE_DEPLOYMENT names; the settings are read
    when a run or a sensor tick starts, never here."""
    import os

    deployment = deployment_from_env()
    config_path: str | dg.EnvVar = dg.EnvVar(ENV_CONFIG) if os.environ.get(ENV_CONFIG) else ""
    config = ClaimsConfig(config_path=config_path, deployment=deployment)
    return dg.Definitions(resources=resources_by_deployment(config)[deployment])
