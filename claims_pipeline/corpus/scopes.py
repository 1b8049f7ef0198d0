"""Which markdown files are read, and which scope each belongs to (no markdown parsing: a file's front matter may
name its scope). Any folder layout is a corpus: scopes come from the folder tree (extraction.scope_depth), from
rules (extraction.scope_rules) or from a file's own front matter (`scope: name`)."""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.settings import SCOPE_PLACEHOLDER_RE, ExtractionSettings
from claims_pipeline.corpus.records import ExtractWarning

# A scope name is a Dagster partition key and a file name under the home folder (<asset>/<scope>.json): kept
# readable, but without what either refuses or misreads: control and format characters (bidi), '...' (a
# partition range), ',', '|', '[', ']' (partition selections), ':' (claim ids are `scope:line:hash`), '\\'.
_SCOPE_BAD_CHARS_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff,|\[\]:\\\\]+")
_DOTS_RE = re.compile(r"\.{2,}")
FRONT_MATTER_BYTES = 4096  # a scope line is near the top; a file is never read whole to find it
_FRONT_SCOPE_RE = re.compile(r"^scope[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)

# Markdown files read: '.md', and MDX ('.mdx': markdown with JSX components, which read as HTML blocks).
MARKDOWN_SUFFIXES = (".md", ".mdx")


def clean_scope(name: str, root_scope: str = "root") -> str:
    """A scope name safe as a partition key and a relative file path: no leading or trailing '/', no empty,
    '.' or '..' segment, none of the characters above (each run becomes '-')."""
    name = _SCOPE_BAD_CHARS_RE.sub("-", name)
    parts = [_DOTS_RE.sub(".", p.strip()) for p in name.split("/")]
    parts = [p for p in parts if p and p not in {".", ".."}]
    return "/".join(parts) or root_scope


class ScopeNamer:
    """The scope of a corpus-relative path: front matter, else the first matching rule, else the folder tree."""

    def __init__(self, ex: ExtractionSettings) -> None:
        self.rules = [(glob_regex(r.glob), r.scope) for r in ex.rules]
        self.depth = ex.scope_depth
        self.root = ex.root_scope

    def __call__(self, rel: str, front: str | None = None) -> str:
        if front:
            return clean_scope(front, self.root)
        stem = rel[: rel.rfind(".")] if rel.lower().endswith(MARKDOWN_SUFFIXES) else rel
        folder, _, name = stem.rpartition("/")
        for regex, template in self.rules:
            if (m := regex.fullmatch(rel)) is not None:
                fields = {"path": stem, "folder": folder, "stem": name, "top": rel.split("/")[0] if folder else ""}
                groups = m.groups()

                def fill(p: re.Match[str], fields: dict[str, str] = fields, groups: tuple = groups) -> str:
                    key = p.group(1)
                    if key.isdigit():
                        return (groups[int(key) - 1] or "").strip("/") if int(key) <= len(groups) else ""
                    return fields[key]

                return clean_scope(SCOPE_PLACEHOLDER_RE.sub(fill, template), self.root)
        if self.depth == 0 or not folder:
            return self.root
        return clean_scope("/".join(folder.split("/")[: self.depth]), self.root)


def glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob as a regex: '**/' any folders (none too), '**' anything, '*' within one name, '?' one
    character; each wildcard is a group ({1}, {2}, … of a rule's scope). A glob ending in '/' means what is
    under that folder."""
    glob = glob.strip().removeprefix("./")
    if glob.endswith("/"):
        glob += "**"
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("((?:[^/]+/)*)")
            i += 3
        elif glob.startswith("**", i):
            out.append("(.*)")
            i += 2
        elif glob[i] == "*":
            out.append("([^/]*)")
            i += 1
        elif glob[i] == "?":
            out.append("([^/])")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.I if os.path.normcase("A") == "a" else 0)


def front_matter_scope(path: Path) -> str | None:
    """The `scope:` of a file's YAML front matter (its first lines, between two '---'), or None. Read with a
    line match, not a YAML parser: only this key is wanted, and a corpus may have thousands of front matters."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(FRONT_MATTER_BYTES)
    except OSError:
        return None
    head = head.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark before the front matter
    if not head.startswith(b"---"):
        return None
    text = head.decode("utf-8", "replace").replace("\r\n", "\n")
    first, _, rest = text.partition("\n")
    if first.strip() != "---":
        return None
    close = re.search(r"^(?:---|\.\.\.)[ \t]*$", rest, re.M)
    if close is None:
        return None
    m = _FRONT_SCOPE_RE.search(rest, 0, close.start())
    if m is None:
        return None
    value = m.group(1).split(" #", 1)[0].strip().strip("'\"").strip()
    return value or None


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
    # files left out by a setting (no warning each: it is what the setting asks), counted by the setting's name
    left_out: Counter[str] = field(default_factory=Counter)
    missing_dirs: list[str] = field(default_factory=list)  # configured scope_dirs that are not folders

    @property
    def scopes(self) -> dict[str, list[Path]]:
        out: dict[str, list[Path]] = {}
        for f in self.files:
            out.setdefault(f.scope, []).append(f.path)
        return out


def walk_corpus(corpus: CorpusSource, *, honour_skip_files: bool = True) -> CorpusWalk:
    """Every corpus file any step reads, scope dirs in configured order, each folder's files sorted. The one
    walker of the corpus folder (extract, lint, the audit's scopes and hashes): it yields regular files only
    (a FIFO would block its reader, a link to /dev/zero never end), no larger than extraction.max_file_bytes
    (a 2 GB sparse file is not read to find it is binary), and no link whose target leaves corpus_dir unless
    extraction.follow_links_out_of_corpus allows it. Whatever it leaves out is named in `skipped` (or counted
    in `left_out` when a setting asked for it); no file stops the walk. exclude_dirs is honoured, and skip_files
    unless honour_skip_files is False (the linter: a root citation is a finding in any file). Each file's scope: ScopeNamer."""
    ex = corpus.extraction
    root = corpus.root
    root_real = os.path.realpath(root)
    skip = set(ex.skip_files) if honour_skip_files else set()
    excluded = set(ex.exclude_dirs)
    namer = ScopeNamer(ex)
    walk = CorpusWalk()
    seen: set[Path] = set()  # a file reached twice (overlapping scope_dirs) is read once
    for scope_dir in ex.walked_dirs:
        base = root / scope_dir
        if not base.is_dir():
            walk.missing_dirs.append(scope_dir)
            continue
        inside = _inside(os.path.realpath(base), root_real)  # the scope dir itself may be a link
        prefix = (base.relative_to(root).as_posix() + "/").removeprefix("./")
        unlisted: list[ExtractWarning] = []
        paths = sorted(markdown_files(base, unlisted, root))
        walk.skipped += [(None, w) for w in unlisted]
        for path in paths:
            if path in seen:
                continue
            rel_in = path.relative_to(base)
            if excluded.intersection(rel_in.parts[:-1]):
                walk.left_out["extraction.exclude_dirs"] += 1
                continue
            if path.name in skip:
                walk.left_out["extraction.skip_files"] += 1
                continue
            seen.add(path)
            rel = prefix + rel_in.as_posix()  # path.relative_to(root), without a second parse of the path
            problem = _unreadable_reason(path, inside, root_real, ex.max_file_bytes, ex.follow_links_out_of_corpus)
            if problem is not None:
                walk.skipped.append((namer(rel), ExtractWarning(rel, 0, problem)))
                continue
            walk.files.append(CorpusFile(namer(rel, front_matter_scope(path)), path, rel))
    return walk


def nothing_read_message(corpus: CorpusSource, walk: CorpusWalk) -> str:
    """Why a walk read no file, in one line with a hint: no markdown file at all, or which setting left the
    ones there out (the folders walked, exclude_dirs, skip_files, unreadable files)."""
    root = corpus.root
    total = len(markdown_files(root))
    hint = f"hint: `claims-pipeline init {root}` writes a configuration that reads this folder"
    if total == 0:
        return (f"no markdown files (*.md) under {root}: nothing to read; hint: point extraction.corpus_dir (or "
                "--corpus) at the folder of your notes (hidden folders such as .notes/ are never read)")
    dirs = corpus.extraction.walked_dirs
    considered = len(walk.files) + sum(1 for scope, _ in walk.skipped if scope is not None) + sum(walk.left_out.values())
    why: list[str] = []
    if total > considered and dirs != ["."]:
        missing = f"; {', '.join(walk.missing_dirs)} not found" if walk.missing_dirs else ""
        why.append(f"{total - considered} outside the folders read (extraction.scope_dirs: {', '.join(dirs)}{missing})")
        where = f" in {corpus.config_file}" if corpus.config_file else ""
        hint = f"hint: leave extraction.scope_dirs out{where} to read the whole folder, or {hint.removeprefix('hint: ')}"
    why += [f"{n} left out by {key}" for key, n in sorted(walk.left_out.items())]
    if unreadable := sum(1 for scope, _ in walk.skipped if scope is not None):
        why.append(f"{unreadable} unreadable (see the warnings)")
    return f"{total} markdown file{'s' * (total != 1)} under {root}, none read: {'; '.join(why) or 'all left out'}; {hint}"


def list_scopes(corpus: CorpusSource) -> dict[str, list[Path]]:
    """scope → its *.md files (sorted), scope dirs in configured order: the files walk_corpus yields."""
    return walk_corpus(corpus).scopes


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
    `problems` (relative to root); the corpus folder itself raises the OSError (nothing at all can be read: the
    command says "cannot read" and exits 2)."""
    out: list[Path] = []

    def unlisted(exc: OSError) -> None:
        if root is not None and exc.filename is not None and os.path.abspath(exc.filename) == os.path.abspath(root):
            raise exc
        if problems is not None and exc.filename is not None:
            where = Path(exc.filename)
            rel = where.relative_to(root).as_posix() if root is not None and where.is_relative_to(root) else str(where)
            problems.append(ExtractWarning(rel, 0, f"cannot list folder: {exc.strerror or exc}; skipped"))

    for folder, subfolders, names in os.walk(base, onerror=unlisted):
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        out += [Path(folder, name) for name in names if name.lower().endswith(MARKDOWN_SUFFIXES) and not name.startswith(".")]
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
