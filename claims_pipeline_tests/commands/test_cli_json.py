"""One meaning of `--json` in every command (docs/cli-json.md): stdout holds one JSON document and nothing else,
and without it the same command prints lines for a person there. The shared options are declared once, so each
reads the same in every command's --help. Real processes, on the demo corpus served by the fixture web on
127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from claims_pipeline.cli import COMMANDS, main
from claims_pipeline_tests.time_scale import scaled

JSON_COMMANDS = {"extract", "lint", "fetch", "audit", "verify", "worklist", "demo"}
SHARED = ("--config", "--scope", "--now", "--corpus", "--section", "--include-secondary", "--json")


def option_help(command: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """--help of `command`: each option's entry (its flags and its help), whitespace made single spaces."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("  -"):
            current = entries.setdefault(line.split()[0].rstrip(","), [])
        elif not line.startswith("   "):
            current = None  # the end of the options section
        if current is not None:
            current.append(line)
    return {flag: " ".join(" ".join(lines).split()) for flag, lines in entries.items()}


def test_a_shared_option_reads_the_same_in_every_command_that_takes_it(capsys):
    helps = {command: option_help(command, capsys) for command in COMMANDS}
    for flag in SHARED:
        texts = {command: h[flag] for command, h in helps.items() if flag in h}
        if flag == "--config":  # demo ignores it and init writes it: each says so in its own words
            texts = {c: t for c, t in texts.items() if c not in ("demo", "init")}
        assert len(set(texts.values())) == 1, f"{flag} reads differently: {texts}"
        assert len(texts) >= 2 or flag == "--corpus", (flag, texts)
    assert {c for c, h in helps.items() if "--json" in h} == JSON_COMMANDS
    assert {c for c, h in helps.items() if "--scope" in h} == {"extract", "lint", "audit", "verify", "worklist"}
    assert {c for c, h in helps.items() if "--now" in h} == {"audit", "verify", "worklist"}


def run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=scaled(300))


def one_document(done: subprocess.CompletedProcess[str]) -> Any:
    """stdout is one JSON document, nothing before or after it (json.loads refuses any other text)."""
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_json_command_prints_one_document_on_stdout_and_lines_for_a_person_without_it(tmp_path: Path):
    from claims_pipeline.commands.demo import write_runtime_config
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAIMS_PIPELINE_", "DAGSTER_", "ANTHROPIC_"))}
    env.update(CLAIMS_PIPELINE_HOME=str(tmp_path / "user-home"), DAGSTER_HOME=str(tmp_path / "dagster"),
               CLAIMS_PIPELINE_DEPLOYMENT="demo")  # the demo corpus and its scripted judge
    home = tmp_path / "home"
    home.mkdir()
    claims_file = tmp_path / "claims.json"
    seen: dict[str, Any] = {}
    with FixtureWeb() as web:
        config = str(write_runtime_config(home, f"127.0.0.1:{web.port}"))
        extract = run("extract", "--config", config, "--json", "--out", str(claims_file), env=env, cwd=tmp_path)
        seen["extract"] = stats = one_document(extract)
        claims = json.loads(claims_file.read_text(encoding="utf-8"))  # --out: the claim records, a file apart
        assert stats["total_claims"] == len(claims) > 0

        seen["lint"] = linted = one_document(run("lint", "--config", config, "--json", env=env, cwd=tmp_path))
        # the sources section too: a figure cited to a home page is a finding wherever it stands, whatever its label
        assert [f["url"] for f in linted["findings"]] == ["http://stats.gov.xa/", "http://www.tax.gov.xa/"]

        url = claims[0]["source_url"]
        seen["fetch"] = fetched = one_document(run("fetch", "--config", config, "--json", url, env=env, cwd=tmp_path))
        assert [row["url"] for row in fetched] == [url] and fetched[0]["outcome"]

        now = ("--now", "2026-06-01T00:00:00Z")
        audit = run("audit", "--config", config, *now, "--json", env=env, cwd=tmp_path)
        assert audit.returncode == 0, audit.stderr[-3000:]
        seen["audit"] = headline = one_document(audit)
        assert headline["total"] == len(claims) and "audit done → " in audit.stderr

        worklist = run("worklist", "--config", config, *now, "--sample", "5", "--json", env=env, cwd=tmp_path)
        assert worklist.returncode == 0, worklist.stderr[-3000:]
        seen["worklist"] = sampled = one_document(worklist)
        assert sampled["total"] == 5 and "worklist → " in worklist.stderr

        plan = one_document(run("verify", "--config", config, *now, "--dry-run", "--json", env=env, cwd=tmp_path))
        assert plan["would_send"] > 0 and plan["prompts"]
        verify = run("verify", "--config", config, *now, "--json", env=env, cwd=tmp_path)
        assert verify.returncode == 0, verify.stderr[-3000:]
        seen["verify"] = verdicts = one_document(verify)
        assert verdicts["verdicts"] > 0 and "verify done → " in verify.stderr

        # without --json: the same result in lines for a person, no JSON document on stdout
        said = {argv[0]: run(argv[0], "--config", config, *argv[1:], env=env, cwd=tmp_path)
                for argv in (["extract"], ["lint"], ["fetch", url])}
        for command, done in said.items():
            assert done.returncode == 0 and done.stdout.strip() and not_json(done.stdout), (command, done.stdout[-2000:])
        assert f"claims: {stats['total_claims']} in " in said["extract"].stdout
        assert said["lint"].stdout.count("→ http://stats.gov.xa/") == 1 and "status:  " in said["fetch"].stdout
    # audit's and verify's lines for a person: test_cli_summaries and judge/test_verify_cli (each run is long)

    assert set(seen) == JSON_COMMANDS - {"demo"}  # `demo --json`: test_demo's first test (three audits long)
