"""`claims-pipeline init [DIR]`: a configuration for an existing knowledge base. It writes the corpus folder and the
scope rule it chose (nothing else: every other key has a good default), then prints the files, scopes and claims
by source tier it found and the next commands. It never replaces a file without --force. No network."""

from __future__ import annotations

import argparse
import copy
import os
import shlex
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claims_pipeline.common.text_safety import name_escaped, terminal_escaped

if TYPE_CHECKING:
    from claims_pipeline.config.corpus_source import CorpusSource
    from claims_pipeline.corpus.scopes import CorpusWalk

HEADER = """\
# claims_pipeline configuration, written by `claims-pipeline init` for {root}.
# Every key left out takes its default (docs/configuration.md); relative paths are read from this file's folder.
# Scopes: {layout}.
# To group files otherwise: change scope_depth, add scope_rules ({{glob: "guides/*/**", scope: "{{1}}"}}), or name
# a file's scope in its front matter (`scope: name`), which wins over both.
"""


OPTIONS: list[argparse.ArgumentParser] = []  # init writes a file and prints for a person: no --json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=".", metavar="DIR", help="the knowledge base's folder (default: here)")
    parser.add_argument("--force", action="store_true", help="replace the configuration file when it exists")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="settings",
                        help="also write this setting: a dotted key and a YAML value, e.g. "
                        "--set extraction.own_hosts=[kb.example.org] (repeatable)")


def run(args: argparse.Namespace) -> int:
    import yaml

    from claims_pipeline.commands.inputs import InputError
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import DEFAULT_CONFIG_RELPATH, find_config_file, settings_from_dict
    from claims_pipeline.corpus.scopes import nothing_read_message, walk_corpus

    root = Path(args.dir).expanduser().resolve()
    if not root.is_dir():
        raise InputError(f"not a folder: {root}")
    target = Path(args.config).expanduser().absolute() if args.config else Path.cwd() / DEFAULT_CONFIG_RELPATH
    check_target(target, force=args.force)
    try:
        layout, described = choose_layout(root)
    except OSError as exc:  # the knowledge base is only read: a folder that cannot be listed is "cannot read"
        raise InputError(unreadable(exc, root)) from None
    # relative when the file sits in or beside the knowledge base (the two move together), else absolute
    near = target.parent.is_relative_to(root) or root.is_relative_to(target.parent.parent)
    data: dict[str, Any] = {"extraction": {"corpus_dir": os.path.relpath(root, target.parent) if near else str(root),
                                           **layout}}
    for item in args.settings:
        set_dotted(data, item)
    # validated before anything is written (on a copy: validation makes the relative corpus_dir absolute)
    settings = settings_from_dict(copy.deepcopy(data), source=target, base_dir=target.parent)
    corpus = corpus_source(settings)
    try:
        walk = walk_corpus(corpus)
    except OSError as exc:
        raise InputError(unreadable(exc, root)) from None
    if not walk.files:
        raise InputError(nothing_read_message(corpus, walk))
    text = HEADER.format(root=root, layout=described) + "\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    write_config(target, text, force=args.force)
    print(name_escaped(f"wrote {target}"))
    for line in summary_lines(corpus, walk, described):
        print(name_escaped(line))
    found = find_config_file(None)
    chosen = found is not None and found.resolve() == target.resolve()
    print("next:")
    for line in next_commands(settings, target, explicit=not chosen):
        print(terminal_escaped(line))
    if os.environ.get("CLAIMS_PIPELINE_CONFIG") and not chosen:
        print("note: $CLAIMS_PIPELINE_CONFIG names another file; the commands above name this one", file=sys.stderr)
    return 0


def unreadable(exc: OSError, root: Path) -> str:
    where = os.fsdecode(exc.filename) if exc.filename is not None else str(root)
    return f"cannot read {where}: {exc.strerror or exc} (the knowledge base is only read: check its permissions)"


