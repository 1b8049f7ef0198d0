"""The shape of the package, as figures a reviewer can compare between two revisions: top-level modules, import
cycles between modules, `Any` and `dict[str, Any]` in annotations, the longest functions, and (with
--settings-reads) how many times one `claims-pipeline audit` reads its configuration.

    .venv/bin/python benchmarks/design_metrics.py                 # the work tree
    .venv/bin/python benchmarks/design_metrics.py 1767b41         # a commit (read with git show)
    .venv/bin/python benchmarks/design_metrics.py --settings-reads

An import inside a function counts as an edge too: a late import is still a loop.
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
import defs_size  # noqa: E402  (the same file reader, at a revision or in the work tree)

PACKAGE = "claims_pipeline"


def sources(rev: str | None) -> dict[str, str]:
    return defs_size.sources(rev, PACKAGE)


def module_name(path: str) -> str:
    parts = path[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(name: str, is_package: bool, tree: ast.AST, known: set[str]) -> set[str]:
    """The package's own modules this module imports (anywhere in it), each named as the module it resolves to."""
    out: set[str] = set()
    here = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


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
    n_any = n_dict = 0
    for t in trees.values():
        a, d = any_counts(t)
        n_any += a
        n_dict += d
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
    print(f"longest functions (lines): {', '.join(f'{n} {where}' for n, where in lengths[:top])}")


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


def main() -> None:
    parser = argparse.ArgumentParser(description="Figures of the package's structure.")
    parser.add_argument("rev", nargs="?", help="a git revision (default: the work tree)")
    parser.add_argument("--top", type=int, default=5, help="how many of the longest functions to list")
    parser.add_argument("--settings-reads", action="store_true",
                        help="also run `demo` and `audit` and count how often each reads its configuration")
    parser.add_argument("--config", type=Path, help="the config `audit` uses for --settings-reads (default: the demo's)")
    args = parser.parse_args()
    static_figures(args.rev, args.top)
    if args.settings_reads:
        settings_reads(args.config)


if __name__ == "__main__":
    main()
