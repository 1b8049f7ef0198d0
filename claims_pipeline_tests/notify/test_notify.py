"""Notifications as a person receives them: real audits (the CLI's in-process runs of the Dagster jobs) of a copy
of the demo corpus against the fixture web, a webhook receiver (Apprise's json://) and an SMTP server (aiosmtpd)
on 127.0.0.1. What the first message says, that a second audit with nothing new sends nothing, that a channel
that is down neither fails the audit nor loses its news (it comes with the next message), and that the secrets
the URLs read from the environment appear in no output, log, file or UI metadata."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from claims_pipeline.cli import main
from claims_pipeline.config.settings import DEMO_CORPUS_DIR
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_demo.routes import DEMO_CONFIG, fixture_routes
from claims_pipeline_tests.notify.receivers import receivers

HOOK_SECRET = "hook-token-N0tify-Secret-4711"
SMTP_SECRET = "smtp-pass-N0tify-Secret-0815"
SECRETS = (HOOK_SECRET, SMTP_SECRET)


def write_config(tmp_path: Path, web: FixtureWeb, notify: dict) -> Path:
    """The demo's settings on a copy of its corpus (so the production fetcher runs, routed to this fixture web)."""
    corpus = tmp_path / "corpus"
    if not corpus.exists():
        shutil.copytree(DEMO_CORPUS_DIR, corpus)
    cfg = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
    cfg["home"] = str(tmp_path / "home")
    cfg["extraction"]["corpus_dir"] = str(corpus)
    cfg["fetch"].update(fixture_routes(cfg["fetch"].get("address_map") or {}, f"127.0.0.1:{web.port}"))
    cfg["notify"] = notify
    config = tmp_path / "claims.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return config


