"""The docs (README.md, docs/*.md) and the package's module docstrings name files and functions that exist.

Two kinds of reference are checked, each matched narrowly so that a failure is a real stale name:
- a repository file path: a relative path with a file extension whose first folder is one of the repository's
  top-level folders or one of the package's subpackages (`claims_pipeline/x/y.py`, `steps/stored.py`,
  `benchmarks/design_metrics.py`). It must exist relative to the repository root, the package, the doc's own
  folder, or (in a docstring) the module's package.
- a dotted name in backticks (`module.function`, `Class.method`, `settings.section.key`, `pkg/module.name`) whose
  first part is the project's: `claims_pipeline`, a module or subpackage name of the package, a class the
  package defines, `settings` or a settings section. It must resolve: by importing the module and following the
  attributes (dataclass, pydantic and annotated fields count), or as a settings key. A name whose first part is
  not the project's (`dg.asset`, `asyncio.to_thread`, a variable) is not checked; nor is a file name such as
  `verdicts.json` (its last part a file extension).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "claims_pipeline"

# Deliberate exceptions: (doc, the reference as written) → why it is right although it does not resolve.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("docs/operations.md", "notify/state.json"): "a file in the home (<home>/notify/state.json), in the table of the "
                                                 "home's files, not the package's notify/ folder",
    ("docs/ci-example.md", "config/claims_pipeline.yaml"): "the settings file of the user's knowledge base, which "
                                                           "`init` writes; a clone ships none (git ignores it)",
    ("docs/configuration.md", "config/claims_pipeline.yaml"): "the settings file `init` writes in the folder the "
                                                              "command runs in; a clone ships none",
}

FILE_EXTENSIONS = ("py", "md", "yaml", "yml", "toml", "json", "j2", "sh", "txt", "html", "css", "cfg", "ini", "s",
                   "sql", "png", "patch")
# a path starts at a boundary (not inside a URL, a longer path, `~/…` or `<home>/…`)
PATH = re.compile(r"(?<![\w/.:~$<>@-])((?:[A-Za-z_][\w.-]*/)+[\w.-]+\.(?:" + "|".join(FILE_EXTENSIONS) + r"))(?![\w/])")
BACKTICKED = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"^((?:[A-Za-z_]\w*/)*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?=$|[(\s\[,:;])")
NOT_NAMES = frozenset(FILE_EXTENSIONS) | {"sqlite", "db", "lock", "log", "gz", "csv", "diff", "pdf", "v2", "env",
                                          "example", "org", "com", "net", "invalid", "test", "local"}


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def module_docstrings() -> Iterator[tuple[Path, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if doc:
            yield path, doc


@cache
def top_folders() -> frozenset[str]:
    """The first folder a repository path may start with: the repository's folders and the package's."""
    repo = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    package = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")}
    return frozenset(repo | package)


@cache
def module_names() -> dict[str, list[str]]:
    """A module's or subpackage's last name → the full names of every module so named."""
    out: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        out.setdefault(parts[-1], []).append(".".join(parts))
    return out


@cache
def class_modules() -> dict[str, list[str]]:
    """A class the package defines → the modules defining it."""
    out: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(name)
    return out


def has_member(obj: Any, name: str) -> tuple[bool, Any]:
    if hasattr(obj, name):
        return True, getattr(obj, name)
    if isinstance(obj, type):
        if issubclass(obj, BaseModel) and name in obj.model_fields:
            return True, obj.model_fields[name].annotation
        for klass in obj.__mro__:
            fields = getattr(klass, "__dataclass_fields__", {}) or {}
            if name in fields or name in getattr(klass, "__annotations__", {}):
                return True, None
    return False, None


def follows(obj: Any, attrs: list[str]) -> bool:
    for attr in attrs:
        ok, obj = has_member(obj, attr)
        if not ok:
            return False
        if obj is None:  # a field without a value on the class: nothing further to follow
            return attr == attrs[-1]
    return True


_MISSING = object()


def found_in_module(module: str, attrs: list[str]) -> Any:
    """What `module` (imported) and attrs name, None for a field without a value, _MISSING when not found."""
    try:
        obj: Any = importlib.import_module(module)
    except ImportError:
        return _MISSING
    for i, attr in enumerate(attrs):
        ok, value = has_member(obj, attr)
        if not ok:  # a submodule its package does not import
            return found_in_module(f"{obj.__name__}.{attr}", attrs[i + 1:]) if isinstance(obj, ModuleType) else _MISSING
        if value is None:
            return None if attr == attrs[-1] else _MISSING
        obj = value
    return obj


def resolves_in_module(module: str, attrs: list[str]) -> bool:
    return found_in_module(module, attrs) is not _MISSING


def settings_key(parts: list[str]) -> bool:
    from claims_pipeline.config.settings import Settings

    obj: Any = Settings
    for part in parts:
        if not (isinstance(obj, type) and issubclass(obj, BaseModel) and part in obj.model_fields):
            return hasattr(obj, part) if obj is Settings else False
        annotation = obj.model_fields[part].annotation
        obj = next((a for a in getattr(annotation, "__args__", (annotation,))
                    if isinstance(a, type) and issubclass(a, BaseModel)), annotation)
    return True


def settings_sections() -> frozenset[str]:
    from claims_pipeline.config.settings import Settings

    return frozenset(Settings.model_fields)


def is_projects(first: str) -> bool:
    return (first in ("claims_pipeline", "settings") or first in module_names() or first in class_modules()
            or first in settings_sections())


def lookup(name: str) -> list[Any]:
    """Every object the name can mean (None: a field or settings key); empty when it names nothing."""
    if "/" in name:  # pkg/module.attr: a module named by its path
        path, _, attr = name.rpartition(".")
        module = path.replace("/", ".")
        found = [found_in_module(m, [attr]) for m in (module, f"claims_pipeline.{module}")]
    else:
        parts = name.split(".")
        first, rest = parts[0], parts[1:]
        if first == "settings":
            return [None] if settings_key(rest) else []
        if first == "claims_pipeline":
            found = [found_in_module(".".join(parts[:i]), parts[i:]) for i in range(len(parts), 0, -1)]
        else:
            found = [found_in_module(m, rest) for m in module_names().get(first, [])]
            found += [found_in_module(m, [first, *rest]) for m in class_modules().get(first, [])]
            if first in settings_sections() and settings_key(parts):
                found.append(None)
    return [f for f in found if f is not _MISSING]


def name_resolves(name: str) -> bool:
    return bool(lookup(name))


def call_problem(name: str, args: str) -> str | None:
    """A call written in a doc (`f(a, b, *, c=None)`) against f's signature: each keyword and each argument written
    as a bare name must be a parameter of f, and there may be no more positional arguments than it takes. None
    when the call fits one of the objects the name can mean (or none of them has a signature to compare)."""
    items = [i.strip() for i in top_level_items(args.replace("…", "").replace("...", ""))]
    if "*" in items:  # a bare name after `*` is a keyword-only parameter: written as a keyword
        star = items.index("*")
        items = items[:star] + [f"{i}=None" if i.isidentifier() else i for i in items[star + 1:]]
    cleaned = ", ".join(i for i in items if i)
    try:
        call = ast.parse(f"f({cleaned})", mode="eval").body
    except SyntaxError:
        return None
    assert isinstance(call, ast.Call)
    said = [a.id for a in call.args if isinstance(a, ast.Name)] + [k.arg for k in call.keywords if k.arg]
    why = []
    for obj in lookup(name):
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
        kinds = {p.kind for p in sig.parameters.values()}
        if inspect.Parameter.VAR_KEYWORD in kinds:
            return None
        positional = [p for p in sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        unknown = [n for n in said if n not in sig.parameters]
        too_many = len(call.args) > len(positional) and inspect.Parameter.VAR_POSITIONAL not in kinds
        if not unknown and not too_many:
            return None
        why.append(f"{name}{sig}" + (f" has no parameter {', '.join(unknown)}" if unknown else
                                     f" takes {len(positional)} positional arguments, not {len(call.args)}"))
    return "; ".join(why) or None


def top_level_items(args: str) -> list[str]:
    """The comma-separated items of an argument list, commas inside brackets kept."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(args[start:i])
            start = i + 1
    return [*items, args[start:]]


