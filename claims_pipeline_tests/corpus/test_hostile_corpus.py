"""The corpus folder as an attacker would fill it (issue 17): a FIFO, a link to /dev/zero, a sparse 2 GB file, a
link to a file outside the corpus, file names holding terminal escapes and bidi controls. Every walker of the
corpus (extract, lint, the audit) skips each with a one-line warning, in bounded time and memory, and the other
scopes' results still come out. Real files, real FIFOs and links, the real command in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import LinterSettings
from claims_pipeline.corpus.extract import extract_corpus, list_scopes
from claims_pipeline.corpus.linter import lint_corpus
from claims_pipeline.corpus.reading import read_markdown
from claims_pipeline.corpus.scopes import walk_corpus
from claims_pipeline_tests.corpus.conftest import COUNTRIES_LAYOUT, make_corpus
from claims_pipeline_tests.support.hostile import GOOD, HOSTILE_NAME, assert_no_raw_controls, cli_env, run_cli
from claims_pipeline_tests.time_scale import scaled

# A scope is named after its file, cleaned of what a partition key cannot hold (control, format characters)
HOSTILE_SCOPE = "shared/evil-31mRED-0;title-"

MAX_RSS_MB = 400  # the whole CLI process; reading a 2 GB file or /dev/zero whole took 2.1–5.5 GB
FIFO_WARNING = "warning: countries/xb/fifo.md: not a regular file (a FIFO); skipped"
OUTSIDE = "a link to outside the corpus folder; skipped (extraction.follow_links_out_of_corpus reads such links)"


def good_corpus(root: Path) -> Path:
    """Two good scopes, xa and shared/ok: each with one claim that lint flags (a portal root next to a figure)."""
    for rel in ("countries/xa/playbook.md", "shared/ok.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(GOOD, encoding="utf-8")
    (root / "countries/xb").mkdir(parents=True)
    return root


def config(tmp_path: Path, corpus: Path, **extraction: object) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({"home": str(tmp_path / "home"),
                                    "extraction": {**COUNTRIES_LAYOUT, "corpus_dir": str(corpus), **extraction}}), encoding="utf-8")
    return path


def as_json(command: str) -> list[str]:
    """extract's statistics are read as its JSON document; lint's findings as the lines a person reads."""
    return [command, "--json"] if command == "extract" else [command]


def assert_good_scopes_done(extract_run, lint_run) -> None:
    stats = json.loads(extract_run.stdout)
    assert stats["top_scopes"] == {"xa": 2, "shared/ok": 2} and stats["files"] == 2
    assert lint_run.stdout.count("  → https://stats.gov.xa/") == 2  # both good files linted


@pytest.fixture
def corpus_root(tmp_path: Path) -> Path:
    return good_corpus(tmp_path / "corpus")


@pytest.mark.parametrize("command", ["extract", "lint"])
def test_a_fifo_named_md_is_skipped_and_never_blocks(command, corpus_root, tmp_path):
    os.mkfifo(corpus_root / "countries/xb/fifo.md")  # nobody ever writes to it: opening it to read would block
    run = run_cli(*as_json(command), "--config", str(config(tmp_path, corpus_root)), cwd=tmp_path, env=cli_env(tmp_path),
                  timeout=60)
    assert run.returncode == 0, run.stderr
    assert FIFO_WARNING in run.err_lines
    if command == "lint":
        assert run.stdout.count("  → https://stats.gov.xa/") == 2
    else:
        assert json.loads(run.stdout)["top_scopes"] == {"xa": 2, "shared/ok": 2}


def test_a_link_to_dev_zero_is_skipped_unread(corpus_root, tmp_path):
    (corpus_root / "countries/xb/zero.md").symlink_to("/dev/zero")
    cfg = config(tmp_path, corpus_root)
    runs = {c: run_cli(*as_json(c), "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
            for c in ("extract", "lint")}
    for run in runs.values():
        assert run.returncode == 0, run.stderr
        assert f"warning: countries/xb/zero.md: {OUTSIDE}" in run.err_lines
        assert run.max_rss_mb < MAX_RSS_MB, run.max_rss_mb
    assert_good_scopes_done(runs["extract"], runs["lint"])
    # allowed to leave the corpus, a device is still no file to read
    cfg = config(tmp_path, corpus_root, follow_links_out_of_corpus=True)
    run = run_cli("lint", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert "warning: countries/xb/zero.md: not a regular file (a character device); skipped" in run.err_lines
    assert run.max_rss_mb < MAX_RSS_MB and run.returncode == 0


def test_a_sparse_2_gb_file_is_skipped_unread(corpus_root, tmp_path):
    with open(corpus_root / "countries/xb/huge.md", "wb") as fh:
        fh.truncate(2 * 1024**3)  # sparse: no disk used, 2 GB of NULs to a reader
    cfg = config(tmp_path, corpus_root)
    runs = {c: run_cli(*as_json(c), "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
            for c in ("extract", "lint")}
    warning = ("warning: countries/xb/huge.md: file of 2,147,483,648 bytes, over extraction.max_file_bytes "
               "(20,000,000); skipped unread")
    for run in runs.values():
        assert run.returncode == 0, run.stderr
        assert warning in run.err_lines
        assert run.max_rss_mb < MAX_RSS_MB and run.seconds < scaled(30), (run.max_rss_mb, run.seconds)
    assert_good_scopes_done(runs["extract"], runs["lint"])


def test_the_size_cap_is_configurable(corpus_root, tmp_path):
    (corpus_root / "countries/xb/long.md").write_text(GOOD + "padding line\n" * 300, encoding="utf-8")  # ~4 KB
    corpus = make_corpus(corpus_root, max_file_bytes=2048)
    ex = extract_corpus(corpus)
    assert [str(w) for w in ex.warnings] == [
        f"countries/xb/long.md: file of {(corpus_root / 'countries/xb/long.md').stat().st_size:,} bytes, over "
        "extraction.max_file_bytes (2,048); skipped unread"]
    assert sorted({c.scope for c in ex.claims}) == ["shared/ok", "xa"]
    roomy = make_corpus(corpus_root, max_file_bytes=8192)
    assert "xb" in {c.scope for c in extract_corpus(roomy).claims}


def _bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_binary_detection_reads_only_the_first_bytes(tmp_path):
    path = tmp_path / "blob.md"
    path.write_bytes(b"\x00PNG" + b"x" * 15_000_000)  # under the cap, binary from its first byte
    before = _bytes_read()
    text, warnings = read_markdown(path, "blob.md", 20_000_000)
    read = _bytes_read() - before
    assert text is None and [str(w) for w in warnings] == ["blob.md:1: binary content (NUL byte) in a .md file; file skipped"]
    assert read < 100_000, f"read {read:,} bytes to find a NUL at byte 0"


def test_a_fifo_swapped_in_after_the_walk_does_not_block_the_reader(tmp_path):
    fifo = tmp_path / "late.md"
    os.mkfifo(fifo)
    result: list = []
    reader = threading.Thread(target=lambda: result.append(read_markdown(fifo, "late.md")), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader so the test process can end, then fail
        with open(fifo, "wb"):
            pass
        raise AssertionError("read_markdown blocked on a FIFO")
    text, warnings = result[0]
    assert text is None and [str(w) for w in warnings] == ["late.md: not a regular file; skipped"]


def test_a_link_to_a_file_outside_the_corpus_is_skipped_unless_allowed(corpus_root, tmp_path):
    outside = tmp_path / "private" / "notes.md"
    outside.parent.mkdir()
    outside.write_text("## Tax\n- CIT **22 %** ([secret.gov.xx](https://secret.gov.xx/))\n", encoding="utf-8")
    (corpus_root / "countries/xb/notes.md").symlink_to(outside)
    (corpus_root / "countries/xb/inside.md").symlink_to(corpus_root / "countries/xa/playbook.md")  # stays inside
    cfg = config(tmp_path, corpus_root)
    runs = {c: run_cli(*as_json(c), "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
            for c in ("extract", "lint")}
    for run in runs.values():
        assert run.returncode == 0 and f"warning: countries/xb/notes.md: {OUTSIDE}" in run.err_lines, run.stderr
        assert "secret.gov.xx" not in run.stdout
    # the link inside the corpus is the same file as countries/xa/playbook.md: read once, under its own name
    assert json.loads(runs["extract"].stdout)["top_scopes"] == {"xa": 2, "shared/ok": 2}
    assert ("warning: countries/xb/inside.md: the same file as countries/xa/playbook.md (a link to it, or a hard "
            "link); read once, as countries/xa/playbook.md, so that its claims count once") in runs["extract"].err_lines
    allowed = make_corpus(corpus_root, follow_links_out_of_corpus=True)
    assert "https://secret.gov.xx/" in {c.source_url for c in extract_corpus(allowed).claims}
    assert [f.url for f in lint_corpus(allowed, LinterSettings()) if f.scope == "xb"].count("https://secret.gov.xx/") == 1


def test_a_scope_folder_that_is_a_link_out_of_the_corpus_is_skipped_too(corpus_root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "zz").mkdir(parents=True)
    (elsewhere / "zz" / "playbook.md").write_text(GOOD, encoding="utf-8")
    shutil.rmtree(corpus_root / "shared")
    (corpus_root / "shared").symlink_to(elsewhere)
    walk = walk_corpus(make_corpus(corpus_root))
    assert [f.rel for f in walk.files] == ["countries/xa/playbook.md"]
    assert [(scope, str(w)) for scope, w in walk.skipped] == [("shared/zz/playbook", f"shared/zz/playbook.md: {OUTSIDE}")]


def test_every_walker_sees_the_same_files(corpus_root, tmp_path):
    """extract, lint and list_scopes (the audit's scopes and hashes) go through one walker: none of them is
    handed a FIFO, a device, a file over the cap or a link out of the corpus."""
    xb = corpus_root / "countries/xb"
    os.mkfifo(xb / "fifo.md")
    (xb / "zero.md").symlink_to("/dev/zero")
    (xb / "out.md").symlink_to("/etc/hostname")
    (xb / "dangling.md").symlink_to(xb / "nowhere")
    with open(xb / "huge.md", "wb") as fh:
        fh.truncate(30_000_000)
    (xb / "fine.md").write_text(GOOD, encoding="utf-8")
    corpus = make_corpus(corpus_root)
    listed = sorted(p.relative_to(corpus_root).as_posix() for ps in list_scopes(corpus).values() for p in ps)
    assert listed == ["countries/xa/playbook.md", "countries/xb/fine.md", "shared/ok.md"]
    ex = extract_corpus(corpus)
    assert sorted(ex.files) == listed
    skipped: list = []
    assert sorted({f.file for f in lint_corpus(corpus, LinterSettings(), skipped=skipped)}) == listed
    expected = {"countries/xb/dangling.md", "countries/xb/fifo.md", "countries/xb/huge.md", "countries/xb/out.md",
                "countries/xb/zero.md"}
    assert {w.file for w in skipped} == expected and {w.file for w in ex.warnings} == expected
    # a scope filter keeps the other scopes' skipped files out of its warnings
    assert extract_corpus(corpus, scopes=["xa"]).warnings == []


def test_hostile_file_names_are_escaped_wherever_they_are_printed(corpus_root, tmp_path):
    (corpus_root / f"shared/{HOSTILE_NAME}.md").write_text(GOOD, encoding="utf-8")
    (corpus_root / "countries/xb" / f"{HOSTILE_NAME}.md").symlink_to("/dev/zero")  # a warning naming it
    cfg = config(tmp_path, corpus_root)
    env = cli_env(tmp_path)
    extract = run_cli("extract", "--json", "--config", str(cfg), cwd=tmp_path, env=env, timeout=60)
    lint = run_cli("lint", "--config", str(cfg), cwd=tmp_path, env=env, timeout=60)
    nomatch = run_cli("extract", "--config", str(cfg), "--scope", "zz", cwd=tmp_path, env=env, timeout=60)
    for run in (extract, lint, nomatch):
        assert_no_raw_controls(run.stdout + run.stderr)
    written = r"evil\x1b[31mRED\x1b]0;title\x07\u200f\u061c"
    assert f"warning: countries/xb/{written}.md: {OUTSIDE}" in extract.err_lines
    assert f"  shared/{written}.md:3  → https://stats.gov.xa/" in lint.stdout.splitlines()
    # the scope named after the file keeps none of what a partition key or a terminal cannot hold
    assert nomatch.returncode == 2 and HOSTILE_SCOPE in nomatch.stderr
    stats = json.loads(extract.stdout)
    assert stats["top_scopes"][HOSTILE_SCOPE] == 2


def test_every_bidi_control_is_neutralised_in_reports_and_on_the_terminal():
    from claims_pipeline.common.text_safety import json_escaped, replaced, terminal_escaped
    from claims_pipeline.report.escape import md_cell
    from claims_pipeline_tests.report.html_text import as_html

    for ch in ("\u200e", "\u200f", "\u061c", "\u202e", "\u2066"):
        text = f"rate {ch}5 %"
        for shown in (as_html(text), md_cell(text), replaced(text), json_escaped(text), terminal_escaped(text)):
            assert ch not in shown, (ch, shown)


@pytest.mark.slow
def test_an_audit_of_a_hostile_corpus_reports_every_good_scope(tmp_path):
    """The whole audit (its corpus hashes, claims and citation_lint steps) on the demo corpus with every kind of
    hostile file added: it ends, within bounded time and memory, with a report covering every good scope, the
    skipped files named in its warnings, and no raw control or bidi character on the terminal or in the reports.
    (Before: the FIFO blocked citation_lint, /dev/zero grew the run to 5.5 GB, the outside link failed the run.)"""
    from claims_pipeline.config.settings import DEMO_CORPUS_DIR
    from claims_pipeline_demo.fixture_web.server import FixtureWeb
    from claims_pipeline_tests.support.fixture_settings import fixture_config

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS_DIR, corpus)
    good_scopes = set(list_scopes(make_corpus(corpus)))
    os.mkfifo(corpus / "countries/xb/fifo.md")
    (corpus / "countries/xa/zero.md").symlink_to("/dev/zero")
    with open(corpus / "countries/xa/huge.md", "wb") as fh:
        fh.truncate(2 * 1024**3)
    secret = tmp_path / "private.md"
    secret.write_text("- CIT **22 %** ([secret.gov.xx](https://secret.gov.xx/))\n", encoding="utf-8")
    (corpus / "countries/xc/private.md").symlink_to(secret)
    (corpus / f"shared/{HOSTILE_NAME}.md").write_text(
        "## Tax\n- Levy **0.8 %** \u200fof value\u061c \x1b[2J([levy](https://www.tax.gov.xa/property/annual-levy.html))\n",
        encoding="utf-8")
    with FixtureWeb() as web:
        data = fixture_config(web, tmp_path / "home")
        data["extraction"] = {**COUNTRIES_LAYOUT, "corpus_dir": str(corpus)}
        cfg = tmp_path / "audit.yaml"
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        run = run_cli("audit", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.max_rss_mb < 1000, run.max_rss_mb
    assert_no_raw_controls(run.stdout + run.stderr)
    for rel, why in [("countries/xb/fifo.md", "not a regular file (a FIFO)"), ("countries/xa/zero.md", OUTSIDE),
                     ("countries/xa/huge.md", "over extraction.max_file_bytes"), ("countries/xc/private.md", OUTSIDE)]:
        assert any(rel in line and why in line for line in run.err_lines), (rel, run.stderr[-3000:])
    report_dir = HomeLayout(tmp_path / "home").latest_report_dir()
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert set(report["scopes"]) == good_scopes | {HOSTILE_SCOPE}
    assert report["total"] >= 30 and "secret.gov.xx" not in json.dumps(report)
    for name in ("report.md", "report.html"):
        assert_no_raw_controls((report_dir / name).read_text(encoding="utf-8"))


def test_the_corpus_hashes_take_every_file_the_walker_yields(corpus_root, tmp_path):
    """The audit's corpus_documents step hashes the walker's files: a link out of the corpus that the switch
    allows is named by its own path (resolving it failed the whole run: 'is not in the subpath of'), and a
    FIFO swapped in after the walk hashes as unreadable instead of blocking."""
    from claims_pipeline.corpus.hashes import scope_file_hashes

    outside = tmp_path / "private.md"
    outside.write_text(GOOD, encoding="utf-8")
    (corpus_root / "countries/xb/private.md").symlink_to(outside)
    allowed = make_corpus(corpus_root, follow_links_out_of_corpus=True)
    files = list_scopes(allowed)["xb"]
    fifo = corpus_root / "countries/xb/late.md"
    os.mkfifo(fifo)
    done: list = []
    worker = threading.Thread(target=lambda: done.append(scope_file_hashes([*files, fifo], corpus_root)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        raise AssertionError("hashing blocked on a FIFO")
    hashes = done[0]
    assert set(hashes) == {"countries/xb/private.md", "countries/xb/late.md"}
    assert hashes["countries/xb/late.md"] == "unreadable:not a regular file" and len(hashes["countries/xb/private.md"]) == 64


def _within(seconds: float, fn, fifo: Path | None = None):
    """fn()'s result, failing when it has not returned within seconds (a FIFO it waits on is then opened, so
    the test process can end)."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        if fifo is not None:
            with open(fifo, "wb"):
                pass
        raise AssertionError(f"{fn} did not return within {seconds} s")
    return result[0]


