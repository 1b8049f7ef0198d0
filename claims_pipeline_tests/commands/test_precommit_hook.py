"""The pre-commit hook a knowledge base's repository uses (.pre-commit-hooks.yaml): its file passes pre-commit's
own manifest schema, and pre-commit itself runs it on a commit's changed files in a tiny knowledge base (a real
git repository; the hook as a `local` one of language `system`, so that nothing is installed: its entry, types
and file passing are the manifest's). Also `lint FILE...` alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from pre_commit.clientlib import load_manifest

from claims_pipeline.cli import main
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import load_settings
from claims_pipeline.corpus.extract import extract_corpus
from claims_pipeline_tests.time_scale import scaled

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / ".pre-commit-hooks.yaml"
ROOT_CITATION = "- Rate **5%** of the price ([tax.gov.xa](http://tax.gov.xa/)).\n"
DEEP_CITATION = "- Rate **5%** of the price ([Revenue Service](http://tax.gov.xa/rates/levy.html)).\n"


def knowledge_base(root: Path) -> Path:
    """Two country files, a README outside the corpus, and the corpus's config where the default chain finds it."""
    for country in ("xa", "xb"):
        (root / "countries" / country).mkdir(parents=True)
        (root / "countries" / country / "playbook.md").write_text(f"# {country}\n\n## Costs\n\n{DEEP_CITATION}",
                                                                  encoding="utf-8")
    (root / "README.md").write_text(f"# The knowledge base\n\n{ROOT_CITATION}", encoding="utf-8")
    (root / "config").mkdir()
    # scope_dirs keeps the README out: a corpus in any layout would read every markdown file of the folder
    config = "extraction:\n  corpus_dir: ..\n  scope_dirs: [countries]\n"
    (root / "config" / "claims_pipeline.yaml").write_text(config, encoding="utf-8")
    return root


def test_the_hook_file_is_a_valid_pre_commit_manifest() -> None:
    [hook] = load_manifest(str(HOOKS))  # pre-commit's schema: raises on a missing or wrong key
    assert hook["id"] == "claims-pipeline-lint" and hook["language"] == "python"
    assert hook["entry"] == "claims-pipeline lint --strict" and hook["types"] == ["markdown"]
    assert hook["pass_filenames"] is True


def test_pre_commit_runs_the_hook_on_the_changed_markdown_files(tmp_path: Path) -> None:
    kb = knowledge_base(tmp_path / "kb")
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    local = {k: v for k, v in hook.items() if k != "minimum_pre_commit_version"} | {"language": "system"}
    (kb / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}),
                                                encoding="utf-8")
    bin_dir = Path(sys.executable).parent  # where the package's `claims-pipeline` script is installed
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAIMS_PIPELINE_", "GIT_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(REPO),
               PRE_COMMIT_HOME=str(tmp_path / "pre-commit-cache"), HOME=str(tmp_path))
    git = shutil.which("git")
    assert git is not None

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=kb, env=env, capture_output=True, text=True, timeout=scaled(240))

    for args in (("init", "-q"), ("config", "user.email", "kb@example.org"), ("config", "user.name", "kb")):
        assert run(git, *args).returncode == 0
    pre_commit = [sys.executable, "-m", "pre_commit"]
    # a change with a root citation next to a figure in a corpus file: the hook fails and names the line
    with open(kb / "countries" / "xb" / "playbook.md", "a", encoding="utf-8") as f:
        f.write(ROOT_CITATION)
    assert run(git, "add", "-A").returncode == 0
    failed = run(*pre_commit, "run", "--files", "countries/xb/playbook.md", "README.md", "config/claims_pipeline.yaml")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "claims-pipeline lint" in failed.stdout and "Failed" in failed.stdout
    assert "countries/xb/playbook.md:6  → http://tax.gov.xa/" in failed.stdout
    assert "note: README.md is not a file of the corpus" in failed.stdout  # outside the corpus: left out
    # the clean file alone passes; the YAML file is not handed to the hook at all (types: [markdown])
    passed = run(*pre_commit, "run", "--files", "countries/xa/playbook.md", "config/claims_pipeline.yaml")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_lint_of_named_files_reads_only_those(tmp_path: Path, monkeypatch, capsys) -> None:
    kb = knowledge_base(tmp_path / "kb")
    with open(kb / "countries" / "xb" / "playbook.md", "a", encoding="utf-8") as f:
        f.write(ROOT_CITATION)
    monkeypatch.chdir(kb)
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    assert main(["lint", "--strict"]) == 1
    capsys.readouterr()
    assert main(["lint", "--strict", "countries/xa/playbook.md"]) == 0
    xa = [c for c in extract_corpus(corpus_source(load_settings())).claims if c.file == "countries/xa/playbook.md"]
    # the summary counts the file given, not the corpus
    assert capsys.readouterr().out == f"✓ no domain-root citations next to a figure ({len(xa)} claims in 1 files)\n"
    assert main(["lint", "--strict", "countries/xa/playbook.md", "countries/xb/playbook.md"]) == 1
    out = capsys.readouterr().out
    assert "countries/xb/playbook.md:6" in out and "countries/xa" not in out
    assert main(["lint", "--strict"]) == 1  # no file named: the whole corpus, as before
