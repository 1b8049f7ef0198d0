"""The shape of the package, as figures a reviewer can compare between two revisions: top-level modules, import
cycles between modules, `Any` and `dict[str, Any]` in annotations, the longest functions, (with
--settings-reads) how many times one `claims-pipeline audit` reads its configuration, and (with
--settings-path) how far the whole settings object travels from the fetch resource.

    .venv/bin/python benchmarks/design_metrics.py                 # the work tree
    .venv/bin/python benchmarks/design_metrics.py 1767b41         # a commit (read with git show)
    .venv/bin/python benchmarks/design_metrics.py --settings-reads
    .venv/bin/python benchmarks/design_metrics.py ea71323 --settings-path

An import inside a function counts as an edge too: a late import is still a loop.

--settings-path reads a call graph from the source with ast (nothing is imported; the reading and its limits:
claims_pipeline_tests/support/code_graph.py, which the fitness tests share) and follows the calls that hand on
the whole `Settings` from the fetch resource: the distinct files of the functions on those calls, how many of
the calls go back up (from a lower layer to a higher one, in the order of docs/design.md's layer table), and
the function signatures below the entry points that take the whole `Settings`.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))
import defs_size  # noqa: E402  (the same file reader, at a revision or in the work tree)

from claims_pipeline_tests.support.code_graph import (  # noqa: E402
    FETCH_RESOURCE,
    LONG_MODULE_LINES,
    imports_of,
    module_name,
    settings_path,
    settings_road,
)

PACKAGE = "claims_pipeline"


def sources(rev: str | None) -> dict[str, str]:
    return defs_size.sources(rev, PACKAGE)


def cycle_groups(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Groups of more than one module that import one another (strongly connected components), sorted."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, targets in graph.items() for b in targets)
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def any_counts(tree: ast.AST) -> tuple[int, int]:
    """`Any` names and `dict[str, Any]` subscripts anywhere in the module's code (annotations and aliases)."""
    n_any = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "Any")
    n_dict = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Subscript) and ast.unparse(n).replace(" ", "")
                 in ("dict[str,Any]", "Dict[str,Any]"))
    return n_any, n_dict


def function_lengths(path: str, tree: ast.AST) -> list[tuple[int, str]]:
    return [(n.end_lineno - n.lineno + 1, f"{path}:{n.lineno} {n.name}") for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno is not None]




def maintainability(files: Mapping[str, str]) -> list[tuple[float, str]] | None:
    """radon's maintainability index of each module (as `radon mi` computes it), lowest first; None when radon
    is not installed (it is no dependency of the project: `pip install radon` to see these figures)."""
    try:
        from radon.metrics import mi_visit  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return None
    return sorted((round(mi_visit(text, True), 2), path) for path, text in files.items())


def static_figures(rev: str | None, top: int) -> None:
    files = sources(rev)
    trees = {p: ast.parse(t) for p, t in files.items()}
    names = {p: module_name(p) for p in files}
    known = set(names.values())
    graph = {names[p]: imports_of(names[p], p.endswith("__init__.py"), trees[p], known) for p in files}
    # a package's __init__ importing its own submodules is not a loop in the design sense
    for mod, deps in graph.items():
        graph[mod] = {d for d in deps if not (d.startswith(mod + ".") and files.get(mod.replace(".", "/") + "/__init__.py") is not None)}
    loops = cycle_groups(graph)
    # the same at the level of the package's parts (claims_pipeline.store, claims_pipeline.config.settings, ...)
    def part(m: str) -> str:
        return ".".join(m.split(".")[:2])
    parts: dict[str, set[str]] = {}
    for mod, deps in graph.items():
        parts.setdefault(part(mod), set()).update(part(d) for d in deps if part(d) != part(mod))
    part_loops = cycle_groups(parts)
    top_level = sorted(p for p in files if p.count("/") == 1 and not p.endswith("__init__.py"))
    n_any = n_dict = steps_any = steps_dict = 0
    for p, t in trees.items():
        a, d = any_counts(t)
        n_any += a
        n_dict += d
        if p.startswith(f"{PACKAGE}/steps/"):  # the layer meant to be typed
            steps_any += a
            steps_dict += d
    lengths = sorted((x for p, t in trees.items() for x in function_lengths(p, t)), reverse=True)
    print(f"revision: {rev or 'work tree'}")
    print(f"python files in {PACKAGE}/: {len(files)}, lines {sum(t.count(chr(10)) for t in files.values())}")
    print(f"top-level modules: {len(top_level)} ({', '.join(Path(p).stem for p in top_level)})")
    print(f"import cycles (strongly connected groups of modules): {len(loops)}")
    for comp in loops:
        print(f"  {' <-> '.join(comp)}")
    print(f"cycles between the package's parts: {len(part_loops)}")
    for comp in part_loops:
        print(f"  {' <-> '.join(comp)}")
    print(f"Any in code: {n_any}; dict[str, Any]: {n_dict}")
    print(f"  in steps/: Any {steps_any}; dict[str, Any]: {steps_dict}")
    print(f"longest functions (lines): {', '.join(f'{n} {where}' for n, where in lengths[:top])}")
    long = sorted(((t.count(chr(10)), p) for p, t in files.items() if t.count(chr(10)) > LONG_MODULE_LINES), reverse=True)
    print(f"modules over {LONG_MODULE_LINES} lines: {len(long)}{': ' if long else ''}{', '.join(f'{p} {n}' for n, p in long)}")
    mi = maintainability(files)
    if mi is None:
        print("maintainability index: radon not installed")
    else:
        low = [x for x in mi if x[0] < 10]  # radon's rank C
        print(f"maintainability index (radon) under 10: {len(low)}; lowest: {', '.join(f'{p} {v:g}' for v, p in mi[:top])}")