@pytest.mark.parametrize("swap", ["fifo", "dev_zero", "outside", "sparse"])
def test_the_verdict_step_reads_a_claim_line_as_the_walker_would(swap, corpus_root, tmp_path):
    """verify and the verdicts asset read each claim's corpus line again after the audit (and the corrections
    the whole file): a file swapped since for a FIFO, a link to /dev/zero, a link out of the corpus or a 2 GB
    file gives no line, in bounded time and memory, instead of a wait, an endless read or a private file."""
    from claims_pipeline.judge.corrections import _read_lines
    from claims_pipeline.judge.items import corpus_line, corpus_lines

    rel = "countries/xa/playbook.md"
    path = corpus_root / rel
    first = GOOD.splitlines()[0]
    assert corpus_line(corpus_root, rel, 1) == first and isinstance(_read_lines(corpus_root, rel), list)
    outside = tmp_path / "private.md"
    outside.write_text("secret line\n", encoding="utf-8")
    path.unlink()
    if swap == "fifo":
        os.mkfifo(path)
    elif swap == "dev_zero":
        path.symlink_to("/dev/zero")
    elif swap == "outside":
        path.symlink_to(outside)
    else:
        with open(path, "wb") as fh:
            fh.truncate(2 * 1024**3)
    before = _bytes_read()
    fifo = path if swap == "fifo" else None
    assert _within(10, lambda: corpus_line(corpus_root, rel, 1), fifo) == ""
    assert _within(10, lambda: corpus_lines(corpus_root, rel), fifo) == []
    assert isinstance(_within(10, lambda: _read_lines(corpus_root, rel), fifo), str)
    assert _bytes_read() - before < 1_000_000
    if swap == "outside":  # the switch that lets the walker follow such a link lets this reader follow it too
        assert corpus_line(corpus_root, rel, 1, follow_links_out=True) == "secret line"


