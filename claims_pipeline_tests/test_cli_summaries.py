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


def test_verify_without_a_judge_says_nothing_was_judged_and_what_to_set(unreachable: Path, capsys) -> None:
    main(["audit", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"])
    capsys.readouterr()
    assert main(["verify", "--config", str(unreachable), "--now", "2026-06-01T00:00:00Z"]) == 0
    err = capsys.readouterr().err
    assert "verify done" not in err
    line = next(line for line in err.splitlines() if line.startswith("verify: "))
    assert line.startswith("verify: nothing was judged (no judge configured: set judge.provider")
    assert "judge.api_key_env" in line and "docs/verification.md" in line


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
