"""`claims-pipeline init` then `claims-pipeline audit` on a knowledge base of its own layout: two commands, no file
edited by hand. The cited sites (http://: the fixture web speaks no TLS) are served by the fixture web on 127.0.0.1 (the test's stand-in for the internet:
`--set` routes their hosts there, as a user would route an intranet)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.home import HomeLayout
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.support.hostile import bound_by_file_modes
from claims_pipeline_tests.time_scale import scaled

FILLER = "<p>" + "This page sets out the rules, who may claim, how to apply and which documents to bring. " * 5 + "</p>"
SITES = {
    "www.arbeitsagentur.de/leistungen.html": "<h1>Arbeitslosengeld</h1><p>Das Arbeitslosengeld beträgt 60 % des "
    "pauschalierten Nettoentgelts, mit Kind 67 %.</p>",
    "service.berlin.de/gebuehr.html": "<h1>Anmeldung</h1><p>Die Gebühr für einen Reisepass beträgt 70 Euro.</p>",
    "stats.example.net/rents.html": "<h1>Rents</h1><p>Rents in the capital rose 4.1 % last year.</p>",
}
KB = {
    "README.md": "# Moving to Berlin\n\nOur notes, one folder per topic.\n",
    "guides/benefits.md": "# Benefits\n\nUnemployment benefit is **60 %** of net pay "
    "([Bundesagentur für Arbeit](http://www.arbeitsagentur.de/leistungen.html)).\n",
    "guides/admin/passport.md": "# Passport\n\nA passport costs **€92** ([Service Berlin](http://service.berlin.de/gebuehr.html)).\n",
    "housing/rents.md": "---\ntitle: Rents\nscope: Housing market\n---\n\nRents rose **4.1 %** in a year "
    "([a statistics blog](http://stats.example.net/rents.html)).\n",
}
LINE = "Unemployment benefit is **60 %** of net pay ([BA](http://www.arbeitsagentur.de/leistungen.html)).\n"


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


VENV_SCRIPT = Path(sys.executable).with_name("claims-pipeline")


def without_the_venv(path: str) -> str:
    return os.pathsep.join(p for p in path.split(os.pathsep) if not p or Path(p).absolute() != VENV_SCRIPT.parent)


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLAIMS_PIPELINE_HOME": str(cwd / "home"), "DAGSTER_HOME": str(cwd / "dagster"),
           "PATH": without_the_venv(os.environ.get("PATH", ""))}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=scaled(300), env=env)


@pytest.mark.slow
def test_init_then_audit_on_a_new_folder(tmp_path):
    sites, kb, work = tmp_path / "sites", tmp_path / "berlin-notes", tmp_path / "work"
    write_tree(sites, {rel: f"<html><head><title>x</title></head><body>{body}{FILLER}</body></html>"
                       for rel, body in SITES.items()})
    write_tree(kb, KB)
    work.mkdir()
    with FixtureWeb(sites) as web:
        routes = json.dumps(web.address_map([h.split("/")[0] for h in SITES]))
        init = cli(work, "init", str(kb), "--set", "fetch.allow_networks=[127.0.0.1/32]", "--set",
                   f"fetch.address_map={routes}")
        assert init.returncode == 0, init.stderr
        config = work / "config" / "claims_pipeline.yaml"
        out = init.stdout.splitlines()
        assert out[0] == f"wrote {config}"
        assert out[1] == f"  corpus: {kb}: 4 markdown files read"
        assert out[2] == ("  scopes: 3, one per top-level folder, files at the root in the scope 'root': "
                          "guides (2 files), root (1 file), Housing market (1 file)")
        assert out[3] == ("  claims: 3 by source tier: official 2 (government name 0, listed 2), secondary 1, "
                          "own pages 0")
        # guides/benefits.md and guides/admin/passport.md share a scope: said, with the setting that splits them
        assert out[4] == ("  hint: the scope guides holds files of guides/ and of guides/admin/: --set "
                          "extraction.scope_depth=2 (with --force) gives each of these folders a scope of its own; "
                          "extraction.scope_rules names scopes by path")
        # run as `python -m` with the venv not on PATH: the venv's script by its path, which runs from anywhere
        assert out[5] == "next:" and out[6].split() == [str(VENV_SCRIPT), "audit", "re-reads", "every", "cited", "page",
                                                        "and", "writes", "the", "report"]
        assert any("dg dev" in line and f"CLAIMS_PIPELINE_CONFIG={config}" in line for line in out)
        written = yaml.safe_load(config.read_text(encoding="utf-8"))
        assert written["extraction"] == {"corpus_dir": str(kb), "scope_depth": 1}  # not beside it: absolute
        assert set(written) == {"extraction", "fetch"}  # nothing that has a good default

        audit = cli(work, "audit")  # the file init wrote is found without naming it
        assert audit.returncode == 0, audit.stderr[-3000:]
    assert audit.stderr.splitlines()[0] == f"claims-pipeline: config {config}"
    report_dir = HomeLayout(work / "home").latest_report_dir()
    assert report_dir is not None
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert report["headline"]["total"] == 3 and set(report["scopes"]) == {"guides", "Housing market", "root"}
    # €92 is not on the page (it says 70 Euro): flagged; the secondary source's figure is looked for and found
    assert report["headline"]["tokens_absent"] == 1 and report["headline"]["by_prior"]["TOKENS_PRESENT"] == 2
    assert "guides/admin/passport.md" in (report_dir / "report.md").read_text(encoding="utf-8")


def test_init_never_replaces_a_file_without_force(tmp_path):
    write_tree(tmp_path / "kb", {"a.md": "x\n"})
    config = tmp_path / "config" / "claims_pipeline.yaml"
    config.parent.mkdir()
    config.write_text("# mine\n", encoding="utf-8")
    r = cli(tmp_path, "init", "kb")
    assert r.returncode == 2 and r.stderr.strip() == f"claims-pipeline: {config} exists and is left as it is (--force replaces it)"
    assert config.read_text(encoding="utf-8") == "# mine\n"
    forced = cli(tmp_path, "init", "kb", "--force")
    assert forced.returncode == 0 and "scope_depth: 1" in config.read_text(encoding="utf-8")
    assert "1 file read, no claim found" in forced.stdout  # what it found, said


def test_init_on_a_folder_without_notes_writes_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    r = cli(tmp_path, "init", "empty")
    assert r.returncode == 2 and "no markdown files (*.md) under" in r.stderr
    assert not (tmp_path / "config").exists()
    bad = cli(tmp_path, "init", "empty", "--set", "extraction.scope_depth")
    assert bad.returncode == 2 and "expected KEY=VALUE" in bad.stderr
    missing = cli(tmp_path, "init", "nope")
    assert missing.returncode == 2 and f"not a folder: {tmp_path / 'nope'}" in missing.stderr


def test_init_chooses_the_countries_preset_for_that_layout(tmp_path):
    write_tree(tmp_path / "kb", {"README.md": "x\n", "countries/fr/playbook.md": "x\n", "shared/exit/nordics.md": "x\n"})
    r = cli(tmp_path, "init", "kb", "--config", str(tmp_path / "kb.yaml"))
    assert r.returncode == 0, r.stderr
    data = yaml.safe_load((tmp_path / "kb.yaml").read_text(encoding="utf-8"))["extraction"]
    assert data["scope_dirs"] == ["countries", "shared"] and data["scope_rules"][0] == {"glob": "countries/*/**", "scope": "{1}"}
    assert "scopes: 2, the countries preset" in r.stdout and "fr (1 file), shared/exit/nordics (1 file)" in r.stdout
    assert f"claims-pipeline audit --config {tmp_path / 'kb.yaml'}" in r.stdout  # not the file found by default
    assert "  hint: the scope" not in r.stdout  # the preset's scopes are by design


def as_nobody(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """init run where file modes bind it (root reads every folder whatever its mode), from base; the interpreter
    and the checkout stay reachable wherever the clone is (issue 36: a clone in a 0700 folder)."""
    prefix = bound_by_file_modes()
    env = {**os.environ, "CLAIMS_PIPELINE_HOME": str(base / "home"), "DAGSTER_HOME": str(base / "dagster")}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    return subprocess.run([*prefix, sys.executable, "-m", "claims_pipeline.cli", "init", *args], cwd=base,
                          capture_output=True, text=True, timeout=scaled(300), env=env)


def test_init_says_cannot_read_a_folder_it_cannot_read_and_names_an_unreadable_file(tmp_path):
    base = Path(tempfile.mkdtemp(prefix="init-unreadable-", dir="/tmp"))  # pytest's tmp_path is root's alone
    try:
        base.chmod(0o777)
        write_tree(base / "kb", {"guides/a.md": LINE, "guides/secret.md": LINE, "more/b.md": LINE})
        (base / "kb/guides/secret.md").chmod(0o000)
        unreadable = as_nobody(base, "kb")
        assert unreadable.returncode == 0, unreadable.stderr
        assert "  warning: guides/secret.md: cannot read file: Permission denied" in unreadable.stdout.splitlines()
        (base / "config/claims_pipeline.yaml").unlink()
        (base / "kb").chmod(0o000)
        refused = as_nobody(base, "kb")
        assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1] == (
            f"claims-pipeline: cannot read {base / 'kb'}: Permission denied (the knowledge base is only read: check "
            "its permissions)"), refused.stderr
        assert "cannot write" not in refused.stderr and not (base / "config/claims_pipeline.yaml").exists()
    finally:
        (base / "kb").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_init_never_writes_through_a_link(tmp_path):
    write_tree(tmp_path / "kb", {"a.md": LINE})
    (tmp_path / "config").mkdir()
    config = tmp_path / "config" / "claims_pipeline.yaml"
    elsewhere = tmp_path / "elsewhere.yaml"
    config.symlink_to(elsewhere)  # dangling: a write through it creates a file outside ./config
    for force in ([], ["--force"]):
        r = cli(tmp_path, "init", "kb", *force)
        assert r.returncode == 2 and r.stderr.strip() == (
            f"claims-pipeline: {config} is a symbolic link (to {elsewhere}): init never writes through a link; "
            "remove the link, or name the file to write with --config"), r.stderr
        assert not elsewhere.exists()
    elsewhere.write_text("# someone else's\n", encoding="utf-8")  # with --force, the link's target was replaced
    assert cli(tmp_path, "init", "kb", "--force").returncode == 2
    assert elsewhere.read_text(encoding="utf-8") == "# someone else's\n" and config.is_symlink()


def test_init_where_config_is_a_file_says_so_and_exits_2(tmp_path):
    write_tree(tmp_path / "kb", {"a.md": LINE})
    (tmp_path / "config").write_text("not a folder\n", encoding="utf-8")
    r = cli(tmp_path, "init", "kb")
    assert r.returncode == 2 and r.stderr.strip() == (
        f"claims-pipeline: {tmp_path / 'config'} is not a folder: init writes {tmp_path / 'config/claims_pipeline.yaml'} "
        "there; move it aside, or name another file with --config"), r.stderr


def test_the_next_commands_name_the_program_as_it_was_run(tmp_path, monkeypatch):
    from claims_pipeline.commands.init import cli_invocation

    venv_bin = tmp_path / "clone" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "claims-pipeline"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path / "clone")
    monkeypatch.setenv("PATH", "/nonexistent")
    # the README's way, from the clone: the same relative path
    assert cli_invocation(".venv/bin/claims-pipeline") == ".venv/bin/claims-pipeline"
    assert cli_invocation(str(script)) == ".venv/bin/claims-pipeline"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert cli_invocation(str(script)) == str(script)  # from elsewhere: the whole path
    monkeypatch.setenv("PATH", str(venv_bin))
    assert cli_invocation(str(script)) == "claims-pipeline"  # an activated venv: the name is enough
    # `python -m claims_pipeline.cli` with an interpreter that has no script beside it
    assert cli_invocation("/x/cli.py", str(tmp_path / "python3")) == f"{tmp_path / 'python3'} -m claims_pipeline.cli"
