"""The settings object: every section under one `Settings`, with where it came from (file, deployment) and the
locations derived from it (corpus, home, page cache, reports); and the bundles handed to the fetch path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, PrivateAttr, field_validator

from claims_pipeline.common.blob_urls import parse_blob_url
from claims_pipeline.config.config_file import read_config_text
from claims_pipeline.config.environment import (
    DEFAULT_CONFIG_RELPATH,
    DEFAULT_DEPLOYMENT,
    DEMO_CORPUS_DIR,
    ENV_CONFIG,
    ConfigError,
    CorpusNotSet,
    Deployment,
    default_home_dir,
)
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.sections.audit_steps import LinterSettings, PriorSettings, SamplingSettings
from claims_pipeline.config.sections.extraction import ExtractionSettings
from claims_pipeline.config.sections.fetching import FetchSettings, PdfSettings
from claims_pipeline.config.sections.judging import JudgeSettings
from claims_pipeline.config.sections.notifications import NotifySettings
from claims_pipeline.config.sections.page_cache import CacheSettings
from claims_pipeline.config.sections.strict import _folder_or_absent, _Strict


@dataclass(frozen=True, slots=True)
class PageCacheSpec:
    """What opening the page cache needs, derived from the settings once (Settings.page_cache): where its index
    (a SQLAlchemy URL) and its blobs (a folder, or an s3://, gs:// URL) are, and how long the diffs it writes run."""

    db_url: str
    blobs: Path | str
    diff_context_lines: int
    max_diff_lines: int


@dataclass(frozen=True, slots=True)
class PageFetching:
    """What refreshing cited pages needs (Settings.page_fetching): the fetcher's and the PDF reader's sections,
    the page cache, and how old a cached fetch may be before a run that does not force re-reads it."""

    fetch: FetchSettings
    pdf: PdfSettings
    cache: PageCacheSpec
    ttl_days: float


class Settings(_Strict):
    home: Path | None = Field(None, description="Outputs root; default $CLAIMS_PIPELINE_HOME or ~/.claims_pipeline.")
    extraction: ExtractionSettings = ExtractionSettings()
    fetch: FetchSettings = FetchSettings()
    pdf: PdfSettings = PdfSettings()
    priors: PriorSettings = PriorSettings()
    linter: LinterSettings = LinterSettings()
    sampling: SamplingSettings = SamplingSettings()
    cache: CacheSettings = CacheSettings()
    judge: JudgeSettings = JudgeSettings()
    notify: NotifySettings = NotifySettings()
    # Where these settings came from and for which deployment: set by settings_from_dict, never by a config file
    # (not fields, so a `source_file:` or `deployment:` key is an unknown key like any other).
    _source_file: Path | None = PrivateAttr(None)
    _deployment: Deployment = PrivateAttr(DEFAULT_DEPLOYMENT)

    @field_validator("home")
    @classmethod
    def _home_folder(cls, v: Path | None) -> Path | None:
        return _folder_or_absent(v)

    @property
    def source_file(self) -> Path | None:
        return self._source_file

    @property
    def deployment(self) -> Deployment:
        return self._deployment

    # ---- derived locations -------------------------------------------------------------------
    @property
    def corpus_dir(self) -> Path:
        """The corpus root. Outside the demo deployment there is no default: CorpusNotSet says how to set one (a
        config that forgot it must not audit the bundled demo corpus)."""
        if self.extraction.corpus_dir is not None:
            return self.extraction.corpus_dir
        if self._deployment == "demo":
            return DEMO_CORPUS_DIR
        where = self._source_file or f"a config file (${ENV_CONFIG} or ./{DEFAULT_CONFIG_RELPATH.as_posix()})"
        raise CorpusNotSet(f"no corpus: set extraction.corpus_dir in {where} (`claims-pipeline init` writes one; "
                           f"`claims-pipeline demo` runs on the bundled demo corpus)")

    @property
    def home_dir(self) -> Path:
        return self.home if self.home is not None else default_home_dir()

    @property
    def cache_db_url(self) -> str:
        return self.cache.db_url or f"sqlite:///{HomeLayout(self.home_dir).cache_index}"

    @property
    def blob_dir(self) -> Path:
        return self.cache.blob_dir or HomeLayout(self.home_dir).blobs_dir

    @property
    def blob_location(self) -> Path | str:
        """What the page cache's blob store opens: a local folder (a Path), or an s3:// or gs:// URL."""
        if self.cache.blob_url is None:
            return self.blob_dir
        scheme, where = parse_blob_url(self.cache.blob_url)
        return Path(where) if scheme == "file" else self.cache.blob_url

    @property
    def page_cache(self) -> PageCacheSpec:
        return PageCacheSpec(self.cache_db_url, self.blob_location, self.cache.diff_context_lines,
                             self.cache.max_diff_lines)

    @property
    def page_fetching(self) -> PageFetching:
        return PageFetching(self.fetch, self.pdf, self.page_cache, self.cache.ttl_days)

    @property
    def reports_dir(self) -> Path:
        return HomeLayout(self.home_dir).reports_dir

    def primary_allowlist(self) -> frozenset[str]:
        """Hosts from the allowlist file (lines split at '#', stripped, blanks skipped) and the inline list."""
        hosts = {h.strip().lower() for h in self.extraction.primary_allowlist if h.strip()}
        path = self.extraction.primary_allowlist_file
        if path is not None:
            try:
                text = read_config_text(path, "host list")
            except ConfigError as exc:
                where = self.source_file or "<defaults>"
                raise ConfigError(f"{where}: extraction.primary_allowlist_file: {exc}") from None
            for line in text.splitlines():
                host = line.split("#", 1)[0].strip().lower()
                if host:
                    hosts.add(host)
        return frozenset(hosts)
