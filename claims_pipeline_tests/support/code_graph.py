"""The package's code read as a graph with ast (nothing imported): the modules each module imports, and how far
the whole `Settings` travels through the calls. benchmarks/design_metrics.py prints the figures; the fitness
tests hold them (claims_pipeline_tests/fitness/test_import_graph.py, test_settings_sections.py).

--settings-path reads a call graph from the source with ast (nothing is imported) and follows the calls that
hand on the whole `Settings`: a call from function f to function g is such a call when g has a parameter
annotated `Settings` (also `Settings | None`; the sections, FetchSettings and the like, are other names). It
starts from the fetch resource: the methods of `FetcherResource` (defs/resources.py) and of its subclasses, and
every function with a parameter annotated as one of them (the assets that use it). It prints the distinct files
of the functions on those calls and how many of the calls go back up: from a lower layer to a higher one, in
the order of docs/design.md's layer table (basics < core libraries < steps < Dagster layer < CLI). A revision
older than that layout (top-level modules such as pages.py, settings.py) places each old module in the layer
its code lives in now (OLD_PARTS). It also counts the function signatures below the entry points (outside
defs/, commands/, cli.py, definitions.py, orchestration/ and config/) that take the whole `Settings`.

What the call graph resolves, and so its limits: calls by a name defined in the module or imported into it
(anywhere in the module, re-exports followed), `module.f()` through an imported module, `Class.f()`,
`self.f()` / `cls.f()` / `super().f()` within a class (its bases, when they are the package's), and `x.f()`
where x is a parameter annotated with one of the package's classes. It does not follow a call through a
variable or a return value whose type it would have to infer (`cache = PageCache(...); cache.f()`), a callable
passed as a value (a callback, a lambda handed to another function: the lambda's own calls count for the
function that writes it), nor dynamic dispatch to a subclass's override. A call it cannot resolve is not
followed: the figures are a floor.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from pathlib import Path

LONG_MODULE_LINES = 600  # the bar for a module to split (issue 33): design_metrics reports it, a test keeps to it

PACKAGE = "claims_pipeline"


def module_name(path: str) -> str:
    parts = path[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_base(here: str, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` names, from the package `here` (a relative import resolved)."""
    base = node.module or ""
    if node.level:
        anchor = here.split(".")
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return base


def imports_of(name: str, is_package: bool, tree: ast.AST, known: set[str]) -> set[str]:
    """The package's own modules this module imports (anywhere in it), each named as the module it resolves to."""
    out: set[str] = set()
    here = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = import_base(here, node)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


# ---- the settings path (--settings-path) -----------------------------------------------------------------

# docs/design.md's layer table, lowest first; a part not listed (the old in-package demo) has no layer
LAYERS = {"common": 0, "config": 0,
          "corpus": 1, "web": 1, "store": 1, "priors": 1, "report": 1, "judge": 1, "notify": 1,
          "steps": 2,
          "defs": 3, "definitions": 3, "orchestration": 3,
          "cli": 4, "commands": 4}
# The top-level modules of a revision before the layout above, by the part their code lives in now
OLD_PARTS = {"settings": "config", "settings_doc": "config", "home": "config", "stopping": "common",
             "text_safety": "common", "urls": "common", "unreadable": "web",
             "pages": "steps", "progress": "steps", "scope_values": "steps", "records_json": "steps",
             "audit": "steps", "audit_tables": "steps", "audit_of_scopes": "steps", "verdicts": "steps",
             "worklist": "steps", "sampling": "steps"}
# Where the settings are read and sections picked: signatures here may take the whole Settings
ENTRY_PARTS = frozenset({"defs", "definitions", "orchestration", "cli", "commands", "config"})
FETCH_RESOURCE = "claims_pipeline.defs.resources.FetcherResource"


def part_of(path: str) -> str:
    """The package's part a file belongs to: claims_pipeline/store/cache.py -> store, claims_pipeline/cli.py -> cli
    (an old top-level module -> the part of OLD_PARTS)."""
    parts = path.split("/")
    name = parts[1] if len(parts) > 2 else Path(parts[1]).stem
    return OLD_PARTS.get(name, name)