CALLED = re.compile(r"^((?:[A-Za-z_]\w*/)*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\(")


def calls_in(text: str) -> Iterator[tuple[str, str]]:
    """(name, the text between its parentheses) of each backticked call of a project name."""
    for span in BACKTICKED.findall(text):
        m = CALLED.match(span.strip())
        if m is None:
            continue
        rest = span.strip()[m.end():]
        depths = itertools.accumulate({"(": 1, ")": -1}.get(ch, 0) for ch in rest)
        close = next((i for i, depth in enumerate(depths) if depth == -1), None)
        name = m.group(1)
        if close is not None and ("/" in name or is_projects(name.split(".")[0])):
            yield name, rest[:close]


def names_in(text: str) -> Iterator[str]:
    for span in BACKTICKED.findall(text):
        m = DOTTED.match(span.strip())
        if m is None:
            continue
        name = m.group(1)
        if name.rsplit(".", 1)[-1].lower() in NOT_NAMES:
            continue  # a file name (verdicts.json), not a Python name
        first = name.split("/")[0].split(".")[0]
        if "/" in name or is_projects(first):
            yield name


def paths_in(text: str) -> Iterator[str]:
    for m in PATH.finditer(text):
        path = m.group(1)
        if path.split("/")[0] in top_folders():
            yield path


