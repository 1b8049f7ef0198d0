"""What an operator meets when a store or an input is broken (issue 26): a page cache database that does not
answer or is damaged, a damaged stored asset value, a damaged Dagster instance file, a corpus folder that cannot
be read, a copied home whose reports/LATEST must point at its own reports, a judge that fails on claims whose
file names carry terminal escapes. Each is one line naming the file or database, where it was configured and what
to do, no traceback, nothing raw on the terminal. The real command in a subprocess, real files and databases."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.home import HomeLayout
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.corpus.conftest import COUNTRIES_LAYOUT
from claims_pipeline_tests.support.fixture_settings import fixture_config
from claims_pipeline_tests.support.hostile import (
    HOSTILE_NAME,
    assert_no_raw_controls,
    bound_by_file_modes,
    cli_env,
    run_cli,
)
from claims_pipeline_tests.time_scale import scaled

LEVY = "http://www.tax.gov.xa/property/annual-levy.html"


def one_error_line(run) -> str:
    """The command's only line after the one naming its configuration: no traceback, nothing raw."""
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert_no_raw_controls(run.stderr)
    lines = [line for line in run.err_lines if not line.startswith("[audit] ")]
    assert len(lines) == 1, run.stderr[-3000:]
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: a connection to it is refused


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory):
    """A corpus of two scopes (one file named with terminal escapes) audited once against the fixture web."""
    root = tmp_path_factory.mktemp("audited")
    corpus = root / "corpus"
    (corpus / "countries" / "xa").mkdir(parents=True)
    (corpus / "countries" / "xa" / "playbook.md").write_text(f"## Tax\n- Levy **0.8 %** ([levy]({LEVY}))\n", encoding="utf-8")
    (corpus / "shared").mkdir()
    (corpus / "shared" / f"{HOSTILE_NAME}.md").write_text(f"## Tax\n- Levy **1.1 %** ([levy]({LEVY}))\n", encoding="utf-8")
    with FixtureWeb() as web:
        data = fixture_config(web, root / "home")
        data["extraction"] = {"corpus_dir": str(corpus), **COUNTRIES_LAYOUT}  # scopes xa and shared
        cfg = root / "audit.yaml"
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        run = run_cli("audit", "--config", str(cfg), cwd=root, env=cli_env(root), timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        yield root, cfg, data, web


# verify needs a judge (without one it says what to set, exit 2): one on a closed port, which never answers
UNREACHABLE_JUDGE = {"provider": "openai-compatible", "base_url": f"http://127.0.0.1:{closed_port()}/v1",
                     "max_retries": 0, "request_timeout_s": 5, "api_key_env": "CLAIMS_TEST_JUDGE_KEY"}


def JUDGE_ENV(tmp_path: Path) -> dict[str, str]:  # noqa: N802 (reads as the constant it stands beside)
    return {**cli_env(tmp_path), "CLAIMS_TEST_JUDGE_KEY": "sk-test-not-a-key"}


def copy_of(audited, tmp_path: Path, **changes) -> tuple[Path, dict]:
    """A copy of the audited home, with a config of its own (pointing at the copy)."""
    root, _, data, _ = audited
    shutil.copytree(root / "home", tmp_path / "home")
    shutil.copytree(root / "dagster", tmp_path / "dagster")
    data = {**data, "home": str(tmp_path / "home"), **changes}
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
    return cfg, data


def test_latest_is_relative_to_the_home_and_a_copied_home_reads_its_own(audited, tmp_path):
    root = audited[0]
    text = (root / "home" / "reports" / "LATEST").read_text(encoding="utf-8").strip()
    assert not Path(text).is_absolute() and text.startswith("reports/"), text
    cfg, _ = copy_of(audited, tmp_path, judge=UNREACHABLE_JUDGE)
    shutil.rmtree(root / "home" / "reports" / "keep", ignore_errors=True)
    copied = HomeLayout(tmp_path / "home").latest_report_dir()
    assert copied == tmp_path / "home" / text and (copied / "report.json").is_file()
    # the verdict step of the copy finds the copy's report (a judge on a closed port: nothing answers)
    run = run_cli("verify", "--config", str(cfg), cwd=tmp_path, env=JUDGE_ENV(tmp_path), timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert str(tmp_path / "home" / "reports") in run.stderr and str(root / "home") not in run.stderr, run.stderr


def test_an_older_absolute_latest_is_still_read(audited, tmp_path):
    copy_of(audited, tmp_path)
    layout = HomeLayout(tmp_path / "home")
    report = layout.latest_report_dir()
    layout.latest_file.write_text(f"{report}\n", encoding="utf-8")  # what earlier versions wrote
    assert layout.latest_report_dir() == report


@pytest.mark.slow
def test_a_damaged_stored_value_names_the_file_and_the_fix_and_audit_repairs_it(audited, tmp_path):
    cfg, _ = copy_of(audited, tmp_path, judge=UNREACHABLE_JUDGE)
    store = tmp_path / "home" / "assets" / "priors.store"
    damaged = store / json.loads((store / "index.json").read_text(encoding="utf-8"))["xa"]
    damaged.write_bytes(damaged.read_bytes()[:40])  # cut short, as by a full disk
    run = run_cli("verify", "--config", str(cfg), cwd=tmp_path, env=JUDGE_ENV(tmp_path), timeout=300)
    assert run.returncode == 1
    line = one_error_line(run)
    assert line.startswith(f"claims-pipeline: verdicts: StoredValueDamaged: {damaged}: the stored value of priors is "
                           "damaged (ArrowInvalid: "), line
    assert line.endswith("; run `claims-pipeline audit` to rebuild it"), line
    with FixtureWeb() as web:  # the audit fetches again: a fixture web of its own, the copy's config follows it
        data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
        data["fetch"]["address_map"] = web.address_map()
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        assert run_cli("audit", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=300).returncode == 0
    run = run_cli("verify", "--config", str(cfg), cwd=tmp_path, env=JUDGE_ENV(tmp_path), timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.parametrize("content", [b"run_storage: [\n  x: \x1b[31m\n", b"run_storage:\n  module: no_such_module\n  class: X\n"])
def test_a_damaged_instance_file_is_one_line_naming_it(audited, tmp_path, content):
    cfg, _ = copy_of(audited, tmp_path)
    instance_file = tmp_path / "dagster" / "dagster.yaml"
    instance_file.write_bytes(content)
    run = run_cli("audit", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=300)
    assert run.returncode == 2
    line = one_error_line(run)
    assert line.startswith(f"claims-pipeline: {instance_file}: the Dagster instance file cannot be used ("), line
    assert "delete it to get the default one back" in line


def test_a_page_cache_database_that_does_not_answer_is_one_line_before_any_run(audited, tmp_path):
    url = f"postgresql://claims:secret@127.0.0.1:{closed_port()}/claims"
    cfg, _ = copy_of(audited, tmp_path, cache={"db_url": url})
    for command in (["audit"], ["fetch", LEVY]):
        run = run_cli(*command, "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=120)
        assert run.returncode == 2, (command, run.stderr[-3000:])
        line = one_error_line(run)
        assert line.startswith(f"claims-pipeline: page cache database {url.replace('secret', '***')} (cache.db_url) "
                               "does not answer: "), line
        assert "Connection refused" in line and "check that the server runs" in line and "secret" not in line
        assert "sqlalche.me" not in line


def test_a_damaged_cache_index_names_it_and_says_what_to_do(audited, tmp_path):
    cfg, _ = copy_of(audited, tmp_path)
    index = tmp_path / "home" / "cache" / "index.sqlite"
    with sqlite3.connect(index) as db:  # everything into the main file first (the WAL would hold the tables)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(index.read_bytes())
    assert len(raw) > 4 * 4096
    for page in range(4096, len(raw), 4096):  # every page but the header's: the file opens, its tables do not read
        raw[page:page + 4096] = b"\xab" * 4096
    index.write_bytes(bytes(raw))
    with FixtureWeb() as web:
        data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
        data["fetch"]["address_map"] = web.address_map()
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        run = run_cli("audit", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=300)
    assert run.returncode in (1, 2), run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "sqlalche.me" not in run.stderr, run.stderr[-3000:]
    said = [line for line in run.err_lines if "malformed" in line]
    assert said and ("page cache index" in said[-1]) and "python -m claims_pipeline.store.consistency" in said[-1], run.stderr
    checker = subprocess.run([sys.executable, "-m", "claims_pipeline.store.consistency", "--config", str(cfg)],
                             capture_output=True, text=True, env=cli_env(tmp_path), timeout=scaled(120))
    assert checker.returncode != 0 and "Traceback" not in checker.stderr
    assert "malformed" in checker.stderr + checker.stdout or "PROBLEM" in checker.stdout, checker


def test_a_judge_that_fails_names_claims_with_their_file_names_written_out(audited, tmp_path):
    judge = {"provider": "openai-compatible", "base_url": f"http://127.0.0.1:{closed_port()}/v1", "max_retries": 0,
             "request_timeout_s": 5, "api_key_env": "CLAIMS_TEST_JUDGE_KEY"}
    cfg, _ = copy_of(audited, tmp_path, judge=judge)
    env = {**cli_env(tmp_path), "CLAIMS_TEST_JUDGE_KEY": "sk-test-not-a-key"}
    run = run_cli("verify", "--config", str(cfg), cwd=tmp_path, env=env, timeout=300)
    assert_no_raw_controls(run.stdout + run.stderr)
    warned = [line for line in run.err_lines if line.startswith("[warning] judge: ")]
    # the claim is named by its scope, which the corpus walk cleans into a partition key ("shared/evil-31mRED-…"):
    # the file's name reaches the terminal with nothing a terminal obeys (assert_no_raw_controls above)
    assert warned and any("evil" in line and "RED" in line for line in warned), run.stderr[-3000:]


def test_a_corpus_folder_that_cannot_be_read_is_cannot_read_and_exit_2(tmp_path):
    # root reads everything: the command then runs where file modes bind it (bound_by_file_modes), as the owner of
    # the checkout, so that it starts from any clone (a 0700 folder too) and only the corpus is out of reach
    base = Path(tempfile.mkdtemp(prefix="unreadable-", dir="/tmp"))
    try:
        corpus = base / "corpus"
        (corpus / "countries" / "xa").mkdir(parents=True)
        (corpus / "countries" / "xa" / "playbook.md").write_text(f"- Levy **0.8 %** ([levy]({LEVY}))\n", encoding="utf-8")
        cfg = base / "cfg.yaml"
        cfg.write_text(yaml.safe_dump({"home": str(base / "home"), "extraction": {"corpus_dir": str(corpus)}}))
        for path in (base, cfg):
            path.chmod(0o755)
        corpus.chmod(0o000)  # the corpus folder itself (one unreadable folder inside is skipped with a warning)
        prefix = bound_by_file_modes()
        for command in ("extract", "lint"):
            done = subprocess.run([*prefix, sys.executable, "-m", "claims_pipeline.cli", command, "--config", str(cfg)],
                                  capture_output=True, text=True, cwd=base, env=cli_env(base), timeout=scaled(120))
            assert "No module named" not in done.stderr, f"the command could not start under {prefix}: {done.stderr}"
            assert done.returncode == 2, (command, done.stderr[-3000:])
            last = done.stderr.strip().splitlines()[-1]
            # the first path it could not read (the scope folders under the corpus are looked up first)
            assert last.startswith(f"claims-pipeline: cannot read {corpus}") and last.endswith(
                ": Permission denied (the corpus folder is only read: check its permissions)"), (command, done.stderr)
            assert "cannot write" not in done.stderr
    finally:
        (base / "corpus").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_a_cache_index_cut_to_nothing_is_refused_not_replaced(audited, tmp_path):
    """A 0-byte index.sqlite (a full disk, an interrupted copy) was opened by SQLite as a new database: the cache
    started again without a word, the pages' history lost and every page re-baselined."""
    cfg, _ = copy_of(audited, tmp_path)
    index = tmp_path / "home" / "cache" / "index.sqlite"
    for leftover in index.parent.glob("index.sqlite-*"):
        leftover.unlink()
    index.write_bytes(b"")
    for command in (["audit"], ["fetch", LEVY]):
        run = run_cli(*command, "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=300)
        assert run.returncode == 2, (command, run.stderr[-3000:])
        line = one_error_line(run)
        assert line == (f"claims-pipeline: page cache index {index} is empty (0 bytes) while the page cache holds stored "
                        "pages: it was cut short (a full disk, an interrupted copy?), and a new index would lose every "
                        f"page's history without a word. Restore it from a backup, or move it aside (mv {index} "
                        f"{index}.damaged) to start a new index (the next audit takes every page as new)"), line
        assert index.stat().st_size == 0  # left as it was found
