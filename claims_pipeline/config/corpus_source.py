"""The corpus as the corpus library reads it, derived once from the settings at an entry point (a command's run,
an asset, the sensor) and passed down instead of the whole Settings: the root folder, the extraction section
(which files, which scopes, what a claim is), the listed official hosts and the config file they came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from claims_pipeline.config.settings import ExtractionSettings, Settings


@dataclass(frozen=True)
class CorpusSource:
    root: Path
    extraction: ExtractionSettings
    # extraction.primary_allowlist and the hosts of its file, read once here (not by every walk of the corpus)
    primary_hosts: frozenset[str] = frozenset()
    config_file: Path | None = None  # named in the hints of a walk that read nothing


def corpus_source(settings: Settings) -> CorpusSource:
    """Raises CorpusNotSet outside the demo deployment when no corpus is configured, and ConfigError when the
    primary allowlist file cannot be read."""
    return CorpusSource(settings.corpus_dir, settings.extraction, settings.primary_allowlist(), settings.source_file)
