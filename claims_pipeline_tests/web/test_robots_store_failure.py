"""The robots store: one that cannot be read or written costs a robots.txt request, never the run; one that
another process holds locked holds back no rules."""

from __future__ import annotations

import asyncio
import sqlite3

from claims_pipeline.store import schema
from claims_pipeline.store.engine import make_engine
from claims_pipeline.store.robots_table import RobotsTable
from claims_pipeline.web.records import FetchStatus
from claims_pipeline.web.robots import RobotsAnswer, RobotsCache
from claims_pipeline_tests.web.conftest import ROBOTS_SITE, run_fetch


def test_broken_store_falls_back_to_asking_the_site(web, settings_for, tmp_path, caplog):
    broken = RobotsTable(make_engine(f"sqlite:///{tmp_path / 'empty.sqlite'}"))  # no robots table in this file
    urls = [web.url(ROBOTS_SITE, "/_/page/ok"), web.url(ROBOTS_SITE, "/private/secret.html?b=1")]
    web.clear_log()
    results = {r.url: r.status for r in run_fetch(settings_for(), urls, robots_store=broken)}
    assert results == {urls[0]: FetchStatus.OK, urls[1]: FetchStatus.ROBOTS}  # rules still applied
    assert [e["path"] for e in web.requests()].count("/robots.txt") == 1
    assert "robots store: cannot read" in caplog.text and "robots store: cannot save" in caplog.text


def test_a_database_locked_by_another_process_holds_back_no_rules_and_flush_stores_them(tmp_path):
    """The answer is stored in the background: while another process holds the database's write lock, the
    rules are already there (the host's pages need not wait for the lock, up to the busy timeout); flush()
    at the end of the run waits until the answer is stored."""
    path = tmp_path / "cache.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    schema.metadata.create_all(engine)
    table = RobotsTable(engine)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock_held_when_rules_came: list[bool] = []

    async def fetch(origin: str, validators: object) -> RobotsAnswer:
        return RobotsAnswer(200, "User-agent: *\nDisallow: /private/\n")

    async def run() -> bool:
        cache = RobotsCache(fetch, store=table)
        other.execute("BEGIN IMMEDIATE")
        rules = await cache.rules("http://locked.fixture/a")
        lock_held_when_rules_came.append(other.in_transaction)
        asyncio.get_running_loop().call_later(0.3, other.execute, "COMMIT")
        await cache.flush()
        return rules.allows("http://locked.fixture/private/x", "claims-pipeline")

    assert asyncio.run(run()) is False
    assert lock_held_when_rules_came == [True]
    stored = table.load("http://locked.fixture")
    assert stored is not None and stored.status == 200 and "Disallow: /private/" in stored.body
    other.close()
