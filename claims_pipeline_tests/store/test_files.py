"""store/files.py: atomic replaces that concurrent writers cannot trip, and the home's audit lock."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claims_pipeline.store.files import locked, replace_atomically, write_text_atomically


def _write_many(path: str, tag: str, n: int, errors: multiprocessing.Queue[str]) -> None:
    for k in range(n):
        try:
            write_text_atomically(Path(path), json.dumps({"writer": tag, "k": k, "pad": "x" * 4000}))
        except Exception as exc:  # a fixed temp name fails here: the other writer renamed it away first
            errors.put(f"{tag}:{k}: {exc!r}")
            return


def test_two_processes_replacing_one_file_never_fail_nor_leave_a_part(tmp_path: Path) -> None:
    target = tmp_path / "ledger.json"
    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    writers = [ctx.Process(target=_write_many, args=(str(target), tag, 300, errors)) for tag in ("a", "b")]
    for w in writers:
        w.start()
    seen = set()
    while any(w.is_alive() for w in writers):  # a reader meanwhile only ever sees a whole document
        if target.exists():
            seen.add(json.loads(target.read_text(encoding="utf-8"))["writer"])
    for w in writers:
        w.join(30)
        assert w.exitcode == 0
    assert errors.empty(), errors.get()
    assert json.loads(target.read_text(encoding="utf-8"))["k"] == 299
    assert seen <= {"a", "b"}
    assert [p.name for p in tmp_path.iterdir()] == ["ledger.json"]  # no temp file left behind


def test_a_failed_write_keeps_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "t.json"
    write_text_atomically(target, "old")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half", encoding="utf-8")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_atomically(target, half_then_fail)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


_HOLDER = r"""
import sys, time
from pathlib import Path
from claims_pipeline.store.files import locked
lock, log, hold = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
with locked(lock):
    with log.open("a") as f: f.write("holder-in\n")
    time.sleep(hold)
    with log.open("a") as f: f.write("holder-out\n")
"""


def _start_holder(tmp_path: Path, hold_s: float) -> tuple[subprocess.Popen, Path, Path]:
    lock, log = tmp_path / "audit" / "audit.lock", tmp_path / "order.log"
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(lock), str(log), str(hold_s)])
    deadline = time.monotonic() + 30
    while not (log.exists() and "holder-in" in log.read_text()):
        assert time.monotonic() < deadline and proc.poll() is None, "the holder never took the lock"
        time.sleep(0.01)
    return proc, lock, log


def test_the_audit_lock_makes_another_process_wait_for_the_holder(tmp_path: Path) -> None:
    proc, lock, log = _start_holder(tmp_path, 0.5)
    with locked(lock):
        with log.open("a") as f:
            f.write("waiter-in\n")
    assert proc.wait(30) == 0
    assert log.read_text().split() == ["holder-in", "holder-out", "waiter-in"]


def test_readers_share_the_lock_and_a_stuck_holder_is_named_after_the_timeout(tmp_path: Path) -> None:
    lock = tmp_path / "audit" / "audit.lock"
    with locked(lock, shared=True), locked(lock, shared=True, timeout_s=1):  # two readers at once
        pass
    proc, lock, _ = _start_holder(tmp_path, 10)
    try:
        with pytest.raises(TimeoutError, match=str(lock)):
            with locked(lock, shared=True, timeout_s=0.3):
                pass
    finally:
        proc.kill()
        proc.wait()
    with locked(lock, timeout_s=5):  # a killed holder's lock is gone with its process
        pass


def test_the_lock_file_outlives_its_holders_without_growing(tmp_path: Path) -> None:
    lock = tmp_path / "audit" / "audit.lock"
    for _ in range(3):
        with locked(lock):
            pass
    assert lock.exists() and os.path.getsize(lock) == 0


def test_a_file_system_without_locks_goes_on_without_one(tmp_path: Path, monkeypatch, caplog) -> None:
    import errno

    import claims_pipeline.store.files as files

    def no_locks(handle, mode):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(files.fcntl, "flock", no_locks)
    ran = []
    with caplog.at_level("WARNING"), locked(tmp_path / "audit.lock"):
        ran.append(True)
    assert ran == [True]
    assert "cannot lock" in caplog.text and "audit.lock" in caplog.text


def test_a_replaced_file_gets_the_mode_a_plain_write_would(tmp_path: Path) -> None:
    """mkstemp makes 0600 files: a home shared by a team would lose read access to its reports."""
    plain = tmp_path / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    replaced = tmp_path / "replaced.txt"
    write_text_atomically(replaced, "x")
    assert oct(replaced.stat().st_mode & 0o777) == oct(plain.stat().st_mode & 0o777)


def test_a_replaced_file_keeps_a_mode_its_owner_set(tmp_path: Path) -> None:
    private = tmp_path / "worklist.json"
    private.write_text("old", encoding="utf-8")
    private.chmod(0o640)
    write_text_atomically(private, "new")
    assert private.read_text(encoding="utf-8") == "new" and oct(private.stat().st_mode & 0o777) == "0o640"


_OVER_THE_LIMIT = """
import resource, sys
from pathlib import Path
from claims_pipeline.store.files import write_text_atomically
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))
try:
    write_text_atomically(Path(sys.argv[1]), "x" * 200_000)
except OSError as exc:
    print(exc.errno, exc.filename)
"""


def test_a_write_that_fails_for_want_of_room_names_the_file(tmp_path: Path) -> None:
    """A write() refused (a file size limit here; a full disk alike) said "[Errno 27] File too large" and no file:
    the file being replaced is named, and no temp file is left."""
    import errno

    target = tmp_path / "reports" / "report.json"
    done = subprocess.run([sys.executable, "-c", _OVER_THE_LIMIT, str(target)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.stdout.split() == [str(errno.EFBIG), str(target)], done.stderr
    assert list(target.parent.iterdir()) == []
