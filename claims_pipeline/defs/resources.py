"""Resources, chosen by deployment in one place (`default_resources`): the settings and the clock, the page
cache, the fetcher, and the IO manager of the per-scope values.

Production: the fetcher talks to the web through the SSRF guard, nothing else. Demo (the corpus is the bundled
demo corpus): the same fetcher, plus the bundled fixture web started for the run on loopback at the epoch the
demo left (demo/routes.py), so the UI sees what the demo's last audit saw.
"""


import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from claims_pipeline.config.settings import (
    ENV_CONFIG,
    JudgeSettings,
    Settings,
    find_config_file,
    load_settings,
    settings_source,
)
from claims_pipeline.defs.storage import scope_store_io_manager
from claims_pipeline.judge.providers.base import JudgeProvider
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState

# The settings of the run executing in this process, by (run id, config_path): Dagster initializes a separate copy
# of ClaimsConfig for each resource that holds one (page cache, fetcher, judge, IO manager), and every copy takes
# the run's one read. Only the latest run is kept (a run worker executes one run; the CLI runs one after another).
_RUN_SETTINGS: dict[tuple[str, str], Settings] = {}
_SAID_OUTSIDE_RUNS: dict[str, str] = {}  # config_path -> the settings line a sensor tick last logged


class ClaimsConfig(dg.ConfigurableResource):
    """Which settings file to use and what time it is.

    config_path: a claims_pipeline YAML file; empty means the usual chain ($CLAIMS_PIPELINE_CONFIG, then
    ./config/claims_pipeline.yaml, else the built-in defaults), the same as the CLI's.
    clock: an ISO-8601 instant used as "now" for fetch times and the audit date; empty means the wall clock.
    """

    config_path: str = ""
    clock: str = ""

    _settings: Settings | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        key = (context.run_id or "", self.config_path)
        if context.run_id and key in _RUN_SETTINGS:
            self._settings = _RUN_SETTINGS[key]
            return
        settings = self.load()
        if context.run_id:
            _RUN_SETTINGS.clear()
            _RUN_SETTINGS[key] = settings
        line = f"settings: {settings_source(self.config_file())} · home {settings.home_dir}"
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
            self._settings = load_settings(self.config_file())
        return self._settings

    def now(self) -> datetime:
        if not self.clock:
            return datetime.now(UTC)
        dt = datetime.fromisoformat(self.clock)
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


class PageCacheResource(dg.ConfigurableResource):
    """Opens the page cache (index + text blobs) named by the settings, for the length of a step."""

    config: ClaimsConfig

    @contextlib.contextmanager
    def open(self) -> Iterator[PageCache]:
        cache = PageCache.from_settings(self.config.load())
        try:
            yield cache
        finally:
            cache.close()


class FetcherResource(dg.ConfigurableResource):
    """The polite fetcher's settings for a run. force_refresh: the audit re-reads every cited page."""

    config: ClaimsConfig
    force_refresh: bool = True

    def settings(self) -> Settings:
        return self.config.load()

    def refresh(self, settings: Settings, urls: list[str], cache: PageCache, now: datetime,
                run_id: str | None = None) -> dict[str, PageState]:
        """Fetch `urls` into the cache; run_id (defs/fetch_runs.py) lets a retry from failure resume where the
        failed or killed run stopped. Without the texts: the priors read each text from the cache."""
        from claims_pipeline.steps.pages.refresh import refresh_pages

        return refresh_pages(settings, urls, cache=cache, force=self.force_refresh, now=now, run_id=run_id,
                             with_text=False)


class DemoFetcherResource(FetcherResource):
    """The fetcher for the bundled demo corpus: starts the fixture web on an ephemeral 127.0.0.1 port for the
    run and routes the demo's fictional hosts to it (and nowhere else)."""

    fixture_epoch: int = 0  # 0: the epoch the last `claims-pipeline demo` left in its home

    _address: str | None = PrivateAttr(default=None)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["DemoFetcherResource"]:
        from claims_pipeline_demo.fixture_web.server import FixtureWeb
        from claims_pipeline_demo.routes import saved_epoch

        epoch = self.fixture_epoch or saved_epoch(self.config.load().home_dir)  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
        with FixtureWeb() as web:
            web.set_epoch(epoch)
            self._address = f"127.0.0.1:{web.port}"
            if context.log:
                context.log.info(f"demo: fixture web for the demo hosts on http://{self._address} (epoch {epoch})")
            yield self

    def settings(self) -> Settings:
        from claims_pipeline_demo.routes import with_fixture_routes

        s = self.config.load()  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
        return with_fixture_routes(s, self._address) if self._address else s


