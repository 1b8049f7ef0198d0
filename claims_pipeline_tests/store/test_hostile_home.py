"""A home folder that cannot be written (issue 17): read-only, or on a full disk. `fetch`, `audit` and `worklist`
each end with one line saying what could not be written where, exit code 1, and leave the home exactly as it
was (the cache stays consistent); the consistency checker says so in one line too. The home is a small tmpfs
that root mounts for the test (remounted read-only, or filled to the last byte); without root, the same
refusal is reached through the same code path (a folder without write permission, a free-space floor above
what is free)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.settings import load_settings
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.consistency import verify_cache
from claims_pipeline.store.writable import MIN_FREE_BYTES, StorageError, check_writable, home_folders
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.fixture_settings import write_config
from claims_pipeline_tests.support.hostile import cli_env, run_cli
from claims_pipeline_tests.time_scale import scaled

TMPFS_MB = 24


class Home:
    """A folder on its own small file system: read_only() and fill() change what the pipeline can write."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mounted = False

    def mount(self) -> bool:
        self.path.mkdir(parents=True)
        if os.geteuid() != 0:
            return False
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MB}m", "tmpfs", str(self.path)],
                              capture_output=True, timeout=30)
        self.mounted = done.returncode == 0
        return self.mounted

    def _chmod_folders(self, mode: int) -> None:
        for folder, _, _ in os.walk(self.path):
            os.chmod(folder, mode)

    def read_only(self) -> None:
        if self.mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True, timeout=30)
        else:
            self._chmod_folders(0o555)

    def fill(self) -> None:
        """No byte left: write until the file system refuses (a whole MB, then 4 KB at a time)."""
        fd = os.open(self.path / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for size in (1 << 20, 4096, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def writable(self) -> None:
        if self.mounted:
            subprocess.run(["mount", "-o", "remount,rw", str(self.path)], check=True, timeout=30)
        else:
            self._chmod_folders(0o755)

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, timeout=30)
        else:
            self._chmod_folders(0o755)

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Every file and folder with its size and modification time: what 'nothing written' means."""
        out = {}
        for folder, subfolders, names in os.walk(self.path):
            for name in subfolders + names:
                st = os.lstat(os.path.join(folder, name))
                out[os.path.relpath(os.path.join(folder, name), self.path)] = (st.st_size, st.st_mtime_ns)
        return out


@pytest.fixture
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path / "home")
    h.mount()
    try:
        yield h
    finally:
        h.unmount()


def fetched_home(web: FixtureWeb, home: Home, tmp_path: Path) -> tuple[Path, str]:
    """A home with a page cache holding one fetch (the state a later run must not damage). Returns (config, url)."""
    cfg = write_config(web, home.path, tmp_path / "c.yaml")
    url = web.url("www.tax.gov.xa", "/property/annual-levy.html")
    first = run_cli("fetch", "--config", str(cfg), url, cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert first.returncode == 0, first.stderr
    return cfg, url


def cache_consistent(cfg: Path) -> None:
    with PageCache.at(load_settings(cfg).page_cache) as cache:
        report = verify_cache(cache)
    assert report.ok and report.rows_checked == 1, report.problems


def commands(cfg: Path, url: str) -> list[list[str]]:
    return [["fetch", "--config", str(cfg), url], ["audit", "--config", str(cfg)],
            ["worklist", "--config", str(cfg), "--sample", "2"], ["verify", "--config", str(cfg)]]


def test_a_read_only_home_is_one_line_exit_1_and_nothing_written(web, home, tmp_path):
    cfg, url = fetched_home(web, home, tmp_path)
    home.read_only()
    before = home.snapshot()
    why = "Read-only file system" if home.mounted else "Permission denied"
    for args in commands(cfg, url):
        run = run_cli(*args, cwd=tmp_path, env={**cli_env(tmp_path), "DAGSTER_HOME": str(home.path / "dagster")},
                      timeout=60)
        assert (run.returncode, run.err_lines) == (
            1, [f"claims-pipeline: cannot write the home folder {home.path}: {why} ({home.path})"]), run.stderr[-3000:]
        assert run.stdout == "" and run.seconds < scaled(30)
    assert home.snapshot() == before
    home.writable()
    cache_consistent(cfg)


def test_a_full_disk_is_one_line_exit_1_and_the_cache_stays_consistent(web, home, tmp_path):
    cfg, url = fetched_home(web, home, tmp_path)
    if home.mounted:
        home.fill()
    before = home.snapshot()
    env = {**cli_env(tmp_path), "DAGSTER_HOME": str(home.path / "dagster")}
    for args in commands(cfg, url):
        if not home.mounted:  # the same refusal through the same check: a floor above what the disk has free
            with pytest.raises(StorageError, match="No space left on device"):
                settings = load_settings(cfg)
                check_writable(home_folders(settings.home_dir, settings.page_cache), min_free=1 << 62)
            break
        run = run_cli(*args, cwd=tmp_path, env=env, timeout=60)
        assert run.returncode == 1 and len(run.err_lines) == 1, run.stderr[-3000:]
        assert run.err_lines[0].startswith(
            f"claims-pipeline: cannot write the home folder {home.path}: No space left on device (0 KB free"), run.stderr
        assert run.seconds < scaled(30)
    assert home.snapshot() == before
    if home.mounted:
        # the checker cannot even open the cache (SQLite needs room for its WAL): one line, exit 1
        checker = subprocess.run([sys.executable, "-m", "claims_pipeline.store.consistency", "--config", str(cfg)],
                                 capture_output=True, text=True, timeout=scaled(60), cwd=tmp_path)
        assert checker.returncode == 1 and len(checker.stderr.splitlines()) == 1, checker.stderr[-3000:]
        assert checker.stderr.startswith(f"claims-pipeline: cannot check the page cache sqlite:///{home.path}/cache/")
        os.remove(home.path / "filler")  # room again: the cache is whole, and the checker says so
        cache_consistent(cfg)
        checker = subprocess.run([sys.executable, "-m", "claims_pipeline.store.consistency", "--config", str(cfg)],
                                 capture_output=True, text=True, timeout=scaled(60), cwd=tmp_path)
        assert checker.returncode == 0 and "1 fetch rows" in checker.stdout, checker.stderr


def test_a_home_with_too_little_room_for_a_run_is_refused_before_it_starts(tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    with pytest.raises(StorageError) as e:
        check_writable({"the home folder": folder}, min_free=free + (1 << 30))
    assert str(e.value).startswith(f"cannot write the home folder {folder}: No space left on device (")
    check_writable({"the home folder": folder / "not" / "yet"}, min_free=0)  # created later: its parent decides
    assert not (folder / "not").exists() and MIN_FREE_BYTES == 16 * 1024 * 1024


def test_an_output_file_that_cannot_be_written_is_one_line_exit_1(home, tmp_path):
    corpus = tmp_path / "corpus" / "countries" / "xa"
    corpus.mkdir(parents=True)
    (corpus / "playbook.md").write_text("- VAT **18 %** ([t](https://tax.gov.xx/v))\n", encoding="utf-8")
    home.read_only()
    out = home.path / "claims.json"
    run = run_cli("extract", "--corpus", str(tmp_path / "corpus"), "--out", str(out), cwd=tmp_path,
                  env=cli_env(tmp_path), timeout=60)
    why = "Read-only file system" if home.mounted else "Permission denied"
    assert (run.returncode, run.err_lines[-1:]) == (1, [f"claims-pipeline: cannot write {out}: {why}"]), run.stderr
    assert "Traceback" not in run.stderr and not out.exists()


@pytest.mark.parametrize("content", ["fifo", "dev_zero", "5000\n", "1000000000000\n", "9" * 5000, "-3\n", "2_0\n", b"\xff\xfe2"])
def test_the_demo_epoch_file_is_read_bounded_and_capped(tmp_path, content):
    """The demo's fixture-epoch.txt in the home is read when a UI run starts the demo's fixture web: a FIFO put
    there hung that start, a link to /dev/zero read without end, and 10**12 made every page request look for
    10**12 variant files. Now each is epoch 1 (a number over the cap is the cap), at once."""
    import threading

    from claims_pipeline.config.home import HomeLayout
    from claims_pipeline_demo.fixture_web.server import MAX_EPOCH
    from claims_pipeline_demo.routes import save_epoch, saved_epoch

    save_epoch(tmp_path, 2)
    assert saved_epoch(tmp_path) == 2
    path = HomeLayout(tmp_path).fixture_epoch_file
    path.unlink()
    if content == "fifo":
        os.mkfifo(path)
    elif content == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result: list[int] = []
    reader = threading.Thread(target=lambda: result.append(saved_epoch(tmp_path)), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():
        if content == "fifo":
            with open(path, "wb"):
                pass
        raise AssertionError("saved_epoch did not return within 10 s")
    assert result == [MAX_EPOCH if content == "5000\n" else 1]
    web = FixtureWeb.__new__(FixtureWeb)  # the epoch is plain state: no server needed to check the cap
    web.set_epoch(10**12)
    assert web.epoch == MAX_EPOCH


def test_a_home_sub_folder_that_cannot_be_made_mid_run_is_one_line_exit_1(tmp_path):
    """What the check before the run cannot see (here the verdict cache's folder <home>/judge, a file in its
    place) fails a step: the command says the cause in one line and exits 1. Dagster's console printed each
    failed step with its ~90-line traceback, and the CLI's own line named only Dagster's wrapper error."""
    corpus = tmp_path / "corpus" / "countries" / "xa"
    corpus.mkdir(parents=True)
    (corpus / "playbook.md").write_text("- VAT **18 %** ([t](https://tax.gov.xx/v))\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    (home / "judge").write_text("not a folder", encoding="utf-8")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(home), "extraction": {"corpus_dir": str(tmp_path / "corpus")},
                                   "judge": {"provider": "openai-compatible", "base_url": "http://127.0.0.1:9/v1"}}),
                   encoding="utf-8")
    # verify needs an audit first: its stored values, as one leaves them (the step fails before it reads them)
    (home / "assets" / "priors").mkdir(parents=True)
    (home / "assets" / "priors" / "countries.json").write_text("{}", encoding="utf-8")
    run = run_cli("verify", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=120)
    assert run.returncode == 1 and run.stdout == "", run.stderr[-3000:]
    assert run.err_lines[-1] == f"claims-pipeline: verdicts: FileExistsError: [Errno 17] File exists: '{home / 'judge'}'"
    assert "Traceback" not in run.stderr and "Stack Trace" not in run.stderr, run.stderr[-3000:]
    assert all(line.startswith(("claims-pipeline: ", "[warning] ")) for line in run.err_lines), run.stderr[-3000:]
    assert run.seconds < scaled(60)


def test_a_worklist_that_cannot_be_written_mid_run_is_one_line_exit_1(tmp_path):
    """The worklist's run logs through the CLI's console too: an output folder that cannot be made (a file in
    its place) is the command's one line naming the cause, not Dagster's 80-line traceback."""
    corpus = tmp_path / "corpus" / "countries" / "xa"
    corpus.mkdir(parents=True)
    (corpus / "playbook.md").write_text("- VAT **18 %** ([t](https://tax.gov.xx/v))\n", encoding="utf-8")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "extraction": {"corpus_dir": str(tmp_path / "corpus")}}),
                   encoding="utf-8")
    run = run_cli("worklist", "--config", str(cfg), "--out", str(cfg / "worklist.json"), cwd=tmp_path,
                  env=cli_env(tmp_path), timeout=120)
    assert run.returncode == 1 and run.stdout == "", run.stderr[-3000:]
    assert run.err_lines == [f"claims-pipeline: worklist: FileExistsError: [Errno 17] File exists: '{cfg}'"], run.stderr[-3000:]


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[str]:
    """folder read-only on its own (a read-only bind mount as root, whom no mode stops; else mode 0555); yields
    what the check then says of it."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True, timeout=30)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True, timeout=30)
            yield "Read-only file system"
        finally:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)
    else:
        folder.chmod(0o555)
        try:
            yield "Permission denied"
        finally:
            folder.chmod(0o755)