def files_holding(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    monkeypatch.setenv("KB_HOOK_TOKEN", HOOK_SECRET)
    monkeypatch.setenv("KB_SMTP_PASSWORD", SMTP_SECRET)
    return tmp_path


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_new_findings_once_nothing_new_silent_and_a_channel_down_retried(env: Path, capsys, caplog) -> None:
    caplog.set_level(logging.DEBUG)  # every log record of every logger, Apprise's included, is looked at below
    said: list[str] = []

    def audit(now: str, config: Path) -> str:
        assert main(["audit", "--config", str(config), "--now", now]) == 0
        out = capsys.readouterr()
        said.extend([out.out, out.err])
        return out.err

    with FixtureWeb() as web, receivers("kb-audit", SMTP_SECRET) as (hook, box):
        web.set_epoch(1)
        config = write_config(env, web, {"urls": [
            f"json://127.0.0.1:{hook.port}/kb/${{KB_HOOK_TOKEN}}",
            f"mailto://kb-audit:${{KB_SMTP_PASSWORD}}@localhost:{box.port}?from=audit@example.org&to=team@example.org",
        ]})

        # 1. the first audit: everything found is new to both channels
        err = audit("2026-06-01T06:00:00Z", config)
        assert "notification sent: channel 1 (json): sent; channel 2 (mailto): sent" in err, err
        [first] = hook.received
        assert first["path"] == f"/kb/{HOOK_SECRET}"  # the variable was read when the message was sent
        assert box.logins == ["kb-audit"]  # the password from the environment logged in
        body, title = first["json"]["message"], first["json"]["title"]
        assert title.startswith("claims_pipeline: first notice, ") and title.endswith(" findings, 1 flagged"), title
        assert "Audit of 2026-06-01 06:00:00 UTC: 29 claims, 1 flagged (TOKENS_ABSENT 1)" in body
        assert "pages unreadable: " in body and "robots.txt 1" in body and "HTTP 404 1" in body
        assert "New (the first notification on this channel" in body
        assert "Figure not on its cited page (TOKENS_ABSENT) (1):" in body
        assert ("countries/xa/playbook.md:23 — €900, Act No. 31 not on http://lands.gov.xa/foreign-buyers/licence.html"
                in body)
        assert "- http://lands.gov.xa/internal/refusals.html — robots.txt" in body
        assert "Source changed after" not in body  # no page changed yet
        report = Path(body.rsplit("Report: ", 1)[1].strip())
        assert report.name == "report.html" and report.is_file() and "20260601T060000" in str(report)
        assert box.messages[0]["Subject"] == title
        assert "countries/xa/playbook.md:23 — €900, Act No. 31 not on" in box.bodies()[0]

        # 2. the same pages a month later: nothing new, nothing sent
        err = audit("2026-07-01T06:00:00Z", config)
        assert "notification nothing new: channel 1 (json): nothing new; channel 2 (mailto): nothing new" in err, err
        assert len(hook.received) == 1 and len(box.messages) == 1

        # 3. the webhook is down while the levy page changes (seen twice: the change is confirmed)
        hook.down = True
        web.set_epoch(2)
        audit("2026-08-01T06:00:00Z", config)
        err = audit("2026-09-01T06:00:00Z", config)
        assert "channel 1 (json): failed (" in err, err  # recorded, and the audit still succeeded (exit 0)
        assert len(hook.received) == 1
        mailed = "\n".join(box.bodies()[1:])
        assert "Source changed after its Last verified date" in mailed
        assert "countries/xa/playbook.md:18 — http://www.tax.gov.xa/property/annual-levy.html changed 2026-0" in mailed

        # 4. back up: the news it missed comes with its next message; the mailbox had it already
        hook.down = False
        sent_by_mail = len(box.messages)
        err = audit("2026-10-01T06:00:00Z", config)
        assert "channel 1 (json): sent; channel 2 (mailto): nothing new" in err, err
        assert len(box.messages) == sent_by_mail
        second = hook.received[1]["json"]["message"]
        assert "Source changed after its Last verified date" in second
        assert "countries/xa/playbook.md:18 — http://www.tax.gov.xa/property/annual-levy.html" in second
        assert "New since the last notification (2026-" in second
        assert "(This carries news found since " in second

    # what the UI shows of each step: per channel, never an address
    with dg.DagsterInstance.from_config(str(env / "dagster")) as instance:
        records = instance.fetch_materializations(dg.AssetKey("audit_notification"), limit=10, ascending=True).records
        metadata = [{k: v.value for k, v in r.asset_materialization.metadata.items()} for r in records]
    assert [m["status"] for m in metadata][:2] == ["sent", "nothing new"]
    assert metadata[-1]["status"] == "partly sent" or metadata[-1]["status"] == "sent"
    assert any(m["status"] == "partly sent" for m in metadata)
    assert "channel 1 (json)" in json.dumps(metadata[0]["channels"])
    shown = json.dumps(metadata, default=str) + caplog.text + "".join(said)
    for secret in SECRETS:
        assert secret not in shown
        assert files_holding(env, secret) == []  # the home, the state file, the Dagster instance, the config


def test_a_channel_whose_variable_is_not_set_is_recorded_and_the_audit_succeeds(env: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("KB_HOOK_TOKEN")
    with FixtureWeb() as web, receivers("kb-audit", SMTP_SECRET) as (hook, _box):
        config = write_config(env, web, {"urls": [f"json://127.0.0.1:{hook.port}/kb/${{KB_HOOK_TOKEN}}"]})
        assert main(["audit", "--config", str(config), "--now", "2026-06-01T06:00:00Z"]) == 0
        err = capsys.readouterr().err
        assert "notification failed: channel 1 (json): failed (environment variable KB_HOOK_TOKEN not set)" in err
        assert hook.received == []
        state = json.loads((env / "home" / "notify" / "state.json").read_text(encoding="utf-8"))
        [kept] = state["channels"].values()
        assert kept["unsent_since"] and "notified" in kept and not kept["notified"]  # its news is still to send


def test_a_failed_run_is_notified_by_the_run_failure_sensor(env: Path) -> None:
    from claims_pipeline.defs.notify import notify_run_failure
    from claims_pipeline.defs.resources import ClaimsConfig

    @dg.op
    def write_the_report() -> None:
        raise RuntimeError("No space left on device: /srv/kb/reports")

    @dg.job
    def audit_corpus() -> None:
        write_the_report()

    with FixtureWeb() as web, receivers("kb-audit", SMTP_SECRET) as (hook, _box), \
            dg.instance_for_test() as instance:
        config = write_config(env, web, {"urls": [f"json://127.0.0.1:{hook.port}/kb/${{KB_HOOK_TOKEN}}"]})
        result = audit_corpus.execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.RUN_FAILURE)
        context = dg.build_run_status_sensor_context(
            sensor_name="notify_run_failure", dagster_instance=instance, dagster_run=result.dagster_run,
            dagster_event=failure, resources={"claims_config": ClaimsConfig(config_path=str(config))},
        ).for_run_failure()
        notify_run_failure(context)
        [message] = hook.received
    assert message["json"]["title"] == "claims_pipeline: run failed — audit_corpus"
    assert message["json"]["type"] == "failure"
    text = message["json"]["message"]
    assert f"audit_corpus (run {result.run_id[:8]})" in text
    assert "write_the_report: RuntimeError: No space left on device: /srv/kb/reports" in text


def test_notify_settings_refuse_what_is_not_an_apprise_url_without_echoing_it(tmp_path: Path) -> None:
    from claims_pipeline.config.settings import ConfigError, load_settings

    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"notify": {"urls": ["hooks.slack.com/T0/B0/xoxb-pasted-secret"]}}))
    with pytest.raises(ConfigError) as exc:
        load_settings(config)
    assert "notify.urls: entry 1: not an Apprise URL" in str(exc.value) and "xoxb" not in str(exc.value)
    config.write_text(yaml.safe_dump({"notify": {"urls": ["slack://${not-a-name}/#kb"]}}))
    with pytest.raises(ConfigError, match="is not the name of an environment variable"):
        load_settings(config)
    config.write_text(yaml.safe_dump({"notify": {"urls_env": "json://x"}}))
    with pytest.raises(ConfigError, match="notify.urls_env: the name of an environment variable"):
        load_settings(config)
    assert not load_settings(None).notify.configured  # off by default


