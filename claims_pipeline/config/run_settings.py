"""The settings one run works with, as the sections its steps take: picked once per run from the settings (by the
claims_config resource when a run or a tick starts, or by an entry point that has already read them) and handed
to the run's assets, checks, sensors and resources, which never see the whole `Settings`.

The corpus source (it reads the primary allowlist file) is derived here, once per run, when first asked for, as
before, so a run or a tick that does not look at the corpus (a check of the stored audit, a failure sensor) does
not fail on a corpus that is not set. What the core libraries derive from two sections (the prior rules, what
notifications may reach) the claims_config resource derives, once per run too: this module sits with the
settings, below the libraries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from claims_pipeline.config.corpus_source import CorpusSource, corpus_source
from claims_pipeline.config.deployments import check_deployment
from claims_pipeline.config.settings import (
    Deployment,
    FetchSettings,
    JudgeSettings,
    LinterSettings,
    NotifySettings,
    PageCacheSpec,
    PageFetching,
    PriorSettings,
    SamplingSettings,
    Settings,
    find_config_file,
    load_settings,
    settings_source,
)


class RunSettings:
    """The sections of one run's settings, and its clock. Read with `read` (a settings file, as the code
    location's runs do) or made with `given` (settings an entry point read and checked)."""

    def __init__(self, settings: Settings, config_file: Path | None, clock: str = "") -> None:
        self._settings = settings
        self.config_file = config_file  # the file the corpus's extraction.corpus_dir came from, for messages
        self.clock = clock  # an ISO-8601 instant used as "now"; empty: the wall clock

    @classmethod
    def read(cls, config_path: str, deployment: Deployment, clock: str = "") -> RunSettings:
        """Read the file (empty: the usual chain, $CLAIMS_PIPELINE_CONFIG, ./config/claims_pipeline.yaml, else the
        built-in defaults) and check it meets the deployment (production: every missing setting named)."""
        file = Path(config_path) if config_path else find_config_file(None)
        settings = load_settings(file, deployment=deployment)
        check_deployment(settings)
        return cls(settings, file, clock)

    @classmethod
    def given(cls, settings: Settings, clock: str = "") -> RunSettings:
        """The settings an entry point read and checked where it read them (cli.command_settings)."""
        return cls(settings, settings.source_file, clock)

    # ---- the sections, as the settings hold them ------------------------------------------------------------
    @property
    def deployment(self) -> Deployment:
        return self._settings.deployment

    @property
    def home_dir(self) -> Path:
        return self._settings.home_dir

    @property
    def reports_dir(self) -> Path:
        return self._settings.reports_dir

    @property
    def page_cache(self) -> PageCacheSpec:
        return self._settings.page_cache

    @property
    def page_fetching(self) -> PageFetching:
        return self._settings.page_fetching

    @property
    def sampling(self) -> SamplingSettings:
        return self._settings.sampling

    @property
    def linter(self) -> LinterSettings:
        return self._settings.linter

    @property
    def judge(self) -> JudgeSettings:
        return self._settings.judge

    @property
    def notify(self) -> NotifySettings:
        return self._settings.notify

    # ---- derived once per run ---------------------------------------------------------------------------------
    @cached_property
    def corpus(self) -> CorpusSource:
        """Raises CorpusNotSet outside the demo deployment when no corpus is configured, and ConfigError when the
        primary allowlist file cannot be read (each time it is asked for, until it can be built)."""
        return corpus_source(self._settings)

    @property
    def priors(self) -> PriorSettings:
        return self._settings.priors

    @property
    def fetch(self) -> FetchSettings:
        return self._settings.fetch

    @cached_property
    def said(self) -> str:
        """The line a run's log names its settings with."""
        return (f"settings: {settings_source(self._settings.source_file, self._settings.deployment)} · "
                f"home {self._settings.home_dir}")

    def now(self) -> datetime:
        if not self.clock:
            return datetime.now(UTC)
        dt = datetime.fromisoformat(self.clock)
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
