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
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import dagster as dg
from pydantic import PrivateAttr

from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.run_settings import RunSettings
from claims_pipeline.config.settings import (
    DEFAULT_DEPLOYMENT,
    ENV_CONFIG,
    Deployment,
    JudgeSettings,
    LinterSettings,
    NotifySettings,
    PageCacheSpec,
    PageFetching,
    SamplingSettings,
    deployment_from_env,
    deployment_named,
)
from claims_pipeline.defs.storage import ScopeStoreIOManager
from claims_pipeline.judge.providers.base import JudgeProvider
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState

if TYPE_CHECKING:
    from claims_pipeline.notify import Reach
    from claims_pipeline.priors import PriorRules


class ClaimsConfig(dg.ConfigurableResource):
    """Which settings file to use, for which deployment: the whole of the code location's run config (the
    launchpad shows these two and nothing of a test's or an entry point's: EntryClaimsConfig). It exposes the
    sections a run needs (home, corpus, prior rules, page fetching, sampling, notifications, the clock), read
    once when the run or the tick starts (config/run_settings.py); the other resources hold this one as a
    resource set up at launch (resources_by_deployment), so a run has one copy of it and reads its settings once.

    config_path: a claims_pipeline YAML file; empty means the usual chain ($CLAIMS_PIPELINE_CONFIG, then
    ./config/claims_pipeline.yaml, else the built-in defaults), the same as the CLI's.
    deployment: demo, local or production (resources_by_deployment).
    """

    config_path: str = ""
    deployment: str = DEFAULT_DEPLOYMENT

    _run: RunSettings | None = PrivateAttr(default=None)
    _prior_rules: "PriorRules | None" = PrivateAttr(default=None)
    _reach: "Reach | None" = PrivateAttr(default=None)

    def given_run(self) -> RunSettings | None:
        """The sections an entry point handed over for its in-process runs (EntryClaimsConfig); None: read the file."""
        return None

    def run_clock(self) -> str:
        """An ISO-8601 instant used as "now"; empty: the wall clock (only an entry point's runs set one)."""
        return ""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._run = self.load()
        # a run's log names its settings once; a sensor's tick (no run) does not: the corpus sensor says them
        # when they differ from its last tick's (defs/automation.py), so the daemon does not repeat them
        if context.log and context.dagster_run is not None:
            context.log.info(self._run.said)

    def load(self) -> RunSettings:
        """The run's sections, read once (a resource lives for one run): the entry point's, else the file's. The
        assets and the other resources take the properties below; defs/storage.py's function-style IO manager
        still calls this for the home (until it holds this resource as a field)."""
        if self._run is None:
            self._run = self.given_run() or RunSettings.read(
                self.config_path, deployment_named(self.deployment, "the claims_config resource's deployment"),
                self.run_clock())
        return self._run

    # ---- the sections a run's assets, checks and sensors take ------------------------------------------------
    @property
    def home_dir(self) -> Path:
        return self.load().home_dir

    @property
    def reports_dir(self) -> Path:
        return self.load().reports_dir

    @property
    def corpus(self) -> CorpusSource:
        return self.load().corpus

    @property
    def prior_rules(self) -> "PriorRules":
        """How claim figures are matched to page numbers (priors, fetch sections), derived once per run."""
        if self._prior_rules is None:
            from claims_pipeline.priors import PriorRules

            run = self.load()
            self._prior_rules = PriorRules.of(run.priors, run.fetch)
        return self._prior_rules

    @property
    def page_fetching(self) -> PageFetching:
        return self.load().page_fetching

    @property
    def page_cache(self) -> PageCacheSpec:
        return self.load().page_cache

    @property
    def sampling(self) -> SamplingSettings:
        return self.load().sampling

    @property
    def linter(self) -> LinterSettings:
        return self.load().linter

    @property
    def judge(self) -> JudgeSettings:
        return self.load().judge

    @property
    def notify(self) -> NotifySettings:
        return self.load().notify

    @property
    def reach(self) -> "Reach":
        """What the run's notifications may reach beyond the public internet, derived once per run."""
        if self._reach is None:
            from claims_pipeline.notify import Reach

            run = self.load()
            self._reach = Reach.of(run.fetch, run.notify, run.deployment)
        return self._reach

    @property
    def config_file(self) -> Path | None:
        return self.load().config_file

    @property
    def said(self) -> str:
        return self.load().said

    def now(self) -> datetime:
        return self.load().now()


