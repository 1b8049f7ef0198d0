"""A robots store that cannot be read or written costs a robots.txt request, never the run."""

from __future__ import annotations

from claims_pipeline.store.engine import make_engine
from claims_pipeline.store.robots import RobotsTable
from claims_pipeline.web.records import FetchStatus

from claims_pipeline_tests.web.conftest import ROBOTS_SITE, run_fetch


def test_broken_store_falls_back_to_asking_the_site(web, settings_for, tmp_path, caplog):
    broken = RobotsTable(make_engine(f"sqlite:///{tmp_path / 'empty.sqlite'}"))  # no robots table in this file
    urls = [web.url(ROBOTS_SITE, "/_/page/ok"), web.url(ROBOTS_SITE, "/private/secret.html?b=1")]
    web.clear_log()
    results = {r.url: r.status for r in run_fetch(settings_for(), urls, robots_store=broken)}
    assert results == {urls[0]: FetchStatus.OK, urls[1]: FetchStatus.ROBOTS}  # rules still applied
    assert [e["path"] for e in web.requests()].count("/robots.txt") == 1
    assert "robots store: cannot read" in caplog.text and "robots store: cannot save" in caplog.text
