"""Which markdown files belong to which scope (no parsing)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from claims_pipeline.corpus.records import ExtractWarning
from claims_pipeline.settings import Settings

COUNTRY_DIR = "countries"


def scope_for(rel: Path, scope_dir: str) -> str:
    """`countries/<iso2>/…` → iso2; any other scope dir keeps the whole relative path: `shared/exit/x.md` →
    `shared/exit/x` (the earlier verifier dropped sub-folders, so two files could share one scope)."""
    parts = rel.parts
    if Path(scope_dir).name == COUNTRY_DIR and len(parts) > 1:
        return parts[0]
    return f"{Path(scope_dir).name}/{rel.with_suffix('').as_posix()}"


@dataclass(frozen=True, slots=True)
class CorpusFile:
    scope: str
    path: Path  # as found under corpus_dir (a link keeps its own name)
    rel: str  # corpus-relative, '/'-separated


@dataclass(slots=True)
class CorpusWalk:
    """The corpus files to read, and what was left out with a reason (a warning for the person running it)."""

    files: list[CorpusFile] = field(default_factory=list)
    # (the scope the file would have had, or None for a folder that could not be listed; why it was left out)
    skipped: list[tuple[str | None, ExtractWarning]] = field(default_factory=list)

    @property
    def scopes(self) -> dict[str, list[Path]]:
        out: dict[str, list[Path]] = {}
        for f in self.files:
            out.setdefault(f.scope, []).append(f.path)
        return out


def walk_corpus(settings: Settings, *, honour_skip_files: bool = True) -> CorpusWalk:
    """Every corpus file any step reads, scope dirs in configured order, each folder's files sorted. The one
    walker of the corpus folder (extract, lint, the audit's scopes and hashes): it yields regular files only
    (a FIFO would block its reader, a link to /dev/zero never end), no larger than extraction.max_file_bytes
    (a 2 GB sparse file is not read to find it is binary), and no link whose target leaves corpus_dir unless
    extraction.follow_links_out_of_corpus allows it. Whatever it leaves out is named in `skipped`; no file
    stops the walk. skip_files and exclude_dirs are honoured (the linter reads skip_files too, as the
    original did)."""
    ex = settings.extraction
    root = settings.corpus_dir
    root_real = os.path.realpath(root)
    skip = set(ex.skip_files) if honour_skip_files else set()
    excluded = set(ex.exclude_dirs)
    walk = CorpusWalk()
    seen: set[Path] = set()  # a file reached twice (overlapping scope_dirs) is read once
    for scope_dir in ex.scope_dirs:
        base = root / scope_dir
        if not base.is_dir():
            continue
        inside = _inside(os.path.realpath(base), root_real)  # the scope dir itself may be a link
        prefix = (base.relative_to(root).as_posix() + "/").removeprefix("./")
        unlisted: list[ExtractWarning] = []
        paths = sorted(markdown_files(base, unlisted, root))
        walk.skipped += [(None, w) for w in unlisted]
        for path in paths:
            rel_in = path.relative_to(base)
            if path.name in skip or excluded.intersection(rel_in.parts) or path in seen:
                continue
            seen.add(path)
            rel = prefix + rel_in.as_posix()  # path.relative_to(root), without a second parse of the path
            scope = scope_for(rel_in, scope_dir)
            problem = _unreadable_reason(path, inside, root_real, ex.max_file_bytes, ex.follow_links_out_of_corpus)
            if problem is not None:
                walk.skipped.append((scope, ExtractWarning(rel, 0, problem)))
                continue
            walk.files.append(CorpusFile(scope, path, rel))
    return walk


def list_scopes(settings: Settings) -> dict[str, list[Path]]:
    """scope → its *.md files (sorted), scope dirs in configured order: the files walk_corpus yields."""
    return walk_corpus(settings).scopes


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _unreadable_reason(path: Path, folder_inside: bool, root_real: str, max_bytes: int, follow_out: bool) -> str | None:
    """Why this file is not read (None: read it). One lstat for a plain file; links are resolved."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or not folder_inside:
            if not follow_out and not _inside(os.path.realpath(path), root_real):
                return ("a link to outside the corpus folder; skipped (extraction.follow_links_out_of_corpus "
                        "reads such links)")
            st = os.stat(path)
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}; skipped"
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({_kind(st.st_mode)}); skipped"
    if st.st_size > max_bytes:
        return f"file of {st.st_size:,} bytes, over extraction.max_file_bytes ({max_bytes:,}); skipped unread"
    return None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


def markdown_files(base: Path, problems: list[ExtractWarning] | None = None, root: Path | None = None) -> list[Path]:
    """The *.md entries under base (any case of the suffix: 'README.MD'), leaving out hidden files and folders
    (.git, .obsidian, .drafts/…: not published, and a '.hidden' folder would become a scope). Hidden folders
    are never entered (a .git folder holds thousands of files), nor are links to folders. Entries are names
    only: walk_corpus decides which are files it may read. A folder that cannot be listed is named in
    `problems` (relative to root)."""
    out: list[Path] = []

    def unlisted(exc: OSError) -> None:
        if problems is not None and exc.filename is not None:
            where = Path(exc.filename)
            rel = where.relative_to(root).as_posix() if root is not None and where.is_relative_to(root) else str(where)
            problems.append(ExtractWarning(rel, 0, f"cannot list folder: {exc.strerror or exc}; skipped"))

    for folder, subfolders, names in os.walk(base, onerror=unlisted):
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        out += [Path(folder, name) for name in names if name.lower().endswith(".md") and not name.startswith(".")]
    return out


def resolve_scope_filter(scopes: list[str] | dict[str, object], name: str) -> list[str]:
    """The CLI's `--scope X`: scopes equal to X or ending in '/X' (so 'fr', 'shared/exit/x' or 'x')."""
    name = name.strip().strip("/")
    return [s for s in scopes if s == name or s.endswith("/" + name)]


SCOPES_SHOWN = 12  # a real corpus has hundreds of scopes; the message stays one readable line


def no_scope_message(name: str, all_scopes: list[str]) -> str:
    shown = ", ".join(all_scopes[:SCOPES_SHOWN]) or "none"
    more = f", … {len(all_scopes) - SCOPES_SHOWN} more" if len(all_scopes) > SCOPES_SHOWN else ""
    return f"no scope matches --scope {name!r} (scopes: {shown}{more})"