@pytest.mark.timeout(600)
def test_verdicts_that_became_mismatch_are_told_once(env: Path, capsys, monkeypatch) -> None:
    """The verdict step (the real anthropic SDK against the scripted judge server) after an audit of the changed
    levy page: verdict_notification tells the MISMATCH once; a second verify with the same verdicts sends nothing,
    unless notify.always_send asks for a 'nothing new' message."""
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.notify import Reach, notify_audit
    from claims_pipeline_demo.scripted_judge import ScriptedJudgeServer, demo_answerer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-notify-test-not-a-key")
    with FixtureWeb() as web, receivers("kb-audit", SMTP_SECRET) as (hook, _box), \
            ScriptedJudgeServer(demo_answerer) as judge:
        web.set_epoch(2)  # the levy page says 1.1 %, the corpus 0.8 %
        config = write_config(env, web, {"urls": [f"json://127.0.0.1:{hook.port}/kb/${{KB_HOOK_TOKEN}}"]})
        cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
        cfg["judge"] = {"provider": "anthropic", "base_url": judge.anthropic_url, "model": "claude-haiku-4-5"}
        config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        now = ["--now", "2026-06-01T06:00:00Z"]
        assert main(["audit", "--config", str(config), *now]) == 0
        assert main(["verify", "--config", str(config), *now]) == 0
        assert len(hook.received) == 2, capsys.readouterr().err
        verdict_message = hook.received[1]["json"]["message"]
        assert "Verdict MISMATCH or STALE (1):" in verdict_message
        assert "countries/xa/playbook.md:18 MISMATCH — claims 0.8%; the page says 1.1 %" in verdict_message
        assert "Figure not on" not in verdict_message  # told with the audit's message already
        assert "Verdicts: " in verdict_message and "MISMATCH 1" in verdict_message

        capsys.readouterr()
        assert main(["verify", "--config", str(config), *now]) == 0
        assert len(hook.received) == 2  # the same verdicts: nothing new, nothing sent
        assert "notification nothing new: channel 1 (json): nothing new" in capsys.readouterr().err

        cfg["notify"]["always_send"] = True
        config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        settings = load_settings(config)
        outcome = notify_audit(settings.notify, settings.home_dir,
                               reach=Reach.of(settings.fetch, settings.notify, settings.deployment))
        assert outcome.status == "sent" and len(hook.received) == 3
        assert hook.received[2]["json"]["title"].startswith("claims_pipeline: nothing new since the last notice")
        assert "Nothing new since the last notification (" in hook.received[2]["json"]["message"]


