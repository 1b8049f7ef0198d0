"""What `audit` and `verify` say at their end about what was not read or not judged: a corpus whose every cited
page is unreachable (its hosts mapped to a closed port on 127.0.0.1: nothing leaves the machine, not even a DNS
query) ends with the unreadable pages by reason and exit 1; verify with no judge says nothing was judged and what
to set."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from claims_pipeline.cli import main


@pytest.fixture
def unreachable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    scope = tmp_path / "corpus" / "countries" / "aa"
    scope.mkdir(parents=True)
    lines = ["# Aland (fictional)", "", "## Section: `--costs`", ""]
    lines += [f"- Fee {i}: **{i + 2}.5%** of the price ([Office {i}](http://office{i}.gov.zz/fees.html)) "
              "(2026-03-02 verified)" for i in range(5)]
    (scope / "playbook.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    config = tmp_path / "c.yaml"
    config.write_text("home: home\nextraction:\n  corpus_dir: corpus\n  primary_allowlist: ['.zz']\n"
                      "fetch:\n  max_retries: 1\n  allow_networks: ['127.0.0.1/32']\n"
                      f"  address_map: {{'*.gov.zz': '127.0.0.1:{closed}'}}\n", encoding="utf-8")
    return config


def test_audit_of_pages_none_of_which_could_be_read_says_why_and_fails(unreachable: Path, capsys) -> None:
    assert main(["audit", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"]) == 1
    out, err = capsys.readouterr()
    # without --json, the headline for a person on stdout (docs/cli-json.md)
    assert out == "claims 5 · flagged 0 · TOKENS_ABSENT 0 · CONTENT_CHANGED 0 · stale_changed 0\n", out
    done = next(line for line in err.splitlines() if line.startswith("audit done → "))
    assert done.endswith("(flagged 0: TOKENS_ABSENT 0, stale_changed 0; 5 of 5 pages unreadable: no connection 5)"), err
    last = err.strip().splitlines()[-1]
    assert last.startswith("claims-pipeline: no cited page could be read (5 of 5 pages unreadable: no connection 5)"), err


def test_verify_without_a_judge_says_what_to_set_in_one_line_and_exits_2(unreachable: Path, capsys) -> None:
    main(["audit", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"])
    capsys.readouterr()
    assert main(["verify", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 2, err  # the config line, then what to do
    line = err.splitlines()[1]
    assert line.startswith("claims-pipeline: verify: no judge configured: set judge.provider (anthropic or "
                           "openai-compatible), judge.model and judge.api_key_env"), line
    assert f"in {unreachable}" in line and line.endswith('see docs/verification.md, "Setting it up"')
    # a dry run says the same instead of an Anthropic model's price, and how many claims are ready for a judge
    assert main(["verify", "--config", str(unreachable), "--dry-run", "--now", "2026-06-01T00:00:00Z"]) == 0
    out, err = capsys.readouterr()
    assert out == "dry run: no judge configured; 0 of 5 claims would be sent once one is; nothing was sent\n", out
    assert "$" not in out and "anthropic" not in out and "claude" not in out
    assert "claims-pipeline: verify: no judge configured" not in err and "verify: no judge configured: set" in err


def test_verify_before_any_audit_says_to_audit_first_and_exits_2(unreachable: Path, capsys) -> None:
    text = unreachable.read_text(encoding="utf-8") + "judge:\n  provider: anthropic\n"
    unreachable.write_text(text, encoding="utf-8")
    assert main(["verify", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"]) == 2
    out, err = capsys.readouterr()
    home = unreachable.parent / "home"
    assert out == "" and err.splitlines()[1:] == [
        f"claims-pipeline: verify: no audit of countries yet under {home}: run `claims-pipeline audit` first (the verdicts "
        "are on the claims and pages an audit stored)"], err
    assert "materialized" not in err


def test_a_channel_whose_variable_is_unset_is_named_when_the_audit_starts(unreachable: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("KB_HOOK_TOKEN", "s3cret-hook-token-value")
    monkeypatch.delenv("KB_SMTP_PASSWORD", raising=False)
    text = unreachable.read_text(encoding="utf-8") + (
        "notify:\n  urls:\n    - 'json://127.0.0.1:9/kb/${KB_HOOK_TOKEN}'\n"
        "    - 'mailto://kb:${KB_SMTP_PASSWORD}@127.0.0.1:9?to=team@example.org'\n")
    unreachable.write_text(text, encoding="utf-8")
    main(["audit", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"])
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if line.startswith("warning: notification")]
    assert warned == ["warning: notification channel 2 (mailto): environment variable KB_SMTP_PASSWORD not set: this "
                      "audit's news cannot reach it (set it in the environment of the command)"]
    assert err.index(warned[0]) < next(i for i, line in enumerate(err) if line.startswith("[audit] "))  # at the start
    assert not any("s3cret-hook-token-value" in line for line in err)


def test_unreadable_reasons_read_as_a_person_names_them() -> None:
    from claims_pipeline.web.unreadable import count_unreadable, reason_of

    assert reason_of("OK") is None and reason_of("NOT_MODIFIED", 304) is None
    assert reason_of("UNAVAILABLE", None, "ConnectError: DNS lookup failed for x.invalid: [Errno -2]") == "DNS"
    # a page the breaker left unread: no lookup was tried for it, so it is not "DNS"; the reason says why and when
    assert reason_of("UNAVAILABLE", None, "circuit open since 2026-12-07 10:00:00 UTC after 3 failures (last: "
                     "ConnectError: DNS lookup failed for x) (opened by another run)") == \
        "circuit open since 2026-12-07 10:00:00 UTC after 3 failures (last: DNS)"
    # the page whose own failures opened it failed as its note says first
    assert reason_of("UNAVAILABLE", None, "ConnectError: DNS lookup failed for x; circuit open since "
                     "2026-12-07 10:00:00 UTC after 3 failures (last: ConnectError: DNS lookup failed for x)") == "DNS"
    assert reason_of("UNAVAILABLE", 503, "http 503 after 2 attempts") == "HTTP 503"
    assert reason_of("UNAVAILABLE", None, "ReadTimeout after 2 attempts") == "timeout"
    assert reason_of("DEAD", 404, "http 404") == "HTTP 404" and reason_of("ROBOTS") == "robots.txt"
    counted = count_unreadable([{"url": "a", "fetch_status": "DEAD", "http_status": 404},
                                {"url": "b", "fetch_status": "OK"},
                                {"url": "c", "fetch_status": "BLOCKED", "http_status": 403},
                                {"url": "d", "fetch_status": "DEAD", "http_status": 404}])
    assert counted.line() == "3 of 4 pages unreadable: HTTP 404 2, bot wall 1" and not counted.none_read
