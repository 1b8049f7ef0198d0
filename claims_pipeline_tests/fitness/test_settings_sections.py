"""Below the entry points, every part takes the sections of the settings it needs, never the whole Settings: read with
the call graph of claims_pipeline_tests/support/code_graph.py (ast, nothing imported), the same reading
benchmarks/design_metrics.py's --settings-path figures come from."""

from __future__ import annotations

import ast
from pathlib import Path

import claims_pipeline
from claims_pipeline_tests.support.code_graph import settings_path, settings_road

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


# ---- defs/: the Dagster layer takes the run's sections from the claims_config resource ------------------------

DEFS_DIR = PACKAGE_DIR / "defs"
# What reads the settings or derives a section from the whole of them: config/run_settings.py does, once per run,
# for the claims_config resource.
SETTINGS_READERS = frozenset({"Settings", "load_settings", "settings_from_dict", "corpus_source"})
# What mutates a container in place: a module-level name mutated by a function is state kept between runs.
MUTATORS = frozenset({"clear", "update", "setdefault", "pop", "popitem", "append", "extend", "add", "discard",
                      "remove", "insert"})


def _defs_trees() -> dict[str, ast.Module]:
    return {str(p.relative_to(PACKAGE_DIR.parent)): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(DEFS_DIR.rglob("*.py"))}


def settings_reads_in(path: str, tree: ast.Module) -> list[str]:
    """Where a defs/ module imports what reads or derives the settings, or calls `<resource>.load()` (the whole
    run's settings, as assets did before the resource exposed its sections)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"{path}:{node.lineno} imports {a.name}" for a in node.names if a.name in SETTINGS_READERS]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load"
              and not node.args and path != "claims_pipeline/defs/resources.py"):
            found.append(f"{path}:{node.lineno} calls {ast.unparse(node.func)}()")
    return found


def module_state_in(path: str, tree: ast.Module) -> list[str]:
    """Module-level names a function of the module mutates (`NAME[k] = v`, `NAME.clear()`, `global NAME`): state
    that outlives a run, as the settings parked for a run by an entry point were."""
    top = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
           for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    found = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.update(f"{path}: global {name}" for name in node.names)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else node.targets if isinstance(node, ast.Delete) else []
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in top:
                    found.add(f"{path}: {t.value.id}[...] written in {fn.name}")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in top):
                found.add(f"{path}: {node.func.value.id}.{node.func.attr}() in {fn.name}")
    return sorted(found)


def test_the_reading_of_defs_finds_settings_reads_and_module_state() -> None:
    """The old shape, as main had it: a global parked by an entry point, taken back inside the run, and an asset
    deriving its corpus source from the whole settings."""
    old = ast.parse(
        "from claims_pipeline.config.settings import Settings, load_settings\n"
        "from claims_pipeline.config.corpus_source import corpus_source\n"
        "_ENTRY_SETTINGS: dict[str, Settings] = {}\n"
        "def entry_settings_key(settings):\n"
        "    _ENTRY_SETTINGS.clear()\n"
        "    _ENTRY_SETTINGS['k'] = settings\n"
        "def claims(claims_config):\n"
        "    return corpus_source(claims_config.load())\n")
    assert settings_reads_in("claims_pipeline/defs/x.py", old) == [
        "claims_pipeline/defs/x.py:1 imports Settings", "claims_pipeline/defs/x.py:1 imports load_settings",
        "claims_pipeline/defs/x.py:2 imports corpus_source", "claims_pipeline/defs/x.py:8 calls claims_config.load()"]
    assert module_state_in("claims_pipeline/defs/x.py", old) == [
        "claims_pipeline/defs/x.py: _ENTRY_SETTINGS.clear() in entry_settings_key",
        "claims_pipeline/defs/x.py: _ENTRY_SETTINGS[...] written in entry_settings_key"]


def test_no_module_in_defs_reads_the_settings() -> None:
    """Assets, checks, sensors, schedules and resources take the sections the claims_config resource exposes
    (home_dir, corpus, prior_rules, page_fetching, sampling, notify, reach, now()); none reads or derives them."""
    found = [line for path, tree in _defs_trees().items() for line in settings_reads_in(path, tree)]
    assert found == [], "read the sections from the claims_config resource instead: " + "; ".join(found)


def test_no_module_in_defs_keeps_state_in_a_global() -> None:
    """The settings reach a run as a resource (the CLI's included), so nothing in defs/ parks them, or anything
    else, in a module global between runs."""
    found = [line for path, tree in _defs_trees().items() for line in module_state_in(path, tree)]
    assert found == [], "; ".join(found)


def test_the_settings_of_an_audit_reach_its_runs_as_a_resource_not_a_global() -> None:
    """design_metrics' --settings-road, on this tree: the command's settings go to Dagster inside the
    claims_config resource (EntryClaimsConfig), parked in no module global, and no asset module holds them."""
    road = settings_road(_package_sources())
    assert road.globals == []
    assert road.resources == ["claims_pipeline.defs.resources.EntryClaimsConfig"]
    assert [f for f in road.files if f.startswith("claims_pipeline/defs/")] == ["claims_pipeline/defs/resources.py"]
    assert road.back_up == []
