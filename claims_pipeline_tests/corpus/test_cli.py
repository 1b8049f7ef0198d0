"""`claims-pipeline extract` / `lint` through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from claims_pipeline_tests.corpus.conftest import COUNTRIES_LAYOUT
from claims_pipeline_tests.time_scale import scaled

GOOD = "## Tax\n- VAT **18 %** ([t](https://tax.gov.xx/v)) (2026-05-01 verified)\n- PIT **10 %** ([p](https://tax.gov.xx/p))\n"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command on a corpus in the countries layout (its preset in a config file of its own)."""
    layout = cwd / "layout.yaml"
    layout.write_text(yaml.safe_dump({"extraction": COUNTRIES_LAYOUT}), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args, "--config", str(layout)], cwd=cwd,
                          capture_output=True, text=True, timeout=scaled(60))


def test_extract_stats_and_json(corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", GOOD)
    corpus("countries/xb/playbook.md", b"\x00binary")
    out = tmp_path / "claims.json"
    r = cli("extract", "--corpus", str(root), "--json", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    assert stats["total_claims"] == 2 and stats["stamped"] == 1 and stats["never_verified"] == 1
    assert stats["by_tier"]["primary-gov"] == 2 and stats["skipped_pointer_links"] == 0
    assert "countries/xb/playbook.md:1: binary" in r.stderr
    records = json.loads(out.read_text())
    keys = {"id", "scope", "section", "line_no", "claim_text", "values", "source_url", "source_host", "source_tier",
            "inline_stamp", "link_kind", "last_verified", "last_verified_origin"}
    assert keys <= set(records[0]) and {"type", "raw", "needles", "salient"} <= set(records[0]["values"][0])


def test_extract_scope_and_secondary(corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", GOOD + "- yield **4 %** ([n](https://www.numbeo.com/x))\n")
    corpus("countries/xb/playbook.md", GOOD)
    r = cli("extract", "--corpus", str(root), "--scope", "xa", "--include-secondary", "--json", cwd=tmp_path)
    stats = json.loads(r.stdout)
    assert stats["top_scopes"] == {"xa": 3} and stats["by_tier"]["secondary"] == 1


def test_missing_corpus_exits_2(tmp_path):
    for cmd in ("extract", "lint"):
        r = cli(cmd, "--corpus", str(tmp_path / "nope"), cwd=tmp_path)
        assert r.returncode == 2 and "corpus directory not found" in r.stderr


def test_lint_strict_exit_code(corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", "- median **€185,000** ([stats.gov.xa](https://stats.gov.xa/))\n")
    r = cli("lint", "--corpus", str(root), cwd=tmp_path)
    assert r.returncode == 0 and "countries/xa/playbook.md:1" in r.stdout
    assert cli("lint", "--corpus", str(root), "--strict", cwd=tmp_path).returncode == 1


def test_extract_does_not_import_dagster_pandas_httpx(corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", GOOD)
    code = ("import sys; from claims_pipeline.cli import main; main(['extract','--corpus',sys.argv[1]]); "
            "main(['lint','--corpus',sys.argv[1]]); "
            "print(sorted(m for m in ('dagster','pandas','httpx') if m in sys.modules), file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=scaled(60), cwd=tmp_path)
    assert r.stderr.strip().splitlines()[-1] == "[]"


def test_extract_stats_count_scopes_and_stale_markers(corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", GOOD)
    corpus("countries/xc/playbook.md", "## Rent\n- cap **3.5 %** ([r](https://rent.gov.xc/c)) (2026-05-27 stale-marker)\n"
                                       "\n**Last verified**: 2026-04-02\n")
    corpus("shared/notes.md", "## Notes\nno figures here\n")
    r = cli("extract", "--corpus", str(root), "--json", cwd=tmp_path)
    stats = json.loads(r.stdout)
    assert stats["scopes_covered"] == 2 and stats["files"] == 3 and stats["total_claims"] == 3
    assert stats["stamped"] == 2 and stats["stale_marked"] == 1 and stats["never_verified"] == 1
    assert stats["by_verified_origin"] == {"inline": 2, "none": 1}


# ---- input errors: the same one line and exit 2 in every corpus command (extract, lint, audit, worklist) ----------

CORPUS_COMMANDS = ["extract", "lint", "audit", "worklist"]


def run_command(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The CLI with its own Dagster and claims_pipeline homes (audit and worklist open a Dagster instance)."""
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "CLAIMS_PIPELINE_HOME": str(tmp_path / "home")}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=scaled(120), env=env)


def write_cli_config(tmp_path: Path, corpus_dir: Path) -> tuple[Path, Path]:
    """A config naming corpus_dir, with a home whose worklist.json holds a previous worklist. Returns (config, home)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "worklist.json").write_text('{"items": ["previous"]}', encoding="utf-8")
    config = tmp_path / "cli.yaml"
    config.write_text(yaml.safe_dump({"home": str(home), "extraction": {"corpus_dir": str(corpus_dir), **COUNTRIES_LAYOUT}}),
                      encoding="utf-8")
    return config, home


@pytest.mark.parametrize("command", CORPUS_COMMANDS)
def test_missing_corpus_dir_is_one_line_naming_it_and_its_key_and_exit_2(command, tmp_path):
    missing = tmp_path / "nonexistent"
    config, home = write_cli_config(tmp_path, missing)
    r = run_command(command, "--config", str(config), tmp_path=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (
        2, [f"claims-pipeline: config {config}",
            f"claims-pipeline: corpus directory not found: {missing} (extraction.corpus_dir in {config})"]), r.stderr[-2000:]
    assert r.stdout == ""
    assert (home / "worklist.json").read_text(encoding="utf-8") == '{"items": ["previous"]}'  # not overwritten


@pytest.mark.parametrize("command", CORPUS_COMMANDS)
def test_scope_that_matches_nothing_is_one_line_naming_it_and_exit_2(command, corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", GOOD)
    corpus("countries/xb/playbook.md", GOOD)
    config, home = write_cli_config(tmp_path, root)
    r = run_command(command, "--config", str(config), "--scope", "zz", tmp_path=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (
        2, [f"claims-pipeline: config {config}", "claims-pipeline: no scope matches --scope 'zz' (scopes: xa, xb)"]), r.stderr[-2000:]
    assert r.stdout == ""
    assert (home / "worklist.json").read_text(encoding="utf-8") == '{"items": ["previous"]}'


def test_top_level_help_description_is_whole_sentences(capsys):
    from claims_pipeline.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    description = " ".join(out.split("\n\n")[1].split())  # the paragraph between usage and the commands
    assert description.endswith("."), f"`claims-pipeline --help` description cut short: {description!r}"
    assert "cited page" in description and "claims_pipeline/commands" not in description
    assert "claims-pipeline COMMAND --help" in " ".join(out.split())


def test_output_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    """`claims-pipeline extract --json | head -c 1`: the closed pipe ends the command without a traceback."""
    import subprocess
    import sys

    from claims_pipeline.config.settings import DEMO_CORPUS_DIR

    cmd = f"{sys.executable} -m claims_pipeline.cli extract --corpus {DEMO_CORPUS_DIR} --json | head -c 1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=scaled(120))
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.stdout == "{"


@pytest.mark.parametrize("command", ["audit", "worklist"])
def test_a_clock_that_is_no_date_is_a_usage_error_before_any_run(command, corpus, tmp_path):
    root = corpus("countries/xa/playbook.md", GOOD)
    config, home = write_cli_config(tmp_path, root)
    r = run_command(command, "--config", str(config), "--now", "notadate", tmp_path=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (
        2, [f"claims-pipeline: config {config}",
            "claims-pipeline: --now 'notadate': not an ISO date-time (e.g. 2026-06-01T00:00:00Z)"]), r.stderr[-2000:]
    assert r.stdout == "" and not (home / "assets").exists() and not (home / "cache").exists()


def test_every_command_says_which_configuration_it_loaded(corpus, tmp_path):
    """The same chain everywhere: --config, else $CLAIMS_PIPELINE_CONFIG, else ./config/claims_pipeline.yaml, else
    the built-in defaults; the first stderr line says which, so 56 claims here and 33 there is never a mystery."""
    root = corpus("countries/xa/playbook.md", GOOD)
    first = lambda r: r.stderr.splitlines()[0]  # noqa: E731
    assert first(run_command("extract", "--corpus", str(root), tmp_path=tmp_path)) == (
        "claims-pipeline: built-in defaults ($CLAIMS_PIPELINE_CONFIG unset, no ./config/claims_pipeline.yaml)")
    local = tmp_path / "config" / "claims_pipeline.yaml"
    local.parent.mkdir()
    local.write_text(f"extraction:\n  corpus_dir: {root}\n", encoding="utf-8")
    assert first(run_command("lint", tmp_path=tmp_path)) == f"claims-pipeline: config {local}"
    explicit, _ = write_cli_config(tmp_path, root)
    assert first(run_command("extract", "--config", str(explicit), tmp_path=tmp_path)) == f"claims-pipeline: config {explicit}"
