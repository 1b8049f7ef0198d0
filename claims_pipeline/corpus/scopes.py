"""Which markdown files belong to which scope (no parsing)."""

from __future__ import annotations

import os
from pathlib import Path

from claims_pipeline.settings import Settings

COUNTRY_DIR = "countries"


def scope_for(rel: Path, scope_dir: str) -> str:
    """`countries/<iso2>/…` → iso2; any other scope dir keeps the whole relative path: `shared/exit/x.md` →
    `shared/exit/x` (the original dropped sub-folders, so two files could share one scope)."""
    parts = rel.parts
    if Path(scope_dir).name == COUNTRY_DIR and len(parts) > 1:
        return parts[0]
    return f"{Path(scope_dir).name}/{rel.with_suffix('').as_posix()}"


def list_scopes(settings: Settings) -> dict[str, list[Path]]:
    """scope → its *.md files (sorted), scope dirs in configured order; skip_files and exclude_dirs honoured."""
    ex = settings.extraction
    root = settings.corpus_dir
    skip = set(ex.skip_files)
    excluded = set(ex.exclude_dirs)
    scopes: dict[str, list[Path]] = {}
    seen: set[Path] = set()  # a file reached twice (overlapping scope_dirs) is read once
    for scope_dir in ex.scope_dirs:
        base = root / scope_dir
        if not base.is_dir():
            continue
        for path in sorted(markdown_files(base)):
            rel = path.relative_to(base)
            if path.name in skip or excluded.intersection(rel.parts) or not path.is_file() or path in seen:
                continue
            seen.add(path)
            scopes.setdefault(scope_for(rel, scope_dir), []).append(path)
    return scopes


def markdown_files(base: Path) -> list[Path]:
    """The *.md files under base (any case of the suffix: 'README.MD'), leaving out hidden files and folders
    (.git, .obsidian, .drafts/…: not published, and a '.hidden' folder would become a scope). Hidden folders
    are never entered (a .git folder holds thousands of files), nor are links to folders."""
    out: list[Path] = []
    for folder, subfolders, names in os.walk(base):
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        out += [Path(folder, name) for name in names if name.lower().endswith(".md") and not name.startswith(".")]
    return out


def resolve_scope_filter(scopes: list[str] | dict[str, object], name: str) -> list[str]:
    """The CLI's `--scope X`: scopes equal to X or ending in '/X' (so 'fr', 'shared/exit/x' or 'x')."""
    name = name.strip().strip("/")
    return [s for s in scopes if s == name or s.endswith("/" + name)]
