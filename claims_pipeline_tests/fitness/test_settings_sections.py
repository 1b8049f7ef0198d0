"""Below the entry points, every part takes the sections of the settings it needs, never the whole Settings: read with
the call graph of claims_pipeline_tests/support/code_graph.py (ast, nothing imported), the same reading
benchmarks/design_metrics.py's --settings-path figures come from."""

from __future__ import annotations

from pathlib import Path

import claims_pipeline
from claims_pipeline_tests.support.code_graph import settings_path

PACKAGE_DIR = Path(claims_pipeline.__file__).resolve().parent
# The fetch path and the store: below the entry points, they take FetchSettings, PdfSettings, NotifySettings,
# PageFetching or PageCacheSpec, which the entry points (the resources, the commands) pick from the settings.
SECTIONS_ONLY = ("claims_pipeline/web/", "claims_pipeline/store/", "claims_pipeline/notify/",
                 "claims_pipeline/steps/pages/")


def _package_sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE_DIR.parent)): p.read_text(encoding="utf-8") for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def test_the_reading_follows_the_settings_from_the_fetch_resource() -> None:
    """A made-up package in the old shape: the resource's method hands the whole Settings to a step, the step to
    the store (down), the store to a step again (back up); a function taking only a section is not followed."""
    files = {
        "claims_pipeline/config/settings.py": "class Settings: ...\nclass FetchSettings: ...\n",
        "claims_pipeline/defs/resources.py": (
            "from claims_pipeline.config.settings import Settings\n"
            "class FetcherResource:\n"
            "    def refresh(self, settings: Settings) -> None:\n"
            "        from claims_pipeline.steps.pages import refresh_pages\n"
            "        refresh_pages(settings)\n"),
        "claims_pipeline/steps/pages.py": (
            "from claims_pipeline.config.settings import FetchSettings, Settings\n"
            "from claims_pipeline.store import cache\n"
            "def refresh_pages(settings: Settings) -> None:\n"
            "    cache.open_cache(settings)\n"
            "    fetch_only(settings.fetch)\n"
            "def fetch_only(fetch: FetchSettings) -> None: ...\n"
            "def reread(settings: 'Settings | None') -> None: ...\n"),
        "claims_pipeline/store/cache.py": (
            "from claims_pipeline.config.settings import Settings\n"
            "def open_cache(settings: Settings) -> None:\n"
            "    from claims_pipeline.steps.pages import reread\n"
            "    reread(settings)\n"),
    }
    found = settings_path(files)
    assert found.calls == [
        ("claims_pipeline.defs.resources.FetcherResource.refresh", "claims_pipeline.steps.pages.refresh_pages"),
        ("claims_pipeline.steps.pages.refresh_pages", "claims_pipeline.store.cache.open_cache"),
        ("claims_pipeline.store.cache.open_cache", "claims_pipeline.steps.pages.reread"),
    ]
    assert found.files == ["claims_pipeline/defs/resources.py", "claims_pipeline/steps/pages.py",
                           "claims_pipeline/store/cache.py"]
    assert found.back_up == [("claims_pipeline.store.cache.open_cache", "claims_pipeline.steps.pages.reread")]
    assert [s.split(" ")[1] for s in found.signatures] == ["refresh_pages", "reread", "open_cache"]


def test_no_signature_below_the_entry_points_takes_the_whole_settings() -> None:
    """The entry points (defs/, commands/, cli.py, definitions.py, orchestration/, config/) read the settings once
    and pick sections; the steps, the core libraries and the basics take only those."""
    found = settings_path(_package_sources())
    assert found.signatures == [], ("these take the whole Settings; give them the section they need: "
                                    + ", ".join(found.signatures))


def test_the_settings_from_the_fetch_resource_reach_nothing_of_the_fetch_path() -> None:
    found = settings_path(_package_sources())
    assert found.back_up == []
    reached = [f for f in found.files if f.startswith(SECTIONS_ONLY) or f == "claims_pipeline/defs/resources.py"]
    assert reached == [], "the whole Settings is handed on to: " + ", ".join(reached)