def check_target(target: Path, *, force: bool) -> None:
    """The configuration file may be written: not a link (writing through one would create or replace a file
    elsewhere, outside ./config), its folder a folder, and no file there unless --force."""
    from claims_pipeline.commands.inputs import InputError

    if target.is_symlink():
        raise InputError(f"{target} is a symbolic link (to {os.readlink(target)}): init never writes through a link; "
                         "remove the link, or name the file to write with --config")
    for folder in (target.parent, *target.parent.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise InputError(f"{folder} is not a folder: init writes {target} there; move it aside, or name "
                                 "another file with --config")
            break
    if target.exists() and not force:
        raise InputError(f"{target} exists and is left as it is (--force replaces it)")


def write_config(target: Path, text: str, *, force: bool) -> None:
    """Write the file, never through a link: O_NOFOLLOW refuses one made since check_target looked, and O_EXCL
    (without --force) a file made since."""
    from claims_pipeline.commands.inputs import InputError

    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= os.O_TRUNC if force else os.O_EXCL
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError:
        raise InputError(f"{target} exists and is left as it is (--force replaces it)") from None
    except OSError:
        if target.is_symlink():  # ELOOP
            raise InputError(f"{target} is a symbolic link: init never writes through a link; remove the link, or "
                             "name the file to write with --config") from None
        raise
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def set_dotted(data: dict[str, Any], item: str) -> None:
    """`--set a.b=VALUE` into data (VALUE read as YAML: 'true', '[x, y]', '{h: v}')."""
    import yaml

    from claims_pipeline.commands.inputs import InputError

    key, sep, raw = item.partition("=")
    if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
        raise InputError(f"--set {item!r}: expected KEY=VALUE, e.g. extraction.scope_depth=2")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        raise InputError(f"--set {item!r}: the value is not YAML") from None
    node = data
    *parents, last = key.strip().split(".")
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise InputError(f"--set {item!r}: {part} is not a section")
    node[last] = value


def choose_layout(root: Path) -> tuple[dict[str, Any], str]:
    """The scope keys for this tree, and the rule in words: the countries preset when the files are under
    countries/<code>/ or shared/ (a README at the root aside), else one scope per folder at the shallowest depth
    that gives more than one."""
    from claims_pipeline.config.settings import COUNTRIES_PRESET_DIRS, COUNTRIES_PRESET_RULES, ExtractionSettings
    from claims_pipeline.corpus.scopes import markdown_files

    defaults = ExtractionSettings()  # the folders the walk will leave out, left out of the choice too
    rels = [p.relative_to(root).parts
            for p in markdown_files(root, None, root, excluded=defaults.exclude_dirs, max_depth=defaults.max_depth)]
    if rels and any(r[0] == "countries" and len(r) > 2 for r in rels) and all(r[0] in COUNTRIES_PRESET_DIRS or len(r) == 1 for r in rels):
        return ({"scope_dirs": list(COUNTRIES_PRESET_DIRS), "scope_rules": list(COUNTRIES_PRESET_RULES)},
                "the countries preset: countries/<code>/ is the scope <code>, each file under shared/ a scope of its own")
    depth = 1
    for d in (1, 2, 3):
        if len({r[:-1][:d] for r in rels}) > 1:
            depth = d
            break
    words = ("one per top-level folder" if depth == 1 else f"one per folder {depth} levels deep") + \
        ", files at the root in the scope 'root'"
    return {"scope_depth": depth}, words


def summary_lines(corpus: CorpusSource, walk: CorpusWalk, described: str) -> list[str]:
    from claims_pipeline.corpus.explain import no_claim_message
    from claims_pipeline.corpus.extract import extract_corpus

    left = sum(walk.left_out.values()) + sum(1 for scope, _ in walk.skipped if scope is not None)
    out = [f"  corpus: {corpus.root}: {len(walk.files)} markdown file{'s' * (len(walk.files) != 1)} read"
           + (f" ({left} left out)" if left else "")]
    files_of = Counter(f.scope for f in walk.files)
    shown = ", ".join(f"{s} ({n} file{'s' * (n != 1)})" for s, n in files_of.most_common(8))
    more = f", … {len(files_of) - 8} more" if len(files_of) > 8 else ""
    out.append(f"  scopes: {len(files_of)}, {described}: {shown}{more}")
    extraction = extract_corpus(corpus)
    tiers = Counter(c.source_tier for c in extraction.claims)
    official = tiers["primary-gov"] + tiers["primary-allowlist"]
    out.append(f"  claims: {len(extraction.claims)} by source tier: official {official} (government name "
               f"{tiers['primary-gov']}, listed {tiers['primary-allowlist']}), secondary {tiers['secondary']}, "
               f"own pages {tiers['own']}")
    if not extraction.claims:
        out.append("  " + no_claim_message(corpus, len(extraction.files)))
    out += _not_taken_line(corpus, extraction.claims)
    # the walk's (files left out, scopes merged) and the reading's (a file that cannot be opened, bad UTF-8)
    for w in extraction.warnings[:WARNINGS_SHOWN]:
        out.append(f"  warning: {w}")
    if len(extraction.warnings) > WARNINGS_SHOWN:
        out.append(f"  … {len(extraction.warnings) - WARNINGS_SHOWN} more warnings (`claims-pipeline extract` lists "
                   "them all)")
    out += mixed_depth_hints(walk)
    return out


WARNINGS_SHOWN = 20  # init is a summary; extract lists every warning


def _not_taken_line(corpus: CorpusSource, claims: list) -> list[str]:
    """One line when many lines hold a figure and a link but few became claims: how many, and how to see why."""
    from claims_pipeline.corpus.explain import unclaimed_lines

    total, missed, first = unclaimed_lines(corpus, claims)
    if total < 10 or missed * 2 < total or first is None:
        return []
    return [f"  not taken: {missed} of {total} lines holding a figure and a link gave no claim; to see why for one: "
            f"claims-pipeline extract --explain {shlex.quote(first)}"]


def mixed_depth_hints(walk: CorpusWalk) -> list[str]:
    """A hint for each scope whose files lie in folders of different depths (`notes/tax.md` and
    `notes/visa/rules.md` in the scope `notes`): the setting that splits them, since a scope is what one run audits
    and the report groups."""
    folders: dict[str, set[str]] = {}
    for f in walk.files:
        if "/" in f.rel:
            folders.setdefault(f.scope, set()).add(f.rel.rsplit("/", 1)[0])
    hints = []
    for scope, found in folders.items():
        depths = sorted({d.count("/") + 1 for d in found})
        if len(depths) < 2:
            continue
        top = ", ".join(sorted(f"{d}/" for d in found if d.count("/") + 1 == depths[0]))
        deeper = sorted(f"{d}/" for d in found if d.count("/") + 1 > depths[0])
        named = ", ".join(deeper[:3]) + (f", … {len(deeper) - 3} more" if len(deeper) > 3 else "")
        hints.append(f"  hint: the scope {scope} holds files of {top} and of {named}: "
                     f"--set extraction.scope_depth={depths[0] + 1} (with --force) gives each of these folders a "
                     "scope of its own; extraction.scope_rules names scopes by path")
    return hints


def next_commands(settings: Any, config: Path, *, explicit: bool) -> list[str]:
    from claims_pipeline.commands.demo import ui_command
    from claims_pipeline.orchestration.instance import dagster_home_for

    cli = cli_invocation()
    with_config = f" --config {shlex.quote(str(config))}" if explicit else ""
    return [
        f"  {cli} audit{with_config}    re-reads every cited page and writes the report",
        f"  {cli} lint{with_config}     citations of a site's home page next to a figure",
        f"  {cli} extract{with_config} --out claims.json     every claim, with its figures and source tier",
        f"  {ui_command(config, str(dagster_home_for(settings.home_dir)), settings.deployment)}    the Dagster UI on this corpus "
        "(http://127.0.0.1:3000)",
    ]


def cli_invocation(argv0: str | None = None, executable: str | None = None) -> str:
    """How to run this command again the way it was just run: `claims-pipeline` when that name on PATH is this
    very program, else its script by path (relative to here when under it: `.venv/bin/claims-pipeline`, as the
    README runs it from the clone), else `python -m claims_pipeline.cli` with this interpreter."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name != "claims-pipeline":  # run as `python -m claims_pipeline.cli`: the venv's script, when it has one
        script = Path(executable or sys.executable).with_name("claims-pipeline")
        if not script.is_file():
            return f"{shlex.quote(executable or sys.executable)} -m claims_pipeline.cli"
    on_path = shutil.which("claims-pipeline")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "claims-pipeline"
    script = script.absolute()  # not resolved: a .venv that is a link keeps its name
    try:
        rel = script.relative_to(Path.cwd()).as_posix()
        return shlex.quote(rel if "/" in rel else f"./{rel}")
    except ValueError:
        return shlex.quote(str(script))