def test_verify_writes_out_the_file_names_and_failures_it_prints(corpus_root, tmp_path):
    """verify's dry run names the scopes not audited yet (scope names come from file names), and every command
    prints its runs' step failures, whose messages may quote a file name or a page: both written out."""
    import dagster as dg

    from claims_pipeline.orchestration.runner import run_failures

    (corpus_root / f"shared/{HOSTILE_NAME}.md").write_text(GOOD, encoding="utf-8")
    run = run_cli("verify", "--dry-run", "--config", str(config(tmp_path, corpus_root)), cwd=tmp_path,
                  env=cli_env(tmp_path), timeout=60)
    assert run.returncode == 0, run.stderr
    assert_no_raw_controls(run.stdout + run.stderr)
    assert HOSTILE_SCOPE in run.stderr

    @dg.op
    def reads_a_file() -> None:
        raise ValueError(f"cannot parse countries/{HOSTILE_NAME}.md")

    @dg.job
    def hostile_job() -> None:
        reads_a_file()

    failures = run_failures([hostile_job.execute_in_process(raise_on_error=False)])
    assert len(failures) == 1 and failures[0].startswith("reads_a_file: ValueError: cannot parse countries/evil")
    assert_no_raw_controls(failures[0])


def test_corrections_name_no_file_whose_name_a_terminal_would_obey(tmp_path):
    """corrections.patch names each file raw in its diff headers (git apply needs the name): a file name with
    an escape sequence was obeyed by `cat corrections.patch`, one with a line break wrote lines into the patch.
    Such a file gets no correction, and says why in corrections.json; the other files' corrections are made."""
    from claims_pipeline.judge.corrections import write_corrections
    from claims_pipeline_tests.judge.test_corrections import DEMO, XA, _verdict

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO, corpus)
    good = _verdict(corpus, XA, "Notarial deed", "€1,250", "money", 1250,
                    "A registration fee of 1 300 € per deed applies")
    hostile = []
    for i, name in enumerate([HOSTILE_NAME, "x\n+++ y", 'q"uote']):
        rel = f"countries/xa/{name}.md"
        shutil.copy(corpus / XA, corpus / rel)
        hostile.append(good.model_copy(update={"id": f"hostile{i}", "file": rel}))
    result = write_corrections([good, *hostile], corpus, tmp_path / "out")
    assert [c.claim_id for c in result.corrections] == [good.id]
    assert result.patch is not None
    patch = result.patch.read_text(encoding="utf-8")
    assert_no_raw_controls(patch)
    assert "+++ y" not in patch and 'q"uote' not in patch
    skipped = json.loads(result.listing.read_text(encoding="utf-8"))["skipped"]
    assert sorted(s["claim_id"] for s in skipped) == ["hostile0", "hostile1", "hostile2"]


def test_a_line_break_in_a_file_name_forges_no_output_line(corpus_root, tmp_path):
    forged = "\nFORGED: all citations fine\n"
    (corpus_root / f"shared/x{forged}.md").write_text(GOOD, encoding="utf-8")  # a lint finding names it
    (corpus_root / "countries/xb" / f"y{forged}.md").symlink_to("/dev/zero")  # a warning names it
    cfg = config(tmp_path, corpus_root)
    env = cli_env(tmp_path)
    extract = run_cli("extract", "--config", str(cfg), cwd=tmp_path, env=env, timeout=60)
    lint = run_cli("lint", "--config", str(cfg), cwd=tmp_path, env=env, timeout=60)
    for run in (extract, lint):
        lines = (run.stdout + run.stderr).splitlines()
        assert not [line for line in lines if line.startswith("FORGED")], run.stdout + run.stderr
    assert r"warning: countries/xb/y\x0aFORGED: all citations fine\x0a.md: " + OUTSIDE in extract.err_lines
    assert r"  shared/x\x0aFORGED: all citations fine\x0a.md:3  → https://stats.gov.xa/" in lint.stdout.splitlines()
