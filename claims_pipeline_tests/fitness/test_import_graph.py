"""The package's import graph has no cycle: every import counts, at the top of a module, inside a function or
under TYPE_CHECKING (a late import is still a loop: the two modules cannot be read, or split, one without the
other). Read with ast from the source files, so nothing is imported to check it.

Checked at two grains: modules, and the package's parts (claims_pipeline.store, claims_pipeline.web, ...), where
a loop means two layers each lean on the other. The whole package is held to none at both grains; run as a
module from the repository root (python -m claims_pipeline_tests.fitness.test_import_graph), it prints every
cycle found.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import claims_pipeline

# the import resolution benchmarks/design_metrics.py reports with (one reading of an import, in one place)
from claims_pipeline_tests.support.code_graph import imports_of

PACKAGE_DIR = Path(claims_pipeline.__file__).resolve().parent
PACKAGE = PACKAGE_DIR.name
# the parts held to no cycle, at both grains; a cycle that touches any of them fails


def _module_files() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package's __init__)."""
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def module_graph() -> dict[str, set[str]]:
    """Each module's imports of the package's own modules. A package's __init__ importing its own submodules is
    left out (as benchmarks/design_metrics.py does): a submodule's `from pkg import sibling` runs pkg/__init__
    first, so every package that re-exports would otherwise show as a loop, though no module needs another that
    needs it."""
    files = _module_files()
    graph = {name: imports_of(name, is_package, ast.parse(path.read_text(encoding="utf-8")), set(files))
             for name, (path, is_package) in files.items()}
    return {name: {m for m in imported if not (files[name][1] and m.startswith(name + "."))}
            for name, imported in graph.items()}


def part_graph(modules: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The same edges between the package's parts (its subpackages and top-level modules)."""

    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for module, imported in modules.items():
        graph.setdefault(part(module), set()).update(part(m) for m in imported if part(m) != part(module))
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import one another, directly or around a loop (networkx's strongly connected
    components of more than one node), sorted."""
    import networkx as nx

    g = nx.DiGraph([(a, b) for a, targets in graph.items() for b in targets])
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def loop_through(group: list[str], graph: Mapping[str, set[str]]) -> str:
    """One import loop inside a cycle group, as 'a -> b -> a', for the failure message."""
    members = set(group)
    path = [group[0]]
    while True:
        nxt = min(m for m in graph[path[-1]] if m in members)
        if nxt in path:
            return " -> ".join(path[path.index(nxt):] + [nxt])
        path.append(nxt)


def test_the_graph_is_read_from_every_module() -> None:
    graph = module_graph()
    # the graph must see what it checks: a late import (inside a function) and one under TYPE_CHECKING
    assert "claims_pipeline.store.object_blobs" in graph["claims_pipeline.store.blob_stores"]
    assert "claims_pipeline.store.blobs" in graph["claims_pipeline.store.object_blobs"]
    assert "claims_pipeline.config.settings" in graph["claims_pipeline.web.pdf_text"]
    assert len(graph) > 100


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert loop_through(["a", "b", "c"], graph) == "a -> b -> c -> a"


def test_no_module_cycle_in_the_package() -> None:
    graph = module_graph()
    found = cycles(graph)
    assert found == [], "import cycles: " + "; ".join(loop_through(g, graph) for g in found)


def test_no_cycle_between_the_package_parts() -> None:
    graph = part_graph(module_graph())
    found = cycles(graph)
    assert found == [], "cycles between parts: " + "; ".join(loop_through(g, graph) for g in found)



def test_no_asset_or_check_module_imports_the_jobs_that_select_it():
    """Assets and jobs both take the group names from defs/groups.py: an asset module importing defs/jobs.py would
    tie what a job selects to what it is made of."""
    modules = module_graph()
    defs = f"{PACKAGE}.defs."
    rooms = [m for m in modules if m.startswith(defs) and m.rpartition(".")[2] in ("assets", "checks")]
    assert len(rooms) >= 6, rooms  # corpus, pages, priors, audit, verdicts, worklist at least
    assert [m for m in rooms if f"{defs}jobs" in modules[m]] == []


def main() -> None:
    """Print every cycle of the package."""
    modules = module_graph()
    for label, graph in (("modules", modules), ("parts", part_graph(modules))):
        found = cycles(graph)
        print(f"import cycles between {label}: {len(found)}")
        for group in found:
            print(f"  {loop_through(group, graph)}")


if __name__ == "__main__":
    main()
