"""Files that more than one process may write at once.

Dagster's run queue orders its own runs, but `claims-pipeline audit` (and a second `dagster dev`) run beside
it on the same home. So every write goes to a temp file of its own and replaces the target atomically (a fixed
temp name let one writer move another's half-written file into place, and the second rename then failed), and
a set of files that belongs together (the audit's tables, the report and the record of what it showed) is
written and read under one lock. The lock is flock(2): the kernel drops it when its process dies, even by
SIGKILL, so a killed run never leaves the home locked.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: writes stay atomic, the lock is a no-op
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


def _umask() -> int:
    """The process umask: from /proc on Linux (os.umask can only be read by setting it, which races with other
    threads creating files), else by setting and restoring it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp makes a 0600 file; the files it replaces were made with the process's umask (0644 for most), and a home
# shared by a team must stay readable. A file that exists keeps its own mode.
_FILE_MODE = 0o666 & ~_umask()

LOCK_TIMEOUT_S = 1800.0  # an audit report takes seconds; half an hour means a stuck process, and we say so
_POLL_S = 0.05


def replace_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """write(tmp) to a temp file next to `path`, then rename it over `path`: readers see the old file or the
    new one, never a part, and concurrent writers never touch each other's temp file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        try:
            if hasattr(os, "fchmod"):  # POSIX
                try:
                    mode = path.stat().st_mode & 0o7777
                except OSError:
                    mode = _FILE_MODE
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        with naming(path):  # a write() refused (a full disk, a file size limit) names the file it was writing
            write(tmp)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def naming(where: Path) -> Iterator[None]:
    """Within the block, an OSError that names no file (a write() refused by a full disk or a file size limit)
    names `where`: one line then says which folder to free, not "No space left on device" alone."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, str(where)) from exc


def write_text_atomically(path: Path, text: str) -> None:
    replace_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


@contextlib.contextmanager
def locked(lock_path: Path, *, shared: bool = False, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold `lock_path` exclusively (writers) or shared (readers) for the block. Waits for the holder, saying
    so once in the log; raises TimeoutError naming the lock file after timeout_s. Not re-entrant: a process
    holding the lock must not ask for it again."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as handle:
        held = fcntl is not None
        if held:
            mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
            deadline = time.monotonic() + timeout_s
            said = False
            while True:
                try:
                    fcntl.flock(handle, mode)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"{lock_path}: still held by another process after {timeout_s:g} s "
                                           "(another audit of this home running or stuck?)") from None
                    if not said:
                        log.info("waiting for %s: another process of this home holds it", lock_path)
                        said = True
                    time.sleep(_POLL_S)
                except OSError as exc:  # a file system without locks (some network mounts): writes stay atomic
                    log.warning("cannot lock %s (%s); going on without the lock", lock_path, exc)
                    held = False
                    break
        try:
            yield
        finally:
            if held:
                fcntl.flock(handle, fcntl.LOCK_UN)
