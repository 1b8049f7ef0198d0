"""The home folder's layout: every path the pipeline writes, named in one place.

    <home>/cache/            the page cache (index.sqlite + blobs/), unless cache.db_url / cache.blob_dir say otherwise
    <home>/assets/<asset>.store/  per-scope asset values: one Arrow file per materialization, the scope a column,
                             and index.json naming each scope's latest (steps/stored.py, the Dagster IO manager)
    <home>/assets/<asset>/   the same, one JSON file per scope, as versions before it wrote them (still read)
    <home>/audit/tables/     the audit's parquet tables; audit.lock guards them with the report and the ledger
    <home>/audit/reported-changes.json   the ledger: which page changes a written report already showed
    <home>/audit/last-run.txt            run time of the audit whose report was written last
    <home>/reports/<time>/   one folder per report; reports/LATEST names the newest, relative to the home
                             (a copied or moved home keeps pointing at its own; older homes hold an absolute path)
    <home>/judge/verdicts.sqlite   the judge's answer cache
    <home>/verdicts/         the verdict reports when no audit report exists yet (else next to the newest report)
    <home>/worklist.json     the default worklist
    <home>/notify/state.json what each notification channel was last sent (notify/), under notify/state.lock
    <home>/dagster/          DAGSTER_HOME when the environment sets none
    <home>/fixture-epoch.txt the demo's only: which version of its pages the demo's fixture web last served
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HomeLayout:
    root: Path

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def cache_index(self) -> Path:
        return self.cache_dir / "index.sqlite"

    @property
    def blobs_dir(self) -> Path:
        return self.cache_dir / "blobs"

    @property
    def assets_dir(self) -> Path:
        return self.root / "assets"

    def store_dir(self, asset: str) -> Path:
        return self.assets_dir / f"{asset}.store"

    def scope_file(self, asset: str, scope: str) -> Path:
        # scope keys such as "shared/exit/nordics" become nested folders; ".." never occurs in a scope name
        return self.assets_dir / asset / f"{bounded_file_name(scope)}.json"

    @property
    def audit_dir(self) -> Path:
        return self.root / "audit"

    @property
    def tables_dir(self) -> Path:
        return self.audit_dir / "tables"

    @property
    def audit_lock(self) -> Path:
        """The lock over <home>/audit: the tables, the report written from them and the ledger of what it showed."""
        return self.audit_dir / "audit.lock"

    @property
    def ledger(self) -> Path:
        return self.audit_dir / "reported-changes.json"

    @property
    def last_run_file(self) -> Path:
        return self.audit_dir / "last-run.txt"

    @property
    def reports_dir(self) -> Path:
        return self.root / "reports"

    @property
    def latest_file(self) -> Path:
        return self.reports_dir / "LATEST"

    def latest_entry(self, report_dir: Path) -> str:
        """What LATEST holds for report_dir: its path relative to the home, absolute only when it lies outside."""
        try:
            return report_dir.relative_to(self.root).as_posix()
        except ValueError:
            return str(report_dir)

    def latest_report_dir(self) -> Path | None:
        """The report folder LATEST names (None: no LATEST yet, or it cannot be read). Both forms are read: relative
        to the home (written so now) and absolute (written by earlier versions)."""
        return latest_report_dir(self.latest_file, self.root)

    @property
    def verdicts_dir(self) -> Path:
        return self.root / "verdicts"

    @property
    def judge_cache(self) -> Path:
        return self.root / "judge" / "verdicts.sqlite"

    @property
    def worklist_file(self) -> Path:
        return self.root / "worklist.json"

    @property
    def notify_state(self) -> Path:
        return self.root / "notify" / "state.json"

    @property
    def notify_lock(self) -> Path:
        return self.root / "notify" / "state.lock"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    @property
    def fixture_epoch_file(self) -> Path:
        return self.root / "fixture-epoch.txt"


def latest_report_dir(latest_file: Path, home: Path) -> Path | None:
    try:
        text = latest_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text:
        return None
    path = Path(text)
    return path if path.is_absolute() else home / path


# A scope name is a legal folder name of up to 255 bytes, or a front matter's `scope:` of any length; the file
# named after it gets '.json' and its temp file '.<name>.XXXXXXXX.tmp' (14 bytes more), over NAME_MAX (255). A
# part longer than this, or a name longer than _MAX_NAME_BYTES in all, is cut and given a hash of the whole name,
# so two long names never share a file. Shorter names stay as they are (the files of an existing home too).
_MAX_PART_BYTES = 160
_MAX_NAME_BYTES = 1024


def bounded_file_name(name: str) -> str:
    """`name` as a relative file path whose every part fits any file system's name limit, its whole within a
    path limit: unchanged when it already does, else cut (on a character boundary) with '~' and 12 hex digits
    of the name's sha256."""
    parts = name.split("/")
    if len(name.encode()) <= _MAX_NAME_BYTES and all(len(p.encode()) <= _MAX_PART_BYTES for p in parts):
        return name
    import hashlib

    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    if len(name.encode()) > _MAX_NAME_BYTES:  # too many parts: the first ones, then one part for the rest
        kept: list[str] = []
        for part in parts:
            if len("/".join([*kept, part]).encode()) > _MAX_NAME_BYTES // 2:
                break
            kept.append(part)
        parts = [*kept, "~"]
    cut = [_cut(p, _MAX_PART_BYTES - 13) if len(p.encode()) > _MAX_PART_BYTES - 13 else p for p in parts]
    cut[-1] = f"{cut[-1]}~{digest}"
    return "/".join(cut)


def _cut(text: str, limit: int) -> str:
    return text.encode()[:limit].decode("utf-8", "ignore")
