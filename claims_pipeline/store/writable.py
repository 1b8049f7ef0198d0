"""Before a command writes under the home folder: can it? A read-only home or a full disk would otherwise surface
as an 80–100-line SQLAlchemy traceback from the middle of a run (Dagster's run storage, the page cache); asked
first, it is one line naming the folder, and nothing has been written. Only asks: no probe file is made, so a
refused run leaves the folder as it was.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claims_pipeline.config.settings import PageCacheSpec

# Less free space than this and a run is refused before it starts: an audit of a small corpus writes a few
# MB (cache index, blobs, tables, reports), and SQLite needs room for its journal before any commit.
MIN_FREE_BYTES = 16 * 1024 * 1024


class StorageError(Exception):
    """A folder the command must write to cannot be written: read-only, full, or not a folder."""


def nearest_existing(path: Path) -> Path:
    """path, or the nearest of its parents that exists (what a mkdir -p would write into)."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_writable(folders: dict[str, Path], min_free: int = MIN_FREE_BYTES) -> None:
    """Raise StorageError naming the first folder (what it is for: label → folder) that cannot be written or
    created, or whose file system has less than min_free bytes free."""
    for label, folder in folders.items():
        target = nearest_existing(folder)
        if not target.is_dir():
            raise StorageError(f"cannot write {label} {folder}: {target} is not a folder")
        try:
            vfs = os.statvfs(target)
        except OSError as exc:
            raise StorageError(f"cannot write {label} {folder}: {exc.strerror}") from None
        if vfs.f_flag & os.ST_RDONLY:
            raise StorageError(f"cannot write {label} {folder}: {os.strerror(errno.EROFS)} ({target})")
        if not os.access(target, os.W_OK | os.X_OK):
            raise StorageError(f"cannot write {label} {folder}: {os.strerror(errno.EACCES)} ({target})")
        free = vfs.f_bavail * vfs.f_frsize
        if free < min_free:
            raise StorageError(f"cannot write {label} {folder}: {os.strerror(errno.ENOSPC)} "
                               f"({free // 1024:,} KB free, a run needs at least {min_free // (1024 * 1024)} MB)")


def home_folders(home: Path, cache: PageCacheSpec, dagster_home: Path | None = None, *,
                 outputs: bool = False) -> dict[str, Path]:
    """What a run of the pipeline writes: the home folder (reports, tables, the worklist), the page cache
    (its SQLite index's folder and the blob folder) and, for the Dagster commands, Dagster's instance folder.
    With outputs, each folder under the home the run writes into (the reports, the per-scope values and each
    asset's folder that exists, the audit tables): a read-only reports/ was otherwise found after the fetch."""
    from sqlalchemy.engine import make_url

    from claims_pipeline.config.home import HomeLayout

    folders = {"the home folder": home}
    if outputs:
        layout = HomeLayout(home)
        folders |= {"the reports folder": layout.reports_dir, "the per-scope values folder": layout.assets_dir,
                    "the audit folder": layout.audit_dir, "the audit tables folder": layout.tables_dir}
        try:
            assets = sorted(p for p in layout.assets_dir.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:  # absent (made by the run), or unlistable: checked as the folder itself above
            assets = []
        folders |= {f"the per-scope values folder of {p.name}": p for p in assets}
    url = make_url(cache.db_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        folders["the page cache index"] = Path(url.database).expanduser().parent
    if isinstance(cache.blobs, Path):  # blobs on object storage: no local folder to check
        folders["the page cache blobs"] = cache.blobs
    if dagster_home is not None:
        folders["the Dagster instance"] = dagster_home
    return folders
