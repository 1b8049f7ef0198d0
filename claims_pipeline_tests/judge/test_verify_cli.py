"""`claims-pipeline verify` as a user runs it: a real subprocess, the local deployment (a copy of the demo corpus,
with the local judge resource and fetcher), judge.provider anthropic with ANTHROPIC_API_KEY set, and
judge.base_url pointing the real anthropic SDK at the scripted judge server in this process (its log counts the
requests). The key must never reach a file under the home, the Dagster instance, stdout or stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.settings import DEMO_CORPUS_DIR
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_demo.routes import DEMO_CONFIG, fixture_routes
from claims_pipeline_demo.scripted_judge import ScriptedJudgeServer, demo_answerer
from claims_pipeline_tests.time_scale import scaled

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-ant-cli-test-7Qz9KeyMustNeverBeStored"


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args], capture_output=True, text=True,
                          timeout=scaled(240), cwd=REPO, env=env)


def _files_holding(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_verify_cli_with_anthropic_against_the_scripted_server(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS_DIR, corpus)
    user_home, home = tmp_path / "user", tmp_path / "home"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAIMS_PIPELINE_", "DAGSTER_", "ANTHROPIC_", "OPENAI_"))}
    env.update(HOME=str(user_home), ANTHROPIC_API_KEY=KEY)
    with FixtureWeb() as web, ScriptedJudgeServer(demo_answerer) as server:
        cfg = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
        cfg["home"] = str(home)
        cfg["extraction"]["corpus_dir"] = str(corpus)
        cfg["fetch"].update(fixture_routes(cfg["fetch"].get("address_map") or {}, f"127.0.0.1:{web.port}"))
        cfg["judge"] = {"provider": "anthropic", "base_url": server.anthropic_url, "model": "claude-haiku-4-5"}
        config = tmp_path / "claims.yaml"
        config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        audited = _cli(["audit", "--config", str(config)], env)
        assert audited.returncode == 0, audited.stderr[-2000:]

        dry = _cli(["verify", "--config", str(config), "--dry-run", "--json"], env)
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert server.count == 0  # a dry run sends nothing
        plan = json.loads(dry.stdout)
        assert plan["provider"] == "anthropic" and plan["would_send"] > 1 and plan["est_input_tokens"] > 0
        assert plan["prompts"] and all(p["user"] for p in plan["prompts"])
        said = _cli(["verify", "--config", str(config), "--dry-run"], env)  # the same, for a person
        assert said.returncode == 0 and server.count == 0, said.stderr[-2000:]
        assert "nothing was sent" in said.stdout and f"{plan['would_send']} of {plan['claims']} claims" in said.stdout

        one = _cli(["verify", "--config", str(config), "--max-claims", "1"], env)
        assert one.returncode == 0, one.stderr[-2000:]
        assert server.count == 1
        full = _cli(["verify", "--config", str(config), "--json"], env)
        assert full.returncode == 0, full.stderr[-2000:]
        sent = server.count
        assert sent > 1
        assert json.loads(full.stdout)["verdicts"] > 0
        again = _cli(["verify", "--config", str(config)], env)
        assert again.returncode == 0, again.stderr[-2000:]
        assert server.count == sent  # unchanged inputs: no request
        # the dry run reads the verdict cache: after a full run it would send nothing, and says so
        redry = _cli(["verify", "--config", str(config), "--dry-run", "--json"], env)
        assert redry.returncode == 0, redry.stderr[-2000:]
        replan = json.loads(redry.stdout)
        assert (replan["would_send"], replan["would_ask_direction_b"], replan["prompts"]) == (0, 0, [])
        assert replan["would_reuse"] == plan["would_send"] + plan["would_reuse"] > 0
        resaid = _cli(["verify", "--config", str(config), "--dry-run"], env)
        assert f"{replan['would_reuse']} answers would be reused" in resaid.stdout, resaid.stderr[-2000:]
        assert server.count == sent

    for proc in (audited, dry, said, one, full, again, redry, resaid):
        assert KEY not in proc.stdout and KEY not in proc.stderr
    needle = KEY.encode()
    assert _files_holding(tmp_path, needle) == []  # the home, its Dagster instance, the user's home, the config


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_in_the_demo_deployment_a_configured_judge_is_used_and_the_scripted_one_says_when_it_stands_in(tmp_path):
    user_home, home = tmp_path / "user", tmp_path / "home"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAIMS_PIPELINE_", "DAGSTER_", "ANTHROPIC_", "OPENAI_"))}
    env.update(HOME=str(user_home), ANTHROPIC_API_KEY=KEY, CLAIMS_PIPELINE_DEPLOYMENT="demo")
    cfg = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
    cfg["home"] = str(home)
    cfg["extraction"]["corpus_dir"] = str(DEMO_CORPUS_DIR)  # the bundled demo corpus itself
    plain = tmp_path / "demo.yaml"
    plain.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    audited = _cli(["audit", "--config", str(plain)], env)
    assert audited.returncode == 0, audited.stderr[-2000:]
    stand_in = _cli(["verify", "--config", str(plain), "--dry-run", "--scope", "xa", "--json"], env)
    assert stand_in.returncode == 0, stand_in.stderr[-2000:]
    notice = [line for line in stand_in.stderr.splitlines() if "scripted judge" in line]
    assert len(notice) == 1 and "judge.provider none" in notice[0] and "set judge.provider" in notice[0]
    assert json.loads(stand_in.stdout)["model"] == "scripted-demo-judge"
    with ScriptedJudgeServer(demo_answerer) as server:
        cfg["judge"] = {"provider": "anthropic", "base_url": server.anthropic_url, "model": "claude-haiku-4-5"}
        configured = tmp_path / "demo-judged.yaml"
        configured.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        ran = _cli(["verify", "--config", str(configured), "--scope", "xa"], env)
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert server.count > 0  # the configured judge answered, not the demo's own stand-in
        models = {r.body.get("model") for r in server.requests()}
    assert models == {"claude-haiku-4-5"} and "scripted judge" not in ran.stderr
