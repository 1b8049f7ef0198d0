"""The `extraction` section: which corpus is read and how it is cut into scopes and claims.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import Field, field_validator

from claims_pipeline.config.config_file import read_config_text
from claims_pipeline.config.environment import ConfigError
from claims_pipeline.config.sections.strict import _check_hosts, _host_problem, _Strict

# ---- scopes: which files form one unit of audit (a Dagster partition), from the folder tree by default ----------
# A rule's scope template names: {1}, {2}, … what the glob's wildcards matched; {path} the file's corpus-relative
# path without its .md; {folder} its folder ('' at the root); {stem} its name without .md; {top} its first folder.
SCOPE_PLACEHOLDER_RE = re.compile(r"\{([^{}]*)\}")
SCOPE_PLACEHOLDERS = frozenset({"path", "folder", "stem", "top"})


class ScopeRule(_Strict):
    """Files whose corpus-relative path matches `glob` get the scope `scope` (first matching rule wins)."""

    glob: str = Field(description="'/'-separated, relative to corpus_dir: * = one name or part of one, ** = any "
                      "folders, ? = one character.")
    scope: str = Field(description="Template of the scope name: {1}, {2}, … what the glob's wildcards matched, "
                       "{path} the file's path without .md, {folder}, {stem} (its name), {top} (its first folder).")

    @field_validator("glob")
    @classmethod
    def _relative_glob(cls, v: str) -> str:
        if not v.strip() or v.startswith("/") or ".." in v.split("/"):
            raise ValueError(f"{v!r}: a glob relative to corpus_dir, such as 'guides/**' or 'countries/*/**'")
        return v

    @field_validator("scope")
    @classmethod
    def _known_placeholders(cls, v: str) -> str:
        for name in SCOPE_PLACEHOLDER_RE.findall(v):
            if name not in SCOPE_PLACEHOLDERS and not (name.isdigit() and 0 < int(name) < 100):
                raise ValueError(f"{v!r}: unknown {{{name}}} (use {{1}}, {{2}}, … {{path}}, {{folder}}, {{stem}} or {{top}})")
        if not v.strip():
            raise ValueError("an empty scope name")
        return v


# The layout of the bundled demo (and of the corpora it was modelled on): `countries/<code>/…` is the scope
# <code>; any other file is its own scope named by its path (`shared/exit/regional`). Not a requirement: a
# corpus without `scope_rules` gets its scopes from its folder tree.
COUNTRIES_PRESET_DIRS = ["countries", "shared"]
COUNTRIES_PRESET_RULES = [{"glob": "countries/*/**", "scope": "{1}"}, {"glob": "**", "scope": "{path}"}]


class ExtractionSettings(_Strict):
    corpus_dir: Path | None = Field(
        None, description="Corpus root (required; only the demo deployment defaults to the bundled demo corpus).")
    scope_dirs: list[str] | None = Field(
        None,
        description="Folders under corpus_dir walked for *.md, in this order. None = the whole corpus folder "
        "(the bundled demo corpus: countries, shared).",
    )
    scope_depth: int = Field(
        1, ge=0, le=20,
        description="Scopes from the folder tree (for files no scope rule matches): one scope per folder this many "
        "levels deep (1: per top-level folder, `guides/tax/a.md` → `guides`; 2: `guides/tax`); files above that "
        "depth are in their folder's scope, files at the root in `root_scope`. 0 = one scope for the whole corpus.",
    )
    root_scope: str = Field("root", description="The scope of files at the corpus folder's root (with scope_depth 0, of every file).")
    scope_rules: list[ScopeRule] | None = Field(
        None,
        description="Rules naming scopes by path, tried in order before scope_depth: `{glob: 'countries/*/**', "
        "scope: '{1}'}`. A file's own front matter (`scope: name`) wins over both. None = none (the bundled "
        "demo corpus: its countries preset).",
    )
    skip_files: list[str] = Field(default_factory=list)
    exclude_dirs: list[str] = Field(default_factory=lambda: ["node_modules", "_local", ".git"])
    max_depth: int = Field(
        64, ge=1, le=1000,
        description="Folders more than this many levels below a walked folder are not entered (a warning names "
        "each): a tree nested without end costs no more than this.",
    )
    skip_headings: list[str] = Field(
        default_factory=lambda: ["Data sources", "Sources", "Where to verify", "Primary sources"]
    )
    min_salient_values: int = Field(1, ge=0, le=100)
    claim_window_chars: int = Field(360, ge=40, le=100_000)
    primary_only: bool = Field(
        False,
        description="Off: every cited figure is looked for, whatever its source's tier (the tier orders the "
        "worklist, caps the verdict and groups the report).",
    )
    primary_allowlist_file: Path | None = None
    primary_allowlist: list[str] = Field(default_factory=list, description="Extra primary hosts, inline.")
    own_hosts: list[str] = Field(
        default_factory=list,
        description="The knowledge base's own site(s): claims citing them get the tier `own` (looked for, last in "
        "the worklist, verdicts capped as for a secondary source). `.suffix` = the domain and its subdomains.",
    )
    pointer_lookback_chars: int = Field(48, ge=0, le=400)
    max_line_chars: int = Field(200_000, ge=1000, le=1_000_000_000, description="Longer lines are cut (with a warning).")
    max_file_bytes: int = Field(
        20_000_000, ge=1024, le=1_000_000_000,
        description="Corpus files larger than this are skipped unread, with a warning (a 2 GB sparse '.md' or a "
        "link to a device would otherwise be read whole).",
    )
    follow_links_out_of_corpus: bool = Field(
        False,
        description="Read a symlinked file whose target is outside corpus_dir. Off: such a link is skipped with a "
        "warning (a link can make the pipeline read any file of the machine).",
    )
    workers: int = Field(
        0, ge=0, le=64,
        description="Processes extracting files of a big corpus (process pool, safe in a Dagster run; same output as "
        "serial). 0 = auto (the CPUs, only for corpora of many files and MB), 1 = always serial.",
    )

    @field_validator("scope_dirs")
    @classmethod
    def _scope_dirs_inside_corpus(cls, v: list[str] | None) -> list[str] | None:
        for entry in v or ():  # files are named relative to corpus_dir: a folder outside it breaks that later
            if Path(entry).is_absolute() or os.path.normpath(entry).split(os.sep)[0] == "..":
                raise ValueError(f"{entry!r}: a folder inside corpus_dir (a relative path, not leaving it)")
        return v

    @field_validator("root_scope")
    @classmethod
    def _root_scope_named(cls, v: str) -> str:
        if not v.strip() or v.strip("/ ") != v or ".." in v:
            raise ValueError(f"{v!r}: a plain name such as 'root' (no leading or trailing '/', no '..')")
        return v

    @property
    def walked_dirs(self) -> list[str]:
        """The folders read: scope_dirs, else the demo's preset for the bundled corpus, else the whole folder."""
        if self.scope_dirs is not None:
            return self.scope_dirs
        return list(COUNTRIES_PRESET_DIRS) if self.corpus_dir is None else ["."]

    @property
    def rules(self) -> list[ScopeRule]:
        if self.scope_rules is not None:
            return self.scope_rules
        return [ScopeRule.model_validate(r) for r in COUNTRIES_PRESET_RULES] if self.corpus_dir is None else []

    @field_validator("primary_allowlist_file")
    @classmethod
    def _allowlist_file_readable(cls, v: Path | None) -> Path | None:
        if v is not None:
            if not v.exists():
                raise ValueError(f"no such file: {v}")
            if not v.is_file():
                raise ValueError(f"not a file: {v}")
            if not os.access(v, os.R_OK):
                raise ValueError(f"cannot read {v}")
            # the same entries as the inline list: a URL, a port or a '*.' wildcard would silently never match
            try:  # bounded, as the config file itself is
                text = read_config_text(v, "host list")
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
            for no, line in enumerate(text.splitlines(), 1):
                entry = line.split("#", 1)[0].strip()
                if entry and (problem := _host_problem(entry.lower().removeprefix("."))) is not None:
                    raise ValueError(f"{v}:{no}: {entry!r}: {problem} (a host, or '.suffix' for its subdomains)")
        return v

    @field_validator("primary_allowlist", "own_hosts")
    @classmethod
    def _allowlist_hosts(cls, v: list[str]) -> list[str]:
        return _check_hosts(v, lambda e: e.strip().lower().removeprefix("."), "a host, or '.suffix' for its subdomains")
