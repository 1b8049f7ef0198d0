"""How thin the Dagster layer is: lines of Python under claims_pipeline/defs/ and the longest asset function
(decorator to last line), at a git revision or in the work tree.

    .venv/bin/python benchmarks/defs_size.py            # the work tree
    .venv/bin/python benchmarks/defs_size.py f4d2f5b    # a commit (read with git show)
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFS = "claims_pipeline/defs"


def sources(rev: str | None, folder: str = DEFS) -> dict[str, str]:
    """The Python files under folder (a path inside the repository), in the work tree or at a git revision."""
    if rev is None:
        return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in sorted((REPO / folder).rglob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, folder], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=REPO, capture_output=True, text=True, check=True).stdout
            for n in names if n.endswith(".py")}


def asset_lengths(files: dict[str, str]) -> list[tuple[int, str, str]]:
    out = []
    for name, text in files.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and any("asset" in ast.unparse(d) for d in node.decorator_list):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                out.append((node.end_lineno - first + 1, name, node.name))
    return sorted(out, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Lines under claims_pipeline/defs/ and the longest asset functions.")
    parser.add_argument("rev", nargs="?", help="a git revision (default: the work tree)")
    rev = parser.parse_args().rev
    files = sources(rev)
    lengths = asset_lengths(files)
    print(f"{rev or 'work tree'}: {sum(t.count(chr(10)) for t in files.values())} lines in {len(files)} files under {DEFS}/")
    for n, name, func in lengths[:3]:
        print(f"  {func} ({name}): {n} lines")


if __name__ == "__main__":
    main()
