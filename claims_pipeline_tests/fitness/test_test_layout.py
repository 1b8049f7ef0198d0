"""The tests are where a newcomer looks for them, and tests and benchmarks stay apart.

- No test file at the top of claims_pipeline_tests/: each folder of tests mirrors a folder of the package
  (claims_pipeline_tests/store/ tests claims_pipeline/store/, steps/pages/ tests steps/pages/), or of the demo
  package, or is one of the few named here with what it holds. support/ holds helpers, never a test.
- No test imports a benchmark (an import, a benchmarks/ folder put on sys.path, a script loaded by its path), and
  no benchmark imports a test: what both need lives in claims_pipeline_tests/support/.
- A test that starts a PostgreSQL server, a Redis broker or a browser carries the marker that lets a contributor
  without them leave it out (pytest -m "not browser and not postgres and not redis").
Read with ast and as text; nothing is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "claims_pipeline_tests"
BENCHMARKS = ROOT / "benchmarks"
# the folders of tests that mirror no folder of a package, and what they hold instead
NOT_MIRRORS = {
    "fitness": "checks of the whole project: docs, comments, the import graph, settings sections, this layout",
    "ui": "the Dagster UI and the report in a real browser (marked browser)",
    "distributed": "the Celery executor and the Kubernetes values (deploy/)",
    "scale": "large synthetic corpora and the UI metadata at scale",
    "support": "helpers the tests and the benchmarks share; no test",
}
MIRRORED = (ROOT / "claims_pipeline", ROOT / "claims_pipeline_demo")
# The tests that may load a benchmark script by its path, and why: none (the synthetic corpus generator the
# scale tests use lives in support/, and benchmarks/make_synthetic_corpus.py is its command).
BENCHMARK_SCRIPT_USERS: dict[str, str] = {}
# what starts a server or a browser, by the marker its tests carry
NEEDS_MARKER = {"postgres": "postgres_server(", "redis": "redis_server(", "browser": "playwright"}


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_no_test_file_sits_at_the_top_of_the_tests_folder():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_every_folder_of_tests_mirrors_a_folder_of_the_package_or_says_what_it_holds():
    stray = []
    for path in _test_files():
        folder = path.parent.relative_to(TESTS)
        top = folder.parts[0]
        if top == "support":
            stray.append(f"{_rel(path)}: support/ holds helpers, not tests")
        elif top not in NOT_MIRRORS and not any((package / folder).is_dir() for package in MIRRORED):
            stray.append(f"{_rel(path)}: claims_pipeline/{folder.as_posix()}/ does not exist (move the test to the "
                         "folder of the module it tests, or name the folder in NOT_MIRRORS with what it holds)")
    assert stray == []


def _imported_tops(tree: ast.AST) -> set[str]:
    """The dotted names a module imports, anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_test_imports_a_benchmark():
    scripts = {p.stem for p in BENCHMARKS.rglob("*.py")}
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue  # names the signs in its own examples
        text = path.read_text(encoding="utf-8")
        imported = {name.split(".")[0] for name in _imported_tops(ast.parse(text))}
        if imported & scripts:
            found.append(f"{_rel(path)} imports {sorted(imported & scripts)}")
        if re.search(r"sys\.path\.(insert|append)\([^\n]*benchmarks", text):
            found.append(f"{_rel(path)} puts benchmarks/ on sys.path")
        loads = "spec_from_file_location" in text and "benchmarks" in text
        if loads and _rel(path) not in BENCHMARK_SCRIPT_USERS:
            found.append(f"{_rel(path)} loads a benchmark script by its path")
    assert found == []


def test_no_benchmark_imports_a_test():
    found = []
    for path in sorted(BENCHMARKS.rglob("*.py")):
        for name in _imported_tops(ast.parse(path.read_text(encoding="utf-8"))):
            if name.split(".")[0] == "claims_pipeline_tests" and not name.startswith("claims_pipeline_tests.support."):
                found.append(f"{_rel(path)} imports {name} (move what it needs to claims_pipeline_tests/support/)")
    assert found == []


def test_a_test_that_starts_a_server_or_a_browser_carries_its_marker():
    unmarked = []
    for path in _test_files():
        text = path.read_text(encoding="utf-8")
        if path == Path(__file__).resolve():
            continue  # names the signs, starts nothing
        for marker, sign in NEEDS_MARKER.items():
            if sign in text and f"pytest.mark.{marker}" not in text:
                unmarked.append(f"{_rel(path)}: uses {sign.rstrip('(')} without pytest.mark.{marker}")
    assert unmarked == []


def test_the_readings_find_a_benchmark_import_and_a_benchmarks_folder_on_the_path():
    """The readings above see what they are meant to, so an empty list of findings means something."""
    tree = ast.parse("import design_metrics\nfrom bench_text import x\ndef f():\n    import bench_judge\n")
    assert {"design_metrics", "bench_text", "bench_judge"} <= _imported_tops(tree)
    assert re.search(r"sys\.path\.(insert|append)\([^\n]*benchmarks", 'sys.path.insert(0, str(ROOT / "benchmarks"))')
