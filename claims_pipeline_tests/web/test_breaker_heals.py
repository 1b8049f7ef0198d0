"""A circuit breaker that heals (issue 34): runs that meet an open breaker do not extend it, it lets one probe
through after its window, a change of the host's route closes it, one URL's failures never open a whole host, and
`claims-pipeline fetch --reset HOST` closes it. Runs are refresh_pages (the audit's fetch step) and CLI audits on
one page cache, against the fixture web on 127.0.0.1; the fixture web's request log says what was sent."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store import schema
from claims_pipeline.store.cache import PageCache
from claims_pipeline.web.records import FetchStatus
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.web.conftest import fast_fetch, no_dns

WINDOW_S = 3.0


def _settings(web: FixtureWeb, tmp_path: Path, **fetch: Any) -> Any:
    base = fast_fetch(web).fetch.model_dump(mode="json")
    base.update(default_host={"concurrency": 1, "interval_ms": 10}, per_host_overrides={}, robots_enabled=False,
                request_timeout_s=0.5, connect_timeout_s=0.5, host_lease_s=1.0, max_retries=2)
    base.update(fetch)
    return settings_from_dict({"home": str(tmp_path / "home"), "fetch": base})


def _run(settings: Any, cache: PageCache, urls: list[str]) -> dict[str, Any]:
    return refresh_pages(settings.page_fetching, urls, cache=cache, resolver=no_dns)


def _sent(web: FixtureWeb, host: str) -> list[str]:
    return [e["path"] for e in web.requests() if e["host"] == host and e["path"] != "/robots.txt"]


def _record(cache: PageCache, host: str) -> dict[str, Any]:
    t = schema.host_leases
    with cache.engine.connect() as conn:
        row = conn.execute(t.select().where(t.c.host == host)).mappings().one()
    return dict(row)


@pytest.fixture
def web_and_cache(tmp_path: Path):
    with FixtureWeb(tmp_path / "sites") as web:
        cache = PageCache(f"sqlite:///{tmp_path / 'index.sqlite'}", tmp_path / "blobs")
        try:
            yield web, cache
        finally:
            cache.close()


def test_one_url_failing_every_attempt_does_not_close_its_host(web_and_cache, tmp_path: Path) -> None:
    """A blip on one URL (three resets in a row) leaves the host's other pages read, this run and the next."""
    web, cache = web_and_cache
    settings = _settings(web, tmp_path, max_retries=3, breaker_failures=3)
    bad = web.url("blip.fixture", "/_/reset?i=0")
    good = [web.url("blip.fixture", f"/_/page/g{i}") for i in range(3)]
    web.clear_log()
    states = _run(settings, cache, [bad, *good])
    assert states[bad].fetch_status == FetchStatus.UNAVAILABLE and "circuit open" not in states[bad].note
    assert all(states[u].fetch_status == FetchStatus.OK for u in good), [states[u].note for u in good]
    assert _sent(web, "blip.fixture").count("/_/reset?i=0") == 3
    assert not _record(cache, "blip.fixture")["breaker_opened_at"]
    later = _run(settings, cache, [web.url("blip.fixture", "/_/page/later")])
    assert [s.fetch_status for s in later.values()] == [FetchStatus.OK]