def _names_in(annotation: ast.expr | None) -> set[str]:
    """The identifiers an annotation names (also inside a string annotation)."""
    if annotation is None:
        return set()
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return set()
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(annotation)
            if isinstance(n, (ast.Name, ast.Attribute))}


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]


def takes_settings(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A parameter annotated with the whole Settings (Settings, Settings | None, "Settings")."""
    return any("Settings" in _names_in(p.annotation) for p in _parameters(fn))


class CallGraph:
    """The package's functions and classes, by dotted name, and the calls between them that resolve by name."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.path_of: dict[str, str] = {}  # function -> file
        self.node_of: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.class_of: dict[str, str] = {}  # function -> its class (methods)
        self.classes: dict[str, tuple[str, ast.ClassDef]] = {}  # class -> (module, node)
        self.imports: dict[str, dict[str, str]] = {}  # module -> local name -> dotted target
        self.top: dict[str, set[str]] = {}  # module -> its top-level names (functions and classes)
        for path, text in files.items():
            module = module_name(path)
            tree = ast.parse(text)
            self.imports[module] = self._imports(module, path.endswith("__init__.py"), tree)
            self.top[module] = set()
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._add(f"{module}.{node.name}", path, node, None)
                    self.top[module].add(node.name)
                elif isinstance(node, ast.ClassDef):
                    qual = f"{module}.{node.name}"
                    self.classes[qual] = (module, node)
                    self.top[module].add(node.name)
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self._add(f"{qual}.{item.name}", path, item, qual)

    def _add(self, qual: str, path: str, node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None) -> None:
        self.path_of[qual], self.node_of[qual] = path, node
        if cls:
            self.class_of[qual] = cls

    @staticmethod
    def _imports(module: str, is_package: bool, tree: ast.AST) -> dict[str, str]:
        here = module if is_package else module.rpartition(".")[0]
        out: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = import_base(here, node)
                for a in node.names:
                    out[a.asname or a.name] = f"{base}.{a.name}"
        return out

    def resolve(self, dotted: str, depth: int = 0) -> str | None:
        """A dotted name as the function or class it is, following re-exports (`from .x import f` in a package)."""
        if dotted in self.node_of or dotted in self.classes or dotted in self.imports or depth > 8:
            return dotted
        module, _, name = dotted.rpartition(".")
        target = self.imports.get(module, {}).get(name)
        if target is not None and name not in self.top.get(module, set()):
            return self.resolve(target, depth + 1)
        owner = self.resolve(module, depth + 1) if module else None
        if owner in self.classes:
            return self.method(owner, name)
        return None

    def method(self, cls: str, name: str, depth: int = 0) -> str | None:
        """cls.name, or the method a base class of the package's defines."""
        if f"{cls}.{name}" in self.node_of:
            return f"{cls}.{name}"
        for base in self.bases(cls):
            if depth < 8 and (found := self.method(base, name, depth + 1)):
                return found
        return None

    def bases(self, cls: str) -> list[str]:
        module, node = self.classes[cls]
        out = []
        for b in node.bases:
            if isinstance(b, ast.Name) and (q := self.name_in(module, b.id)) in self.classes:
                out.append(q)
        return out

    def name_in(self, module: str, name: str) -> str | None:
        """What a bare name in the module stands for (a function, a class, an imported module)."""
        if name in self.top.get(module, set()):
            return f"{module}.{name}"
        target = self.imports.get(module, {}).get(name)
        return self.resolve(target) if target else None

    def callees(self, fn: str) -> set[str]:
        """The package's functions fn calls, as far as names resolve (the module's docstring says how far)."""
        node = self.node_of[fn]
        module = module_name(self.path_of[fn])
        cls = self.class_of.get(fn)
        typed = {p.arg: q for p in _parameters(node) for n in _names_in(p.annotation)
                 if (q := self.name_in(module, n)) in self.classes}
        out: set[str] = set()
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            target: str | None = None
            f = call.func
            if isinstance(f, ast.Name):
                target = self.name_in(module, f.id)
                if target in self.classes:
                    target = self.method(target, "__init__")
            elif isinstance(f, ast.Attribute):
                owner = f.value
                if isinstance(owner, ast.Name) and owner.id in ("self", "cls") and cls:
                    target = self.method(cls, f.attr)
                elif (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super"
                      and cls):
                    target = next((m for b in self.bases(cls) if (m := self.method(b, f.attr))), None)
                elif isinstance(owner, ast.Name) and owner.id in typed:
                    target = self.method(typed[owner.id], f.attr)
                elif isinstance(owner, ast.Name) and (q := self.name_in(module, owner.id)):
                    target = self.method(q, f.attr) if q in self.classes else self.resolve(f"{q}.{f.attr}")
            if target in self.node_of:
                out.add(target)
        return out

    def subclasses(self, cls: str) -> set[str]:
        found, grew = {cls}, True
        while grew:
            grew = False
            for c in self.classes:
                if c not in found and found & set(self.bases(c)):
                    found.add(c)
                    grew = True
        return found


@dataclasses.dataclass
class SettingsPath:
    calls: list[tuple[str, str]]  # (caller, callee): the callee takes the whole Settings
    files: list[str]  # the files of the functions on those calls
    back_up: list[tuple[str, str]]  # the calls from a lower layer to a higher one
    signatures: list[str]  # below the entry points: "file:line function" taking the whole Settings


def settings_path(files: Mapping[str, str], start: str = FETCH_RESOURCE) -> SettingsPath:
    """Follow the whole Settings from the class `start` (its methods, its subclasses', and the functions with a
    parameter annotated as one of them) through every call whose callee takes it, transitively."""
    graph = CallGraph(files)
    resources = graph.subclasses(start) if start in graph.classes else set()
    module_of = {q: module_name(p) for q, p in graph.path_of.items()}
    starts = {q for q, c in graph.class_of.items() if c in resources}
    for q, node in graph.node_of.items():
        if any(graph.name_in(module_of[q], n) in resources for p in _parameters(node) for n in _names_in(p.annotation)):
            starts.add(q)
    seen, todo, calls = set(starts), sorted(starts), set()
    while todo:
        fn = todo.pop()
        for g in graph.callees(fn):
            if takes_settings(graph.node_of[g]):
                calls.add((fn, g))
                if g not in seen:
                    seen.add(g)
                    todo.append(g)

    def layer(fn: str) -> int | None:
        return LAYERS.get(part_of(graph.path_of[fn]))

    back_up = sorted((a, b) for a, b in calls
                     if (la := layer(a)) is not None and (lb := layer(b)) is not None and lb > la)
    on_path = sorted({graph.path_of[f] for call in calls for f in call})
    below = sorted((graph.path_of[q], node.lineno, q.rpartition(".")[2]) for q, node in graph.node_of.items()
                   if part_of(graph.path_of[q]) not in ENTRY_PARTS and part_of(graph.path_of[q]) in LAYERS
                   and takes_settings(node))
    signatures = [f"{path}:{line} {name}" for path, line, name in below]
    return SettingsPath(sorted(calls), on_path, back_up, signatures)


# ---- the settings' road from the CLI into a run (--settings-road) -------------------------------------------

# The objects that carry the whole settings: Settings, and the run's sections object that holds it
CARRIERS = frozenset({"Settings", "RunSettings"})
CLI_AUDIT = "claims_pipeline.commands.audit.run"


def _carries(annotation: ast.expr | None) -> bool:
    return bool(_names_in(annotation) & CARRIERS)


@dataclasses.dataclass
class SettingsRoad:
    holders: list[str]  # the functions the settings of one `audit` pass through
    files: list[str]  # their files
    globals: list[str]  # module-level names the settings are parked in and taken back from ("module.NAME")
    resources: list[str]  # resource classes the settings are handed to Dagster in
    back_up: list[tuple[str, str]]  # hand-ons (calls, parkings, resources) from a lower layer to a higher one


def settings_road(files: Mapping[str, str], start: str = CLI_AUDIT) -> SettingsRoad:
    """Follow the settings one `claims-pipeline audit` read from the command into its runs. A function holds them
    when: it is the command; a holder calls it and it has a parameter annotated Settings or RunSettings; it calls
    a holder whose return annotation is one of them (`claims_config.load()`); it reads a module-level name a
    holder writes into (`_ENTRY_SETTINGS[key] = settings`), a parking; or it is a method of a resource class a
    holder configures or makes (`ClaimsConfig.configure_at_launch(given=run)`) that returns them, a hand-over to
    Dagster. Calls resolve as CallGraph does (a floor); a holder's call counts whatever it passes."""
    graph = CallGraph(files)
    trees = {module_name(p): ast.parse(t) for p, t in files.items()}
    module_of = {q: module_name(p) for q, p in graph.path_of.items()}

    def module_state(module: str) -> set[str]:
        tree = trees[module]
        return {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}

    def carrying(fn: str) -> set[str]:
        """fn's names that hold the settings: its parameters annotated with a carrier, and the locals it assigns
        from a call to a function returning one (`settings = self.load()`)."""
        node = graph.node_of[fn]
        names = {p.arg for p in _parameters(node) if _carries(p.annotation)}
        returners = {q.rpartition(".")[2] for q in graph.callees(fn) if _carries(graph.node_of[q].returns)}
        for n in ast.walk(node):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                f = n.value.func
                if (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None) in returners:
                    names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        return names

    def written(fn: str) -> set[str]:
        """Module-level names fn puts the settings into (`N[k] = settings`, `N.setdefault(k, settings)`)."""
        top, held, out = module_state(module_of[fn]), carrying(fn), set()
        for node in ast.walk(graph.node_of[fn]):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in held:
                out |= {t.value.id for t in node.targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                  and any(isinstance(a, ast.Name) and a.id in held for a in node.args)):
                out.add(node.func.value.id)
        return out & top

    def reads(fn: str, name: str) -> bool:
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                   for n in ast.walk(graph.node_of[fn]))

    def configured(fn: str) -> set[str]:
        """The package's classes fn makes or configures with the settings as an argument (`C(given=run)`,
        `C.configure_at_launch(given=run)`)."""
        out, held = set(), carrying(fn)
        for call in (n for n in ast.walk(graph.node_of[fn]) if isinstance(n, ast.Call)):
            values = [*call.args, *(k.value for k in call.keywords)]
            if not any(isinstance(v, ast.Name) and v.id in held for v in values):
                continue
            f = call.func
            name = f.id if isinstance(f, ast.Name) else (f.value.id if isinstance(f, ast.Attribute) and isinstance(
                f.value, ast.Name) and f.attr == "configure_at_launch" else None)
            if name and (q := graph.name_in(module_of[fn], name)) in graph.classes:
                out.add(q)
        return out

    def returning(cls: str) -> set[str]:
        """The methods of cls and its bases that return a carrier."""
        out, todo = set(), [cls]
        while todo:
            c = todo.pop()
            out |= {q for q, owner in graph.class_of.items() if owner == c and _carries(graph.node_of[q].returns)}
            todo += graph.bases(c)
        return out

    callers: dict[str, set[str]] = {}
    for q in graph.node_of:
        for g in graph.callees(q):
            callers.setdefault(g, set()).add(q)
    holders, todo = {start}, [start]
    edges: set[tuple[str, str, str]] = set()  # (from, to, how)
    parked: set[str] = set()
    handed: set[str] = set()

    def reach(a: str, b: str, how: str) -> None:
        edges.add((a, b, how))
        if b not in holders:
            holders.add(b)
            todo.append(b)

    while todo:
        fn = todo.pop()
        for g in graph.callees(fn):
            if any(_carries(p.annotation) for p in _parameters(graph.node_of[g])):
                reach(fn, g, "call")
        if _carries(graph.node_of[fn].returns):
            for f in callers.get(fn, ()):
                reach(fn, f, "return")
        for name in written(fn):
            parked.add(f"{module_of[fn]}.{name}")
            for q in graph.node_of:
                if module_of[q] == module_of[fn] and q != fn and reads(q, name):
                    reach(fn, q, "parked")
        for cls in configured(fn):
            for m in returning(cls):
                handed.add(cls)
                reach(fn, m, "resource")

    def layer(fn: str) -> int | None:
        return LAYERS.get(part_of(graph.path_of[fn]))

    back_up = sorted((a, b) for a, b, how in edges if how != "return"
                     and (la := layer(a)) is not None and (lb := layer(b)) is not None and lb > la)
    return SettingsRoad(sorted(holders), sorted({graph.path_of[f] for f in holders if f in graph.path_of}),
                        sorted(parked), sorted(handed), back_up)