class JudgeResource(dg.ConfigurableResource):
    """The verdict step's model provider, as judge.provider in the settings names it (none, anthropic,
    openai-compatible). api_key: from the environment only (dg.EnvVar of judge.api_key_env), never a file."""

    config: ClaimsConfig
    api_key: str | None = None

    def settings(self) -> JudgeSettings:
        return self.config.load().judge

    def provider(self) -> JudgeProvider:
        from claims_pipeline.judge.providers import make_provider

        judge = self.settings()
        return make_provider(judge, environ={judge.effective_api_key_env: self.api_key} if self.api_key else {})

    @property
    def scripted(self) -> bool:
        return False


class DemoJudgeResource(JudgeResource):
    """The demo's judge: the scripted judge server on 127.0.0.1, answered through the real anthropic SDK, so
    the demo shows verdicts with no key and no network. Its verdicts are labelled as the scripted demo judge's."""

    _judge: JudgeSettings | None = PrivateAttr(default=None)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["DemoJudgeResource"]:
        from claims_pipeline_demo.scripted_judge import ScriptedJudgeServer, demo_answerer, demo_judge_settings

        with ScriptedJudgeServer(demo_answerer) as server:
            self._judge = demo_judge_settings(server, self.config.load().judge)  # type: ignore[union-attr]  # an inherited resource field reads as Any | PartialResource to mypy
            if context.log:
                context.log.info(f"demo: scripted judge on {server.anthropic_url} (the project's figure readers, not a model)")
            yield self

    def settings(self) -> JudgeSettings:
        return self._judge if self._judge is not None else super().settings()

    def provider(self) -> JudgeProvider:
        from claims_pipeline.judge.providers import make_provider
        from claims_pipeline_demo.scripted_judge import DEMO_ENV

        return make_provider(self.settings(), environ=DEMO_ENV)

    @property
    def scripted(self) -> bool:
        return True


def default_resources(config_path: str | dg.EnvVar | None = None, *, fixture_web: str = "auto",
                      clock: str = "") -> dict[str, Any]:
    """The resources of a deployment. fixture_web: "auto" = the demo's fetcher when the corpus is the bundled
    demo corpus, else production's; "on" / "off" force one."""
    from claims_pipeline_demo.routes import is_demo_corpus

    config = ClaimsConfig(config_path=config_path or "", clock=clock)
    try:  # the file a deployment names, read once here to choose its resources
        path = os.environ.get(ENV_CONFIG, "") if isinstance(config_path, dg.EnvVar) else (config_path or "")
        loaded: Settings | None = ClaimsConfig(config_path=path).load()
    except Exception:
        if fixture_web == "auto":
            raise  # which fetcher cannot be chosen: the file's own error, with file and key
        loaded = None  # a bad config fails the run that loads it, with its own message
    demo = is_demo_corpus(loaded) if fixture_web == "auto" and loaded is not None else fixture_web == "on"
    fetcher = DemoFetcherResource(config=config) if demo else FetcherResource(config=config)
    # the demo's scripted judge stands in only when no judge is configured: a configured one is used as configured
    scripted = demo and (loaded is None or loaded.judge.provider == "none")
    judge = DemoJudgeResource(config=config) if scripted else JudgeResource(config=config, api_key=judge_key(loaded))
    return {
        "judge": judge,
        "claims_config": config,
        "page_cache": PageCacheResource(config=config),
        "fetcher": fetcher,
        "io_manager": scope_store_io_manager,
    }


def judge_key(settings: Settings | None) -> Any:
    """dg.EnvVar of the judge's key variable when it is set (the value is read at run time, never stored)."""
    if settings is None:
        return None
    var = settings.judge.effective_api_key_env
    return dg.EnvVar(var) if os.environ.get(var) else None


@dg.definitions
def resources() -> dg.Definitions:
    configured = bool(os.environ.get(ENV_CONFIG))
    return dg.Definitions(resources=default_resources(dg.EnvVar(ENV_CONFIG) if configured else None))
