"""A Dagster retry from failure resumes the failed run's fetch run: pages recorded before the failure are not
requested again. Real instance, real fixture web, real page cache; the first run's fetcher dies after two pages."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import dagster as dg

from claims_pipeline.defs.fetch_runs import fetch_run_id
from claims_pipeline.defs.resources import FetcherResource
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, QUIET, resources_for

SELECTION = dg.AssetSelection.assets("corpus_documents", "claims", "fetched_pages")


class FetcherKilledAfterTwoPages(FetcherResource):
    """The real fetcher and cache for the first two URLs, then the step dies (as a killed worker would)."""

    def refresh(self, urls: list[str], cache: Any, now: datetime, run_id: str | None = None) -> dict[str, Any]:
        super().refresh(urls[:2], cache, now, run_id)
        raise RuntimeError("worker killed midway through the fetch")


def _page_requests(web: Any) -> list[str]:
    return sorted(f"{r['host']}{r['path']}" for r in web.requests() if r["path"] != "/robots.txt")


def _run(instance: dg.DagsterInstance, resources: dict[str, Any], tags: dict[str, str] | None = None):
    return dg.materialize(ALL_ASSETS, instance=instance, resources=resources, selection=SELECTION, partition_key="xa",
                          run_config=QUIET, tags=tags or {}, raise_on_error=False)


def test_a_retry_from_failure_fetches_only_the_pages_the_failed_run_did_not_record(instance, demo_config, web):
    sync_scope_partitions(instance, ["xa", "xb", "xc", "shared/exit/regional"])
    resources = resources_for(demo_config)
    dying = {**resources, "fetcher": FetcherKilledAfterTwoPages(config=resources["fetcher"].config)}
    first = _run(instance, dying)
    assert not first.success
    fetched_first = _page_requests(web)
    assert len(fetched_first) == 2

    # the tags Dagster puts on "Re-execute from failure" (and on the run-retry daemon's FROM_FAILURE retries)
    web.clear_log()
    retry_tags = {"dagster/is_resume_retry": "true", "dagster/root_run_id": first.run_id,
                  "dagster/parent_run_id": first.run_id}
    retry = _run(instance, resources, retry_tags)
    assert retry.success
    fetched_retry = _page_requests(web)
    assert fetched_retry and not set(fetched_retry) & set(fetched_first)  # nothing fetched twice
    # ...and the asset still holds every page, the two recorded by the failed run included
    pages = {f"{urlsplit(u).hostname}{urlsplit(u).path}": p for u, p in retry.output_for_node("fetched_pages")["xa"].pages.items()}
    assert set(fetched_first) | set(fetched_retry) <= set(pages)
    assert {pages[k].fetch_status for k in fetched_first} <= {"OK", "BINARY"}  # as the failed run recorded them

    # a new run (not a retry) is a fresh fetch run: every page is asked for again (conditionally)
    web.clear_log()
    assert _run(instance, resources).success
    assert set(fetched_first) | set(fetched_retry) <= set(_page_requests(web))


def test_fetch_run_id_follows_the_retry_tags():
    assert fetch_run_id(dg.DagsterRun(job_name="audit", run_id="r1")) == "r1"
    root = {"dagster/root_run_id": "r1", "dagster/parent_run_id": "r2"}
    for tag in ("dagster/is_resume_retry", "dagster/is_asset_resume_retry"):
        retry = dg.DagsterRun(job_name="audit", run_id="r3", tags={**root, tag: "true"}, root_run_id="r1", parent_run_id="r2")
        assert fetch_run_id(retry) == "r1"
    rerun_all = dg.DagsterRun(job_name="audit", run_id="r4", tags=root, root_run_id="r1", parent_run_id="r2")
    assert fetch_run_id(rerun_all) == "r4"  # "re-execute all": a fresh fetch run