def test_a_breaker_met_by_later_runs_is_not_extended_and_lets_one_probe_through(web_and_cache, tmp_path: Path) -> None:
    web, cache = web_and_cache
    settings = _settings(web, tmp_path, breaker_open_s=WINDOW_S)
    resets = [web.url("down.fixture", f"/_/reset?n={n}") for n in range(4)]
    opened = _run(settings, cache, resets)
    assert any(s.note.startswith("circuit open since ") for s in opened.values()), [s.note for s in opened.values()]
    first = _record(cache, "down.fixture")
    assert first["breaker_opened_at"] > 0
    note = next(s.note for s in opened.values() if s.note.startswith("circuit open since "))
    assert " after " in note and " failures (last: " in note  # since <time> after N failures (last: <reason>)

    time.sleep(WINDOW_S / 2)
    web.clear_log()
    met = _run(settings, cache, [web.url("down.fixture", "/_/page/met")])
    [state] = met.values()
    assert state.fetch_status == FetchStatus.UNAVAILABLE and "(opened by another run)" in state.note
    assert _sent(web, "down.fixture") == []
    assert _record(cache, "down.fixture")["breaker_opened_at"] == first["breaker_opened_at"]  # not extended

    # past the first run's window (but within one counted from the run that met it): the host is tried again
    time.sleep(WINDOW_S / 2 + 0.3)
    web.clear_log()
    probed = _run(settings, cache, [web.url("down.fixture", f"/_/reset?p={p}") for p in range(3)])
    assert _sent(web, "down.fixture") == ["/_/reset?p=0"]  # one probe; its failure opened the breaker again
    assert all(s.fetch_status == FetchStatus.UNAVAILABLE for s in probed.values())
    again = _record(cache, "down.fixture")
    assert again["breaker_opened_at"] > first["breaker_opened_at"]

    time.sleep(WINDOW_S + 0.3)
    web.clear_log()
    healed = _run(settings, cache, [web.url("down.fixture", f"/_/page/h{i}") for i in range(2)])
    assert all(s.fetch_status == FetchStatus.OK for s in healed.values()), [s.note for s in healed.values()]
    assert not _record(cache, "down.fixture")["breaker_opened_at"]  # the probe's answer closed it


