"""Small corpora written per test (realistic lines modelled on real playbook forms, owned by the project)."""

from __future__ import annotations

from pathlib import Path

import pytest

from claims_pipeline.config.corpus_source import CorpusSource, corpus_source
from claims_pipeline.config.settings import (
    COUNTRIES_PRESET_DIRS,
    COUNTRIES_PRESET_RULES,
    settings_from_dict,
)
from claims_pipeline.corpus.extract import ExtractOptions, extract_corpus, extract_text
from claims_pipeline.corpus.records import Extraction

# The layout most of these tests write (countries/<code>/…, shared/…): the demo's preset, set as its config sets it
COUNTRIES_LAYOUT = {"scope_dirs": list(COUNTRIES_PRESET_DIRS), "scope_rules": list(COUNTRIES_PRESET_RULES),
                    "skip_files": ["test-fixtures.md", "output-template.md", "sections.md"]}


def make_corpus(corpus: Path, **extraction) -> CorpusSource:
    """A corpus in the countries layout (`layout={}` for the defaults: scopes from the folder tree), as an entry
    point derives it from its settings."""
    layout = extraction.pop("layout", COUNTRIES_LAYOUT)
    return corpus_source(settings_from_dict({"extraction": {"corpus_dir": str(corpus), **layout, **extraction}}))


@pytest.fixture
def corpus(tmp_path: Path):
    """write(relpath, text) creates a file under a fresh corpus root; returns the root."""

    def write(rel: str, text: str | bytes) -> Path:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return tmp_path

    return write


def extract_lines(text: str, *, scope: str = "xx", include_secondary: bool = False, **extraction) -> Extraction:
    """Claims of one in-memory file (no disk)."""
    settings = settings_from_dict({"extraction": extraction})
    opts = ExtractOptions.of(settings.extraction, settings.primary_allowlist(), include_secondary=include_secondary)
    out = Extraction()
    extract_text(text, scope=scope, rel=f"countries/{scope}/playbook.md", opts=opts, out=out)
    return out


__all__ = ["make_corpus", "extract_lines", "extract_corpus"]
