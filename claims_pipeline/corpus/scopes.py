"""Which markdown files are read, and which scope each belongs to (no markdown parsing: a file's front matter may
name its scope). Any folder layout is a corpus: scopes come from the folder tree (extraction.scope_depth), from
rules (extraction.scope_rules) or from a file's own front matter (`scope: name`)."""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections import Counter
from collections.abc import Iterable
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
    '.' or '..' segment, none of the characters above (each run becomes '-'). NFC first: a folder named `café`
    by macOS (NFD) and by Linux (NFC) is one scope, not two that look alike."""
    name = _SCOPE_BAD_CHARS_RE.sub("-", unicodedata.normalize("NFC", name))
    parts = [_DOTS_RE.sub(".", p.strip()) for p in name.split("/")]
    parts = [p for p in parts if p and p not in {".", ".."}]
    return "/".join(parts) or root_scope


class ScopeNamer:
    """The scope of a corpus-relative path: front matter, else the first matching rule, else the folder tree.
    It remembers which names each scope was cleaned from (`sources`): two distinct folder names that clean to
    one scope ('a,b' and 'a|b' are both 'a-b') are merged, and the walk says so."""

    def __init__(self, ex: ExtractionSettings) -> None:
        self.rules = [(GlobRule(r.glob), r.scope) for r in ex.rules]
        self.depth = ex.scope_depth
        self.root = ex.root_scope
        self.sources: dict[str, dict[str, str]] = {}  # scope -> {the name it was cleaned from: the first file}

    def __call__(self, rel: str, front: str | None = None) -> str:
        raw = self.raw(rel, front)
        if raw is None:
            return self.root
        scope = clean_scope(raw, self.root)
        self.sources.setdefault(scope, {}).setdefault(raw, rel)
        return scope

    def raw(self, rel: str, front: str | None = None) -> str | None:
        """The scope's name before cleaning (None: the root scope)."""
        if front:
            return front
        stem = rel[: rel.rfind(".")] if rel.lower().endswith(MARKDOWN_SUFFIXES) else rel
        folder, _, name = stem.rpartition("/")
        for rule, template in self.rules:
            if (groups := rule.match(rel)) is not None:
                fields = {"path": stem, "folder": folder, "stem": name, "top": rel.split("/")[0] if folder else ""}

                def fill(p: re.Match[str], fields: dict[str, str] = fields, groups: tuple = groups) -> str:
                    key = p.group(1)
                    if key.isdigit():
                        return (groups[int(key) - 1] or "").strip("/") if int(key) <= len(groups) else ""
                    return fields[key]

                return SCOPE_PLACEHOLDER_RE.sub(fill, template)
        if self.depth == 0 or not folder:
            return None
        return "/".join(folder.split("/")[: self.depth])

    def merged(self) -> list[tuple[str, ExtractWarning]]:
        """A warning per scope made of several distinct names (each naming the two first), in scope order."""
        out = []
        for scope, raws in sorted(self.sources.items()):
            if len(raws) > 1:
                (a, file_a), (b, file_b) = list(raws.items())[:2]
                more = f" and {len(raws) - 2} more" if len(raws) > 2 else ""
                out.append((scope, ExtractWarning(file_b, 0, (
                    f"{a!r} ({file_a}) and {b!r}{more} are one scope, {scope!r}: a scope name cannot hold some "
                    "characters (each run becomes '-') and is read in Unicode NFC form; rename a folder, or name "
                    "the scope in the file's front matter (`scope: name`), to keep them apart"))))
        return out


_TOKEN_RE = re.compile(r"\*\*/|\*\*|\*|\?|[^*?]")
# A glob with more unbounded wildcards than this is matched by GlobRule's linear matcher, not a regex: a
# backtracking regex of many '**' or '*' takes time growing as a power of the path's length when it fails.
REGEX_WILDCARDS = 2


def _glob_tokens(glob: str) -> list[str]:
    glob = glob.strip().removeprefix("./")
    if glob.endswith("/"):
        glob += "**"
    return _TOKEN_RE.findall(glob)


def glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob as a regex: '**/' any folders (none too), '**' anything, '*' within one name, '?' one
    character; each wildcard is a group ({1}, {2}, … of a rule's scope). A glob ending in '/' means what is
    under that folder."""
    parts = {"**/": "((?:[^/]+/)*)", "**": "(.*)", "*": "([^/]*)", "?": "([^/])"}
    out = [parts.get(t) or re.escape(t) for t in _glob_tokens(glob)]
    return re.compile("".join(out), re.I if _CASELESS else 0)


_CASELESS = os.path.normcase("A") == "a"


class GlobRule:
    """A scope rule's glob, matched in time bounded by (glob length × path length) whatever the glob: the regex
    when it has few unbounded wildcards (fast, and a failing match costs at most the square of the path), else a
    dynamic-programming matcher giving the same groups as the regex would (greedy, leftmost)."""

    def __init__(self, glob: str) -> None:
        self.tokens = _glob_tokens(glob)
        wild = sum(t in ("*", "**", "**/") for t in self.tokens)
        self.regex = glob_regex(glob) if wild <= REGEX_WILDCARDS else None

    def match(self, path: str) -> tuple[str, ...] | None:
        if self.regex is not None:
            m = self.regex.fullmatch(path)
            return None if m is None else m.groups()
        return _dp_match(self.tokens, path)


def _dp_match(tokens: list[str], path: str) -> tuple[str, ...] | None:
    s = path.lower() if _CASELESS else path
    toks = [t.lower() if _CASELESS and len(t) == 1 else t for t in tokens]
    n = len(s)
    nxt = [n] * (n + 1)  # the next '/' at or after j (n: none)
    for j in range(n - 1, -1, -1):
        nxt[j] = j if s[j] == "/" else nxt[j + 1]
    # ok[i][j]: tokens[i:] match s[j:]
    ok = [bytearray(n + 1) for _ in range(len(toks) + 1)]
    ok[-1][n] = 1
    for i in range(len(toks) - 1, -1, -1):
        t, row, after = toks[i], ok[i], ok[i + 1]
        for j in range(n, -1, -1):
            if t == "*":
                row[j] = after[j] or (j < n and s[j] != "/" and row[j + 1])
            elif t == "**":
                row[j] = after[j] or (j < n and row[j + 1])
            elif t == "**/":
                row[j] = after[j] or (j < n and s[j] != "/" and nxt[j] < n and row[nxt[j] + 1])
            elif t == "?":
                row[j] = j < n and s[j] != "/" and after[j + 1]
            else:
                row[j] = j < n and s[j] == t and after[j + 1]
    if not ok[0][0]:
        return None
    groups: list[str] = []
    j = 0
    for i, t in enumerate(toks):
        after = ok[i + 1]
        if t in ("*", "**", "**/"):
            ends: Iterable[int]
            if t == "*":
                ends = range(nxt[j], j - 1, -1)
            elif t == "**":
                ends = range(n, j - 1, -1)
            else:  # after whole segments: just past a '/' (none taken: j itself)
                ends = [k + 1 for k in range(n - 1, j, -1) if s[k] == "/" and s[j] != "/"] + [j]
            e = next(e for e in ends if after[e])
            groups.append(path[j:e])
            j = e
        else:
            if t == "?":
                groups.append(path[j])
            j += 1
    return tuple(groups)


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
    excluded_dirs: list[str] = field(default_factory=list)  # folders not entered (extraction.exclude_dirs), corpus-relative
    # (scope, warning) about files that are read: distinct folder names merged into one scope
    notes: list[tuple[str, ExtractWarning]] = field(default_factory=list)

    @property
    def scopes(self) -> dict[str, list[Path]]:
        out: dict[str, list[Path]] = {}
        for f in self.files:
            out.setdefault(f.scope, []).append(f.path)
        return out

    @property
    def warnings(self) -> list[tuple[str | None, ExtractWarning]]:
        """Everything to tell the person running it, each with its scope: the files left out, then the notes."""
        return [*self.skipped, *self.notes]


def walk_corpus(corpus: CorpusSource, *, honour_skip_files: bool = True) -> CorpusWalk:
    """Every corpus file any step reads, scope dirs in configured order, each folder's files sorted. The one
    walker of the corpus folder (extract, lint, the audit's scopes and hashes): it yields regular files only
    (a FIFO would block its reader, a link to /dev/zero never end), no larger than extraction.max_file_bytes
    (a 2 GB sparse file is not read to find it is binary), and no link whose target leaves corpus_dir unless
    extraction.follow_links_out_of_corpus allows it. A file reached twice (a link to another corpus file, a hard
    link) is read once, under its own name when it has one. Whatever it leaves out is named in `skipped` (or
    counted in `left_out` when a setting asked for it); no file stops the walk. Folders named in exclude_dirs are
    never entered, nor folders deeper than extraction.max_depth (named in `skipped`); skip_files is honoured
    unless honour_skip_files is False (the linter: a root citation is a finding in any file). Each file's scope:
    ScopeNamer."""
    ex = corpus.extraction
    root = corpus.root
    root_real = os.path.realpath(root)
    skip = set(ex.skip_files) if honour_skip_files else set()
    namer = ScopeNamer(ex)
    walk = CorpusWalk()
    seen: set[Path] = set()  # a path reached twice (overlapping scope_dirs) is read once
    # the files to read, by identity (device, inode): a link to another corpus file is the same file
    kept: dict[tuple[int, int], tuple[str, Path, bool]] = {}
    for scope_dir in ex.walked_dirs:
        base = root / scope_dir
        if not base.is_dir():
            walk.missing_dirs.append(scope_dir)
            continue
        inside = _inside(os.path.realpath(base), root_real)  # the scope dir itself may be a link
        prefix = (base.relative_to(root).as_posix() + "/").removeprefix("./")
        unlisted: list[ExtractWarning] = []
        paths = sorted(markdown_files(base, unlisted, root, excluded=ex.exclude_dirs, max_depth=ex.max_depth,
                                      pruned=walk.excluded_dirs))
        walk.skipped += [(None, w) for w in unlisted]
        for path in paths:
            if path in seen:
                continue
            rel_in = path.relative_to(base)
            if path.name in skip:
                walk.left_out["extraction.skip_files"] += 1
                continue
            seen.add(path)
            rel = prefix + rel_in.as_posix()  # path.relative_to(root), without a second parse of the path
            problem, st, link = _unreadable_reason(path, inside, root_real, ex.max_file_bytes, ex.follow_links_out_of_corpus)
            if problem is not None or st is None:
                walk.skipped.append((namer(rel), ExtractWarning(rel, 0, problem or "cannot read file; skipped")))
                continue
            key = (st.st_dev, st.st_ino)
            first = kept.get(key)
            if first is None:
                kept[key] = (rel, path, link)
                continue
            if first[2] and not link:  # the file under its own name wins over a link to it
                kept[key], (rel, path, link) = (rel, path, link), first
                first = kept[key]
            walk.skipped.append((namer(rel), ExtractWarning(rel, 0, (
                f"the same file as {first[0]} (a link to it, or a hard link); read once, as {first[0]}, so that its claims count once"))))
    for rel, path, _link in kept.values():
        walk.files.append(CorpusFile(namer(rel, front_matter_scope(path)), path, rel))
    walk.notes = namer.merged()
    return walk


def nothing_read_message(corpus: CorpusSource, walk: CorpusWalk) -> str:
    """Why a walk read no file, in one line with a hint: no markdown file at all, or which setting left the
    ones there out (the folders walked, exclude_dirs, skip_files, unreadable files)."""
    root = corpus.root
    ex = corpus.extraction
    total = len(markdown_files(root, excluded=ex.exclude_dirs, max_depth=ex.max_depth))
    hint = f"hint: `claims-pipeline init {root}` writes a configuration that reads this folder"
    excluded = _excluded_note(walk.excluded_dirs)
    if total == 0:
        if excluded:
            return (f"no markdown files (*.md) under {root} outside the folders extraction.exclude_dirs leaves out "
                    f"({excluded}): nothing to read; hint: change extraction.exclude_dirs")
        return (f"no markdown files (*.md) under {root}: nothing to read; hint: point extraction.corpus_dir (or "
                "--corpus) at the folder of your notes (hidden folders such as .notes/ are never read)")
    dirs = ex.walked_dirs
    considered = len(walk.files) + sum(1 for scope, _ in walk.skipped if scope is not None) + sum(walk.left_out.values())
    why: list[str] = []
    if total > considered and dirs != ["."]:
        missing = f"; {', '.join(walk.missing_dirs)} not found" if walk.missing_dirs else ""
        why.append(f"{total - considered} outside the folders read (extraction.scope_dirs: {', '.join(dirs)}{missing})")
        where = f" in {corpus.config_file}" if corpus.config_file else ""
        hint = f"hint: leave extraction.scope_dirs out{where} to read the whole folder, or {hint.removeprefix('hint: ')}"
    if excluded:
        why.append(f"{len(walk.excluded_dirs)} folder{'s' * (len(walk.excluded_dirs) != 1)} not entered "
                   f"(extraction.exclude_dirs: {excluded})")
    why += [f"{n} left out by {key}" for key, n in sorted(walk.left_out.items())]
    if unreadable := sum(1 for scope, _ in walk.skipped if scope is not None):
        why.append(f"{unreadable} unreadable (see the warnings)")
    return f"{total} markdown file{'s' * (total != 1)} under {root}, none read: {'; '.join(why) or 'all left out'}; {hint}"


def _excluded_note(folders: list[str]) -> str:
    shown = ", ".join(folders[:3])
    return shown + (f", … {len(folders) - 3} more" if len(folders) > 3 else "")


def list_scopes(corpus: CorpusSource) -> dict[str, list[Path]]:
    """scope → its *.md files (sorted), scope dirs in configured order: the files walk_corpus yields."""
    return walk_corpus(corpus).scopes


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _unreadable_reason(path: Path, folder_inside: bool, root_real: str, max_bytes: int,
                       follow_out: bool) -> tuple[str | None, os.stat_result | None, bool]:
    """Why this file is not read (None: read it), its stat (the target's, for a link) and whether it is a link.
    One lstat for a plain file; links are resolved."""
    link = False
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or not folder_inside:
            link = stat.S_ISLNK(st.st_mode)
            if not follow_out and not _inside(os.path.realpath(path), root_real):
                return ("a link to outside the corpus folder; skipped (extraction.follow_links_out_of_corpus "
                        "reads such links)"), None, link
            st = os.stat(path)
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}; skipped", None, link
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({_kind(st.st_mode)}); skipped", st, link
    if st.st_size > max_bytes:
        return f"file of {st.st_size:,} bytes, over extraction.max_file_bytes ({max_bytes:,}); skipped unread", st, link
    return None, st, link


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


DEFAULT_MAX_DEPTH: int = ExtractionSettings.model_fields["max_depth"].default


def markdown_files(base: Path, problems: list[ExtractWarning] | None = None, root: Path | None = None, *,
                   excluded: list[str] | frozenset[str] = frozenset(), max_depth: int = DEFAULT_MAX_DEPTH,
                   pruned: list[str] | None = None) -> list[Path]:
    """The *.md entries under base (any case of the suffix: 'README.MD'), leaving out hidden files and folders
    (.git, .obsidian, .drafts/…: not published, and a '.hidden' folder would become a scope). Hidden folders,
    folders named in `excluded` (listed in `pruned`, relative to root) and links to folders are never entered,
    nor folders more than max_depth levels below base (named in `problems`). Iterative, with an explicit stack:
    a tree 1,000 folders deep is no RecursionError. Entries are names only: walk_corpus decides which are files
    it may read. A folder that cannot be listed is named in `problems` (relative to root); the corpus folder
    itself raises the OSError (nothing at all can be read: the command says "cannot read" and exits 2)."""
    out: list[Path] = []
    skip = set(excluded)

    def relative(where: str) -> str:
        path = Path(where)
        return path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else str(path)

    stack: list[tuple[str, int]] = [(os.fspath(base), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            if root is not None and os.path.abspath(folder) == os.path.abspath(root):
                raise
            if problems is not None:
                problems.append(ExtractWarning(relative(folder), 0, f"cannot list folder: {exc.strerror or exc}; skipped"))
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()  # a link to a folder is a folder here (as os.walk has it), never entered
                is_link = is_dir and entry.is_symlink()
            except OSError:
                is_dir = is_link = False
            if not is_dir:
                if name.lower().endswith(MARKDOWN_SUFFIXES):
                    out.append(Path(entry.path))
            elif is_link:
                continue
            elif name in skip:
                if pruned is not None:
                    pruned.append(relative(entry.path))
            elif depth >= max_depth:
                if problems is not None:
                    problems.append(ExtractWarning(relative(entry.path), 0, (
                        f"folder more than extraction.max_depth ({max_depth}) levels deep; not entered")))
            else:
                stack.append((entry.path, depth + 1))
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