def test_fetch_reset_closes_a_hosts_breaker(web_and_cache, tmp_path: Path, monkeypatch, capsys) -> None:
    from claims_pipeline.cli import main

    web, cache = web_and_cache
    settings = _settings(web, tmp_path)
    fetch = settings.fetch.model_dump(mode="json")
    config = tmp_path / "claims.yaml"
    config.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "fetch": fetch}), encoding="utf-8")
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    with PageCache.at(settings.page_cache) as home_cache:
        for host in ("one.fixture", "two.fixture"):
            _run(settings, home_cache, [web.url(host, f"/_/reset?n={n}") for n in range(3)])
            assert _record(home_cache, host)["breaker_opened_at"] > 0

    assert main(["fetch", "--config", str(config), "--reset", "one.fixture"]) == 0
    err = capsys.readouterr().err
    assert "circuit breaker of one.fixture closed (was open since " in err, err
    page = web.url("one.fixture", "/_/page/back")
    assert main(["fetch", "--config", str(config), "--json", page]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["fetch_status"] == "OK", row
    assert main(["fetch", "--config", str(config), "--json", web.url("two.fixture", "/_/page/x")]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["fetch_status"] == "UNAVAILABLE" and "circuit open" in row["note"]  # only the named host

    assert main(["fetch", "--config", str(config), "--json", "--reset", "all"]) == 0
    out = capsys.readouterr()
    assert [r["host"] for r in json.loads(out.out)["reset"]] == ["two.fixture"]
    assert main(["fetch", "--config", str(config), "--json", web.url("two.fixture", "/_/page/y")]) == 0
    assert json.loads(capsys.readouterr().out)[0]["fetch_status"] == "OK"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(600)
def test_fixing_the_address_map_between_two_audits_lets_the_next_one_read_the_host(
        tmp_path: Path, monkeypatch, capsys) -> None:
    """The issue's first run: an audit whose route to the host is wrong fails on every page and opens the host's
    breaker; the route is fixed (fetch.address_map); the very next audit reads every page."""
    from claims_pipeline.cli import main

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    host = "www.revenue.gov.qq"
    sites = tmp_path / "sites"
    (sites / host).mkdir(parents=True)
    lines = []
    for i in range(4):
        body = f"<p>Rate {i} of the levy is {i + 2}.5 % of the value, due each March.</p>" * 8
        (sites / host / f"p{i}.html").write_text(f"<html><body><main>{body}</main></body></html>", encoding="utf-8")
        lines.append(f"- Rate {i}: **{i + 2}.5%** of the value ([revenue](http://{host}/p{i}.html))\n")
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "tax.md").write_text("# Tax\n\n" + "".join(lines), encoding="utf-8")

    def write(address: str) -> Path:
        config = tmp_path / "claims.yaml"
        config.write_text(yaml.safe_dump({
            "home": str(tmp_path / "home"), "extraction": {"corpus_dir": str(corpus)},
            "fetch": {"address_map": {host: address}, "allow_networks": ["127.0.0.1/32"], "robots_enabled": False,
                      "gov_host": {"concurrency": 1, "interval_ms": 10}, "max_retries": 2,
                      "retry_backoff_s": [0.05], "connect_timeout_s": 1, "request_timeout_s": 2}}), encoding="utf-8")
        return config

    with FixtureWeb(sites) as web:
        config = write(f"127.0.0.1:{_closed_port()}")  # nothing listens there: every connection is refused
        assert main(["audit", "--config", str(config), "--json"]) == 1  # no cited page could be read
        failed = capsys.readouterr()
        assert json.loads(failed.out)["by_prior"] == {"SOURCE_UNAVAILABLE": 4}, failed.err

        config = write(f"127.0.0.1:{web.port}")  # the route fixed
        web.clear_log()
        assert main(["audit", "--config", str(config), "--json"]) == 0
        out = capsys.readouterr()
        assert json.loads(out.out)["by_prior"] == {"TOKENS_PRESENT": 4}, out.err
        assert sorted(_sent(web, host)) == [f"/p{i}.html" for i in range(4)]

    # the first audit's summary: the pages the breaker left unread are counted as such, with the failure that
    # opened it (not as that failure: no connection was tried for them)
    assert "4 of 4 pages unreadable: no connection 3, circuit open since " in failed.err, failed.err
    assert " after 5 failures (last: no connection) 1" in failed.err, failed.err


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_cache_made_before_the_breaker_record_gets_its_columns(database: str, tmp_path: Path) -> None:
    """host_leases without breaker_opened_at and breaker_route (an earlier version's cache): opening the cache adds
    them, its rows read closed, and nothing else of the cache is touched. On SQLite and on a real PostgreSQL."""
    from contextlib import ExitStack

    from sqlalchemy import create_engine, text

    from claims_pipeline_tests.store.postgres_server import postgres_server

    with ExitStack() as stack:
        if database == "sqlite":
            url = f"sqlite:///{tmp_path / 'index.sqlite'}"
        else:
            url = stack.enter_context(postgres_server())()
        PageCache(url, tmp_path / "blobs").close()
        engine = create_engine(url)
        with engine.begin() as conn:  # the table as the earlier version made it, with a row
            conn.execute(text("DROP TABLE host_leases"))
            conn.execute(text(
                "CREATE TABLE host_leases (host TEXT PRIMARY KEY, holder VARCHAR(64), lease_until FLOAT NOT NULL, "
                "next_start FLOAT NOT NULL, retry_after_until FLOAT NOT NULL, interval_s FLOAT, crawl_delay FLOAT, "
                "breaker_failures INTEGER NOT NULL, breaker_note TEXT NOT NULL, breaker_at FLOAT NOT NULL)"))
            conn.execute(text("INSERT INTO host_leases VALUES "
                              "('old.fixture', NULL, 0, 0, 0, NULL, NULL, 3, 'ConnectError', 1)"))
        engine.dispose()
        cache = PageCache(url, tmp_path / "blobs")
        try:
            row = _record(cache, "old.fixture")
        finally:
            cache.close()
    assert row["breaker_opened_at"] == 0 and row["breaker_route"] == "" and row["breaker_failures"] == 3
