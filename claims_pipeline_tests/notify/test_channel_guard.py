"""A notification goes only where its deployment allows, within its deadline (issue 35): real HTTP servers on
loopback, the real sending process (channels.send). As in the fetcher's tests, 127.0.0.1 is the address a test
deployment allows (fetch.allow_networks: 127.0.0.1/32) and the loopback alias 127.0.0.2 stands for an internal
host it does not: a server there records whatever reaches it, so "refused" is seen from the receiving end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.settings import NotifySettings
from claims_pipeline.notify.channels import Channel, channels, send
from claims_pipeline.notify.guard import Reach
from claims_pipeline_tests.notify.receivers import Endpoint

SECRET = "hook-key-Gu4rd-Secret-9931"
LOCAL = Reach(allow_networks=("127.0.0.1/32",))  # a test deployment's: its fixture web on 127.0.0.1


def channel(url: str) -> Channel:
    [made] = channels(NotifySettings(urls=[url]), {"HOOK_KEY": SECRET})
    return made


def keyed(origin: str, path: str = "/kb") -> Channel:
    """A JSON webhook sending its secret as a header (Apprise's +Header=value)."""
    return channel(f"json://{origin}{path}?+X-Api-Key=${{HOOK_KEY}}")


@pytest.mark.parametrize("target", ["internal", "other port", "metadata"])
def test_a_redirect_to_another_origin_is_not_followed_and_its_secret_header_stays(target: str) -> None:
    with Endpoint("127.0.0.1") as hook, Endpoint("127.0.0.2") as internal, Endpoint("127.0.0.1") as other:
        hook.answer = ("redirect", {
            "internal": f"http://{internal.origin}/internal-admin",
            "other port": f"http://{other.origin}/elsewhere",
            "metadata": "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        }[target], 307 if target != "internal" else 302)
        sent = send(keyed(hook.origin), "title", "body", reach=LOCAL, timeout_s=30)
    assert hook.requests[0]["headers"]["X-Api-Key"] == SECRET  # the channel itself was sent its key
    assert internal.requests == [] and other.requests == []
    assert not sent.ok and "a redirect to another origin was not followed" in sent.error, sent.error
    assert SECRET not in sent.error


def test_a_redirect_within_the_channel_origin_is_followed() -> None:
    with Endpoint("127.0.0.1") as hook:
        hook.answer = lambda path: "ok" if path.startswith("/moved") else ("redirect", "/moved/kb", 307)
        sent = send(keyed(hook.origin), "title", "the body", reach=LOCAL, timeout_s=30)
    assert sent.ok, sent.error
    assert [r["path"] for r in hook.requests] == ["/kb", "/moved/kb"]
    assert json.loads(hook.requests[1]["body"])["message"] == "the body"


@pytest.mark.parametrize("host", ["127.0.0.2", "[::ffff:7f00:2]", "2130706434"])
def test_a_channel_on_an_address_the_deployment_does_not_allow_is_never_reached(host: str) -> None:
    """Every spelling of 127.0.0.2 (an internal host here) Apprise takes: dotted, IPv4-mapped IPv6, decimal."""
    with Endpoint("127.0.0.2") as internal:
        sent = send(keyed(f"{host}:{internal.port}", "/admin/delete-everything"), "t", "b", reach=LOCAL, timeout_s=30)
    assert internal.requests == []
    assert not sent.ok and "refused address 127.0.0.2 (loopback; allow it with notify.allow_networks" in sent.error, \
        sent.error


def test_a_name_that_resolves_to_an_internal_address_is_refused_and_notify_allow_networks_lets_it_through() -> None:
    with Endpoint("127.0.0.1") as hook:
        refused = send(keyed(f"localhost:{hook.port}"), "t", "b", reach=Reach(), timeout_s=30)
        assert hook.requests == []
        assert not refused.ok and "refused address 127.0.0.1 (loopback" in refused.error, refused.error
        allowed = send(keyed(f"localhost:{hook.port}"), "t", "b", reach=Reach(allow_networks=("127.0.0.0/8",)),
                       timeout_s=30)
    assert allowed.ok, allowed.error
    assert len(hook.requests) == 1


def test_the_metadata_and_link_local_addresses_are_refused_whatever_the_lists_allow() -> None:
    everything = Reach(allow_networks=("0.0.0.0/0", "::/0"))
    for url, reason in (("json://169.254.169.254/latest/meta-data/", "refused address 169.254.169.254 (cloud metadata"),
                        ("json://[::ffff:169.254.169.254]/", "refused address 169.254.169.254 (cloud metadata"),
                        ("json://169.254.10.1:8080/", "refused address 169.254.10.1 (link-local"),
                        ("json://[fd00:ec2::254]/", "refused address fd00:ec2::254 (cloud metadata")):
        started = time.monotonic()
        sent = send(channel(url), "t", "b", reach=everything, timeout_s=30)
        assert not sent.ok and reason in sent.error, (url, sent.error)
        assert time.monotonic() - started < 20  # refused before any connection is tried, not timed out


def test_a_giant_answer_is_cut() -> None:
    """A 2 GB answer: its first 64 KiB are read, the rest never (the server counts what the client took)."""
    with Endpoint("127.0.0.1", ("giant", 2 * 1024**3)) as hook:
        sent = send(keyed(hook.origin), "t", "b", reach=LOCAL, timeout_s=60)
        time.sleep(0.5)
        taken = hook.written
    assert sent.ok, sent.error  # the answer said 200: the message was taken
    assert taken < 64 * 1024**2, taken  # what the kernel's buffers hold at most, not 2 GB


def test_a_trickling_answer_ends_at_the_send_deadline() -> None:
    with Endpoint("127.0.0.1", ("trickle", 0.5)) as hook:
        started = time.monotonic()
        sent = send(keyed(hook.origin), "t", "b", reach=LOCAL, timeout_s=3)
        took = time.monotonic() - started
    assert not sent.ok and sent.error == "no answer within notify.timeout_s (3 s): the send was ended"
    assert took < 10, took


def test_slow_channels_cost_one_deadline_not_one_each(tmp_path: Path) -> None:
    from claims_pipeline.notify import notify_failure

    with Endpoint("127.0.0.1", ("trickle", 0.5)) as a, Endpoint("127.0.0.1", ("trickle", 0.5)) as b, \
            Endpoint("127.0.0.1", ("trickle", 0.5)) as c:
        conf = NotifySettings(urls=[f"json://{e.origin}/kb" for e in (a, b, c)], timeout_s=3)
        started = time.monotonic()
        outcome = notify_failure(conf, tmp_path, reach=LOCAL, job="audit_corpus", run_id="r1", error="boom")
        took = time.monotonic() - started
    assert [ch.status for ch in outcome.channels] == ["failed"] * 3
    assert [ch.label for ch in outcome.channels] == ["channel 1 (json)", "channel 2 (json)", "channel 3 (json)"]
    assert took < 3 * 3, took  # one after the other, they took 3 s each at least


def test_production_refuses_a_loopback_channel_and_a_mapped_private_one(tmp_path: Path, monkeypatch) -> None:
    from claims_pipeline.config.deployments import deployment_problems
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.notify import notify_failure
    from claims_pipeline_tests.production_config import write_production_config

    monkeypatch.setenv("CLAIMS_PIPELINE_DEPLOYMENT", "production")
    monkeypatch.setenv("HOOK_KEY", SECRET)
    with Endpoint("127.0.0.1") as hook:
        config = write_production_config(tmp_path, db_url="postgresql+psycopg://kb@db.example/kb",
                                         notify_url=f"json://127.0.0.1:{hook.port}/kb?+X-Api-Key=${{HOOK_KEY}}")
        settings = load_settings(config)
        settings.notify.urls.append("json://[::ffff:10.0.0.5]/admin")
        assert deployment_problems(settings) == []
        outcome = notify_failure(settings.notify, settings.home_dir, job="audit_corpus", run_id="r1", error="boom",
                                 reach=Reach.of(settings.fetch, settings.notify, settings.deployment))
        assert hook.requests == []
    first, second = outcome.channels
    assert first.status == "failed" and "refused address 127.0.0.1 (loopback: never a notification's destination in " \
        "this deployment)" in first.error, first.error
    assert second.status == "failed" and "refused address 10.0.0.5 (private; allow it with notify.allow_networks" \
        in second.error, second.error
    # nor may the settings open loopback to notifications in production
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["notify"]["allow_networks"] = ["10.20.0.0/16", "127.0.0.0/8"]
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert deployment_problems(load_settings(config)) == [
        "production: notify.allow_networks: '127.0.0.0/8' lets notifications reach loopback (a service of this "
        f"machine, not a chat server): remove it from {config}"]


@pytest.mark.timeout(600)
def test_an_audit_whose_webhook_trickles_exits_within_the_send_deadline(tmp_path: Path) -> None:
    """The whole CLI in a process of its own: the report is written, the send given up at notify.timeout_s, and
    the process exits (before, Apprise's worker thread held it in a socket read for ever)."""
    from claims_pipeline_demo.fixture_web.server import FixtureWeb
    from claims_pipeline_tests.notify.test_notify import write_config

    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "HOOK_KEY": SECRET}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    with FixtureWeb() as web, Endpoint("127.0.0.1", ("trickle", 1.0)) as hook:
        config = write_config(tmp_path, web, {"urls": [f"json://{hook.origin}/kb?+X-Api-Key=${{HOOK_KEY}}"],
                                              "timeout_s": 5})
        proc = subprocess.Popen([sys.executable, "-m", "claims_pipeline.cli", "audit", "--config", str(config),
                                 "--now", "2026-06-01T06:00:00Z"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            while not hook.requests and proc.poll() is None:
                time.sleep(0.1)
            asked = time.monotonic()
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        exited = time.monotonic() - asked
    assert hook.requests, err
    assert proc.returncode == 0, err
    assert "notification failed: channel 1 (json): failed (no answer within notify.timeout_s (5 s)" in err, err
    assert exited < 5 + 15, exited  # the send's deadline, then the end of the command
    assert SECRET not in err