def test_the_ci_example_workflow_runs_the_audit_on_a_kept_home() -> None:
    """docs/ci-example.md's GitHub Actions workflow: valid YAML, runs `claims-pipeline audit`, restores and saves
    the home its environment names, and publishes the folder reports/LATEST names."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ci-example.md").read_text(encoding="utf-8")
    block = doc.split("`.github/workflows/kb-audit.yml` of the knowledge base:", 1)[1].split("```yaml", 1)[1]
    workflow = yaml.safe_load(block.split("```", 1)[0])
    job = workflow["jobs"]["audit"]
    home = job["env"]["CLAIMS_PIPELINE_HOME"]
    assert home.endswith("/.claims-home")
    runs = [s.get("run", "") for s in job["steps"]]
    assert "claims-pipeline audit --json > headline.json" in runs  # stdout: one JSON document (docs/cli-json.md)
    # the summary step reads only keys the audit's headline has
    from datetime import UTC, datetime

    from claims_pipeline.report.audit import build_audit

    headline = build_audit([], {}, {}, run_at=datetime(2026, 6, 1, tzinfo=UTC)).headline
    [summary] = [r for r in runs if "headline.json" in r and r.startswith("jq ")]
    read = set(re.findall(r"\\\(\.(\w+)", summary))
    assert read and read <= set(headline), (read, sorted(headline))
    cached = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache/")]
    assert [s["uses"].split("@")[0] for s in cached] == ["actions/cache/restore", "actions/cache/save"]
    assert all(s["with"]["path"] == ".claims-home" for s in cached)
    assert any(".claims-home/reports/LATEST" in r for r in runs)
    assert workflow[True]["schedule"][0]["cron"] == "0 6 1 * *"  # YAML 1.1 reads the key `on` as true


def test_a_failed_audit_from_the_cli_is_notified(env: Path, capsys) -> None:
    """The report folder cannot be written: the audit fails (exit 1) and the channel is told, with the step and
    its error; the deployment's run-failure sensor never sees the CLI's in-process runs, so the command does it."""
    with FixtureWeb() as web, receivers("kb-audit", SMTP_SECRET) as (hook, _box):
        config = write_config(env, web, {"urls": [f"json://127.0.0.1:{hook.port}/kb/${{KB_HOOK_TOKEN}}"]})
        (env / "home" / "reports").mkdir(parents=True)
        (env / "home" / "reports" / "20260601T060000").write_text("a file where the report folder goes")
        assert main(["audit", "--config", str(config), "--now", "2026-06-01T06:00:00Z"]) == 1
        err = capsys.readouterr().err
        [message] = hook.received
    assert "notification sent: channel 1 (json): sent" in err
    assert message["json"]["title"] == "claims_pipeline: run failed — audit_corpus"
    assert "audit_report: " in message["json"]["message"] and "20260601T060000" in message["json"]["message"]