@pytest.mark.parametrize(("sub", "label"), [("reports", "the reports folder"), ("assets", "the per-scope values folder"),
                                            ("assets/priors", "the per-scope values folder of priors")])
def test_a_read_only_output_folder_is_refused_before_the_fetch(web, home, tmp_path, sub, label):
    """A read-only reports/ or assets/ under a writable home was found after every page had been fetched."""
    cfg, _ = fetched_home(web, home, tmp_path)
    folder = home.path / sub
    with read_only_folder(folder) as why:
        before = home.snapshot()
        run = run_cli("audit", "--config", str(cfg), cwd=tmp_path,
                      env={**cli_env(tmp_path), "DAGSTER_HOME": str(home.path / "dagster")}, timeout=120)
        assert (run.returncode, run.err_lines) == (
            1, [f"claims-pipeline: cannot write {label} {folder}: {why} ({folder})"]), run.stderr[-3000:]
        assert home.snapshot() == before  # no page fetched, nothing written


def _file_size_limit(kb: int):
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (kb * 1024, resource.RLIM_INFINITY))
    return limit


def test_a_file_size_limit_is_told_as_one_not_as_a_damaged_cache(web, tmp_path):
    """Under `ulimit -f`, SQLite says "disk I/O error": the advice was to move a healthy database aside."""
    home = tmp_path / "home"
    cfg = write_config(web, home, tmp_path / "c.yaml")
    env = {**cli_env(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster")}
    done = subprocess.run([sys.executable, "-m", "claims_pipeline.cli", "audit", "--config", str(cfg)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, preexec_fn=_file_size_limit(40))
    assert done.returncode in (1, 2), done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert "this process may not write files larger than 40,960 bytes (ulimit -f)" in last, done.stderr[-3000:]
    assert "damaged" not in last and "move it aside" not in last