class EntryClaimsConfig(ClaimsConfig):
    """ClaimsConfig for an entry point's in-process runs (the CLI, the demo, tests), which the code location
    never serves: clock, the `--now` of a command or a test; given, the sections of the settings the command read
    (RunSettings.given), handed to Dagster as a resource of this one, so its runs do not read them again."""

    clock: str = ""
    given: dg.ResourceDependency[RunSettings | None] = None  # type: ignore[assignment]  # mypy reads the annotation as a descriptor type

    def given_run(self) -> RunSettings | None:
        return self.given

    def run_clock(self) -> str:
        return self.clock


class PageCacheResource(dg.ConfigurableResource):
    """Opens the page cache (index + text blobs) named by the settings, for the length of a step."""

    config: ClaimsConfig

    @contextlib.contextmanager
    def open(self) -> Iterator[PageCache]:
        cache = PageCache.at(self.config.page_cache)
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
        return self.config.page_fetching

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
        epoch = saved_epoch(self.config.home_dir)  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
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
        return self.config.judge

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
        configured = self.config.judge  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
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


def resources_by_deployment(config: Any, *,
                            fixture_web: bool = True) -> dict[str, dict[str, Any]]:
    """The resources of each deployment, as in Dagster's own examples:

    | deployment | fetcher | judge | starts on |
    |---|---|---|---|
    | local | the web, through the SSRF guard | judge.provider's | any valid settings (SQLite cache in the home) |
    | production | the web, through the SSRF guard | judge.provider's | settings meeting config.deployments.PRODUCTION |
    | demo | the fixture web on 127.0.0.1 | the scripted judge unless judge.provider names one | any valid settings |

    config: the claims_config resource, a ClaimsConfig set up at launch (`ClaimsConfig.configure_at_launch(...)`,
    typed Any: what that returns is no public type of Dagster): the other
    resources hold it as a nested resource, and Dagster gives them the run's one instance of it (a fully
    configured instance would be set up again for each). It refuses, when a run or a tick starts it, settings
    its deployment cannot run on (check_deployment). fixture_web=False: the demo's fetcher without its own
    fixture web (`claims-pipeline demo` runs one for its three audits and routes to it)."""

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
    config = EntryClaimsConfig.configure_at_launch(config_path=config_path, deployment=deployment, clock=clock)
    return resources_by_deployment(config, fixture_web=fixture_web)[deployment]


def resources_for_run(run: RunSettings, *, fixture_web: bool = True) -> dict[str, Any]:
    """The resources of an entry point that has read its settings (orchestration/runner.resources_for): its
    in-process runs take the sections as they are, handed over as a resource of the claims_config resource."""
    source = run.config_file
    config = EntryClaimsConfig.configure_at_launch(config_path=str(source) if source else "",
                                                   deployment=run.deployment, clock=run.clock, given=run)
    return resources_by_deployment(config, fixture_web=fixture_web)[run.deployment]


@dg.definitions
def resources() -> dg.Definitions:
    """The code location's resources: the deployment $CLAIMS_PIPELINE_DEPLOYMENT names; the settings are read
    when a run or a sensor tick starts, never here."""
    import os

    deployment = deployment_from_env()
    config_path: str | dg.EnvVar = dg.EnvVar(ENV_CONFIG) if os.environ.get(ENV_CONFIG) else ""
    config = ClaimsConfig.configure_at_launch(config_path=config_path, deployment=deployment)
    return dg.Definitions(resources=resources_by_deployment(config)[deployment])