BARE_MODULE = re.compile(r"(?<![\w/.:~$<>@-])([A-Za-z_]\w*\.py)(?![\w/])")


@cache
def file_names() -> frozenset[str]:
    """The name of every file in the repository's own folders (a bare `x.py` must be one of them)."""
    return frozenset(p.name for top in (ROOT / f for f in top_folders() if (ROOT / f).is_dir())
                     for p in top.rglob("*.py"))


def bare_modules_in(text: str) -> Iterator[str]:
    yield from BARE_MODULE.findall(text)


def path_exists(path: str, *, near: Path) -> bool:
    return any((base / path).exists() for base in (ROOT, PACKAGE, near))


def problems_of(text: str, where: str, near: Path) -> list[str]:
    out = [f"{where}: file {p} does not exist" for p in paths_in(text)
           if not path_exists(p, near=near) and (where, p) not in EXCEPTIONS]
    out += [f"{where}: file {n} does not exist anywhere in the repository" for n in bare_modules_in(text)
            if n not in file_names() and (where, n) not in EXCEPTIONS]
    out += [f"{where}: `{n}` does not resolve" for n in names_in(text)
            if not name_resolves(n) and (where, n) not in EXCEPTIONS]
    for name, args in calls_in(text):
        problem = call_problem(name, args) if name_resolves(name) else None
        if problem and (where, f"{name}({args})") not in EXCEPTIONS:
            out.append(f"{where}: `{name}({args})` does not fit: {problem}")
    return out


def all_problems() -> list[str]:
    found = []
    for doc in docs():
        found += problems_of(doc.read_text(encoding="utf-8"), str(doc.relative_to(ROOT)), doc.parent)
    for path, docstring in module_docstrings():
        found += problems_of(docstring, str(path.relative_to(ROOT)), path.parent)
    return sorted(set(found))


def test_docs_and_docstrings_name_files_and_functions_that_exist() -> None:
    problems = all_problems()
    assert not problems, "stale references (fix the doc, or add an exception with its reason):\n" + "\n".join(problems)


def test_every_exception_is_still_needed() -> None:
    """An exception whose reference now resolves (or that no doc makes any more) is dropped, not kept."""
    texts = {str(d.relative_to(ROOT)): d.read_text(encoding="utf-8") for d in docs()}
    texts |= {str(p.relative_to(ROOT)): s for p, s in module_docstrings()}
    for (where, ref), reason in EXCEPTIONS.items():
        assert reason.strip(), f"{where}: {ref}: an exception needs its reason"
        refs = set(paths_in(texts[where])) | set(names_in(texts[where])) | set(bare_modules_in(texts[where])) | {f"{n}({a})" for n, a in calls_in(texts[where])}
        assert where in texts and ref in refs, \
            f"{where} no longer names {ref}: drop the exception"


@pytest.mark.parametrize(("text", "expected"), [
    ("see `claims_pipeline/steps/nowhere.py`", ["file claims_pipeline/steps/nowhere.py does not exist"]),
    ("see steps/stored.py and defs/storage.py", []),
    ("shows (audit_tables.py), written by scope_state.py", ["file audit_tables.py does not exist anywhere in the repository"]),
    ("the IO manager (defs/no_such_storage.py)", ["file defs/no_such_storage.py does not exist"]),
    ("`fetcher.fetch_all_urls(urls)`", ["`fetcher.fetch_all_urls` does not resolve"]),
    ("`VerdictRun.merged(runs)` and `steps/stored.StoredStep`", []),
    ("`JudgeRun.no_such_method()`", ["`JudgeRun.no_such_method` does not resolve"]),
    ("`judge.provider`, `settings.judge.max_claims_per_run`", []),
    ("`judge.no_such_key`", ["`judge.no_such_key` does not resolve"]),
    ("`VerdictRun.not_judged(reason, run_at)`, `steps/stored.StoredStep(asset, record)`", []),
    ("`VerdictRun.not_judged(reason, settings)`",
     ["`VerdictRun.not_judged(reason, settings)` does not fit: VerdictRun.not_judged(reason: 'str', "
      "run_at: 'str' = '') -> 'VerdictRun' has no parameter settings"]),
    ("https://example.org/steps/x.py, `dg.asset`, `verdicts.json`, ~/claims_pipeline/x.py", []),
])
def test_the_matching_finds_stale_names_and_only_those(text: str, expected: list[str]) -> None:
    assert [p.removeprefix("doc: ") for p in problems_of(text, "doc", ROOT / "docs")] == expected