def settings_reads(config: Path | None) -> None:
    """Run one `demo`, then one `audit` in the demo deployment on the demo's settings (its fixture web on
    loopback), and count load_settings calls."""
    with tempfile.TemporaryDirectory(prefix="design-metrics-") as home:
        counter = Path(home) / "reads"
        code = (
            "import sys, claims_pipeline.config.settings as s\n"
            f"counter = open({str(counter)!r}, 'a')\n"
            "real = s.load_settings\n"
            "def counted(*args, **kwargs):\n"
            "    counter.write(repr(args) + '\\n'); counter.flush()\n"
            "    return real(*args, **kwargs)\n"
            "s.load_settings = counted\n"
            "from claims_pipeline.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n"
        )
        env = {**os.environ, "CLAIMS_PIPELINE_HOME": home, "PYTHONPATH": str(REPO), "CLAIMS_PIPELINE_DEPLOYMENT": "demo"}
        for argv in (["demo", "--home", str(Path(home) / "demo")],
                     ["audit", "--config", str(config or Path(home) / "demo" / "demo.yaml")]):
            counter.write_text("")
            proc = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True,
                                  timeout=900)
            reads = counter.read_text().splitlines()
            print(f"settings reads by `claims-pipeline {argv[0]}`: {len(reads)} (exit {proc.returncode})")
            if proc.returncode:
                print(proc.stderr[-2000:])


def settings_road_figures(rev: str | None) -> None:
    road = settings_road(sources(rev))
    short = [h.removeprefix(PACKAGE + ".") for h in road.holders]
    print(f"settings' road from `claims-pipeline audit` into its runs: {len(road.holders)} functions, "
          f"{len(road.files)} files, {len(road.globals)} module globals parked in, "
          f"{len(road.resources)} resources handed to Dagster, {len(road.back_up)} back up")
    print(f"  files: {', '.join(f.removeprefix(PACKAGE + '/') for f in road.files)}")
    print(f"  globals: {', '.join(road.globals) or 'none'}; resources: {', '.join(road.resources) or 'none'}")
    for a, b in road.back_up:
        print(f"  back up: {a} -> {b}")
    print(f"  functions: {', '.join(short)}")


def settings_path_figures(rev: str | None) -> None:
    found = settings_path(sources(rev))
    short = {c: c.removeprefix(PACKAGE + ".") for call in found.calls for c in call}
    print(f"settings path from {FETCH_RESOURCE.rpartition('.')[2]} (calls handing on the whole Settings): "
          f"{len(found.calls)} calls, {len(found.files)} files crossed, {len(found.back_up)} back up")
    for a, b in found.calls:
        print(f"  {short[a]} -> {short[b]}{'   (back up)' if (a, b) in found.back_up else ''}")
    print(f"signatures below the entry points taking the whole Settings: {len(found.signatures)}")
    for where in found.signatures:
        print(f"  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Figures of the package's structure.")
    parser.add_argument("rev", nargs="?", help="a git revision (default: the work tree)")
    parser.add_argument("--top", type=int, default=5, help="how many of the longest functions to list")
    parser.add_argument("--settings-reads", action="store_true",
                        help="also run `demo` and `audit` and count how often each reads its configuration")
    parser.add_argument("--config", type=Path, help="the config `audit` uses for --settings-reads (default: the demo's)")
    parser.add_argument("--settings-path", action="store_true",
                        help="also follow the whole Settings from the fetch resource, and count the signatures "
                        "below the entry points that take it")
    parser.add_argument("--settings-road", action="store_true",
                        help="also follow the settings of one `audit` from the command into its runs (functions, "
                        "files, globals, resources, hand-ons back up)")
    args = parser.parse_args()
    static_figures(args.rev, args.top)
    if args.settings_path:
        settings_path_figures(args.rev)
    if args.settings_road:
        settings_road_figures(args.rev)
    if args.settings_reads:
        settings_reads(args.config)


if __name__ == "__main__":
    main()
