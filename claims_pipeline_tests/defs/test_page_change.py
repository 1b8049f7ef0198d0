"""A cited page changes on the fixture web between audits: CONTENT_CHANGED once confirmed (second sighting),
stale_changed only for the claims verified before the change. The clock is pinned per audit."""

from __future__ import annotations

import json

import dagster as dg
import pandas as pd
import yaml

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.defs.partitions import range_tags
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline.steps.changes import PAGE_CHANGES
from claims_pipeline_tests.defs.conftest import (
    ALL_ASSETS,
    ALL_CHECKS,
    QUIET,
    another_audit_lands_during_the_checks,
    resources_for,
)
from claims_pipeline_tests.support.stored_values import stored_json

SCOPES = ["xa", "shared/exit/regional"]
LEVY = "http://www.tax.gov.xa/property/annual-levy.html"
SELECTION = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist")


def _audit(instance, config, clock):
    r = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config, clock),
                       selection=SELECTION, tags=range_tags(SCOPES), run_config=QUIET, raise_on_error=False)
    assert r.success
    return r


def _latest(instance, asset, scope):
    """The newest materialization of one scope (partition) of an asset."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[scope]), limit=1, ascending=False
    ).records
    return records[0].asset_materialization


def _priors(home):
    return pd.read_parquet(home / "audit" / "tables" / "priors.parquet").set_index("claim_id")


def test_change_confirmed_on_second_sighting_and_stale_only_before(instance, demo_config, home, web):
    sync_scope_partitions(instance, SCOPES)
    # xa:18 cites the levy page, verified 2026-02-10 (inline stamp); shared/exit/regional:8 cites it too,
    # verified 2026-05-05 (file footer). The page changes; its new text is first seen on 2026-03-01.
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")  # epoch 1: baseline
    p = _priors(home)
    assert not p["content_changed"].any()

    web.set_epoch(2)
    _audit(instance, demo_config, "2026-03-01T09:00:00+00:00")  # new text, first sighting: not yet a change
    p = _priors(home)
    assert not p["content_changed"].any()

    r = _audit(instance, demo_config, "2026-06-01T09:00:00+00:00")  # second sighting: confirmed
    p = _priors(home)
    changed = p[p["content_changed"]]
    assert set(changed.index) == {"xa:18:5bd13010", "shared/exit/regional:8:5bd13010"}
    assert set(changed["url"]) == {LEVY}
    assert str(changed.loc["xa:18:5bd13010", "changed_at"]).startswith("2026-03-01")  # dated at first sighting
    assert bool(p.loc["xa:18:5bd13010", "stale_changed"]) is True  # verified 02-10, before the change
    assert bool(p.loc["shared/exit/regional:8:5bd13010", "stale_changed"]) is False  # verified 05-05, after
    assert int(p["stale_changed"].sum()) == 1
    assert p.loc["xa:18:5bd13010", "prior"] == "TOKENS_ABSENT"  # the confirmed text no longer says 0.8%

    # the page-changes asset lists the change with its diff, and the WARN check names the stale claim
    changes = stored_json(home, "page_changes", "xa")
    assert changes["changed_pages"][0]["url"] == LEVY
    assert "1.1 %" in changes["changed_pages"][0]["diff"] and "0.8 %" in changes["changed_pages"][0]["diff"]
    assert [c["id"] for c in changes["stale_changed"]] == ["xa:18:5bd13010"]
    # one run over both scopes, yet each scope's materialization in the UI carries its own metadata
    meta = {scope: _latest(instance, "page_changes", scope).metadata for scope in SCOPES}
    assert meta["xa"]["stale_changed"].value == 1 and meta["xa"]["changed_pages"].value == 1
    assert "annual-levy.html" in meta["xa"]["stale_changed_claims"].value
    assert "1.1 %" in meta["xa"]["changed_pages_diffs"].value
    assert meta["shared/exit/regional"]["stale_changed"].value == 0  # verified after the change
    assert meta["shared/exit/regional"]["changed_pages"].value == 1
    xa_priors = _latest(instance, "priors", "xa")
    assert xa_priors.metadata["claims"].value == int(p.index.str.startswith("xa:").sum())
    checks = {c.check_name: c for c in r.get_asset_check_evaluations()}
    assert checks["no_stale_changed"].passed is False
    assert "annual-levy.html" in checks["no_stale_changed"].metadata["claims"].value
    # the lineage shows where to look without opening a partition: the results name the scopes
    assert checks["no_stale_changed"].description == "xa: 1 stale_changed"
    assert checks["no_cited_page_changed"].passed is False
    assert checks["no_cited_page_changed"].description == "shared/exit/regional: 1 changed page(s); xa: 1 changed page(s)"
    assert "annual-levy.html" in checks["no_cited_page_changed"].metadata["claims"].value
    assert checks["recount_matches_headline"].passed is True
    # and audit_tables' own panel (a click on its node) lists the changed pages by scope, beside by_scope
    tables = {e.materialization.asset_key.to_user_string(): e.materialization
              for e in r.get_asset_materialization_events()}["audit_tables"].metadata
    rows = [line for line in tables["changed_pages"].value.splitlines() if "annual-levy.html" in line]
    # a scope may wrap after each '/' (zero-width spaces)
    assert [row.split("|")[1].strip().replace("\u200b", "") for row in rows] == ["shared/exit/regional", "xa"]


def test_unsynced_exactly_when_a_cited_page_changed(instance, demo_config, web):
    """fetched_pages' data version moves only when a cited page's text changes."""
    sync_scope_partitions(instance, ["xb"])

    def version() -> str:
        recs = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey("fetched_pages"), asset_partitions=["xb"]), limit=1).records
        return recs[0].asset_materialization.tags["dagster/data_version"]

    def fetch() -> None:
        assert dg.materialize(ALL_ASSETS, instance=instance, resources=resources_for(demo_config), partition_key="xb",
                              selection=["corpus_documents", "claims", "fetched_pages"], run_config=QUIET).success

    fetch()
    v1 = version()
    web.set_epoch(2)  # only the xa levy page has a v2: xb's pages are the same
    fetch()
    assert version() == v1



def test_per_scope_metadata_in_a_multi_scope_run_stays_with_its_scope(instance, demo_config):
    """A run over several scopes gives each scope's materialization its own metadata, headed by its scope."""
    scopes = ["xa", "xb"]
    sync_scope_partitions(instance, scopes)
    r = dg.materialize([*ALL_ASSETS], instance=instance, resources=resources_for(demo_config, "2026-01-10T09:00:00+00:00"),
                       selection=dg.AssetSelection.assets("corpus_documents"), tags=range_tags(scopes), run_config=QUIET)
    assert r.success
    files = {scope: _latest(instance, "corpus_documents", scope).metadata["file_list"].value for scope in scopes}
    assert "countries/xa/" in files["xa"] and "countries/xb/" not in files["xa"]
    assert "countries/xb/" in files["xb"] and "countries/xa/" not in files["xb"]
    assert {s: _latest(instance, "corpus_documents", s).metadata["scope"].value for s in scopes} == {"xa": "xa", "xb": "xb"}


def _one_scope_fetch(instance, config, clock, scope):
    assert dg.materialize(ALL_ASSETS, instance=instance, resources=resources_for(config, clock), partition_key=scope,
                          selection=["corpus_documents", "claims", "fetched_pages"], run_config=QUIET).success


def test_change_confirmed_between_audits_by_another_scope_is_still_reported(instance, demo_config, home, web):
    """xa and shared/exit/regional cite the same levy page. Two one-scope fetch runs of xa see its new text and
    confirm the change; the next audit of both fetches the page unchanged, yet reports it for both scopes (it
    was confirmed since the previous audit); the audit after that does not report it again, while xa:18 (verified
    before the change) stays stale_changed."""
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")  # baseline
    web.set_epoch(2)
    _one_scope_fetch(instance, demo_config, "2026-03-01T09:00:00+00:00", "xa")  # first sighting
    _one_scope_fetch(instance, demo_config, "2026-03-05T09:00:00+00:00", "xa")  # confirmed by xa's run
    both = {"xa:18:5bd13010", "shared/exit/regional:8:5bd13010"}

    _audit(instance, demo_config, "2026-03-20T09:00:00+00:00")
    p = _priors(home)
    assert set(p.index[p["content_changed"]]) == both
    assert str(p.loc["shared/exit/regional:8:5bd13010", "changed_at"]).startswith("2026-03-01")
    for scope in SCOPES:  # the page-changes asset of each scope lists it with its diff
        changes = PAGE_CHANGES.read(home, scope)
        assert changes is not None and [c.url for c in changes.changed_pages] == [LEVY], scope
        assert "1.1 %" in (changes.changed_pages[0].diff or "")

    _audit(instance, demo_config, "2026-04-20T09:00:00+00:00")  # reported once: not by the next audit
    p = _priors(home)
    assert not p["content_changed"].any()
    # xa:18 (verified 02-10) stays stale: its page changed after it was verified, however long ago. The
    # page-changes asset says so too (it counted only pages changed in its own run)
    assert list(p.index[p["stale_changed"]]) == ["xa:18:5bd13010"]
    xa = PAGE_CHANGES.read(home, "xa")
    assert xa is not None and xa.changed_pages == [] and [c.id for c in xa.stale_changed] == ["xa:18:5bd13010"]
    assert _latest(instance, "page_changes", "xa").metadata["stale_changed"].value == 1


def test_monthly_audits_report_one_change_once(instance, demo_config, home, web):
    """A change the 03-01 audit confirms with its own fetch is not reported again on 04-01 (a fixed 35-day
    window reported it in both monthly reports)."""
    flags = _changed_per_audit(instance, demo_config, home, web, "2026-01-01T09:00:00+00:00",
                               ["2026-02-01T09:00:00+00:00", "2026-03-01T09:00:00+00:00", "2026-04-01T09:00:00+00:00"])
    assert flags == [0, 2, 0]  # first sighting, confirmed, already reported


def _changed_per_audit(instance, config, home, web, baseline, clocks):
    """A baseline audit, the levy page changed, then one audit per clock: each audit's CONTENT_CHANGED count."""
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, config, baseline)
    web.set_epoch(2)
    flags = []
    for clock in clocks:
        _audit(instance, config, clock)
        flags.append(int(_priors(home)["content_changed"].sum()))
    return flags


def test_rendering_the_same_audit_again_keeps_its_previous_run(instance, demo_config, home):
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    _audit(instance, demo_config, "2026-02-10T09:00:00+00:00")

    def report() -> dict:
        latest = HomeLayout(home).latest_report_dir()
        assert latest is not None
        return json.loads((latest / "report.json").read_text(encoding="utf-8"))

    assert report()["previous_run"].startswith("2026-01-10") and report()["run_at"].startswith("2026-02-10")
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=dg.AssetSelection.assets("audit_report"), run_config=QUIET).success
    assert report()["previous_run"].startswith("2026-01-10")  # not "2026-02-10", its own run


def test_the_audit_takes_the_newest_fetch_of_a_page_two_scopes_cite(instance, demo_config, home, web):
    """shared/exit/regional alone is refreshed twice after the levy page changed (its change confirmed); xa's
    own snapshot still holds the old fetch. The audit run on its own must report the change for both, and read
    xa's claim again on the new text (it took whichever scope sorted last: xa, so no change at all)."""
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    web.set_epoch(2)
    scope_selection = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist", "audit_tables", "audit_report")
    for clock in ("2026-03-01T09:00:00+00:00", "2026-03-05T09:00:00+00:00"):
        assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config, clock),
                              selection=scope_selection, partition_key="shared/exit/regional", run_config=QUIET).success
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance,
                          resources=resources_for(demo_config, "2026-03-06T09:00:00+00:00"),
                          selection=dg.AssetSelection.assets("audit_tables", "audit_report"), run_config=QUIET).success
    p = _priors(home)
    assert set(p.index[p["content_changed"]]) == {"xa:18:5bd13010", "shared/exit/regional:8:5bd13010"}
    assert bool(p.loc["xa:18:5bd13010", "stale_changed"]) is True  # verified 02-10, the change first seen 03-01
    assert p.loc["xa:18:5bd13010", "prior"] == "TOKENS_ABSENT"  # read on the new text, which says 1.1 %


def test_an_audit_after_a_scope_is_removed_leaves_it_out(instance, demo_config, home):
    sync_scope_partitions(instance, ["xa", "xc"])
    _audit_scopes = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                                   selection=SELECTION, tags=range_tags(["xa", "xc"]), run_config=QUIET)
    assert _audit_scopes.success and set(_priors(home)["scope"]) == {"xa", "xc"}
    instance.delete_dynamic_partition("scope", "xc")  # what the corpus sensor asks when countries/xc is gone
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=dg.AssetSelection.assets("audit_tables", "audit_report"), run_config=QUIET).success
    assert set(_priors(home)["scope"]) == {"xa"}


def test_the_report_names_the_scopes_it_does_not_cover(instance, demo_config, home):
    sync_scope_partitions(instance, ["xa", "xb"])
    scope_selection = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist", "audit_tables", "audit_report")
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=scope_selection, partition_key="xa", run_config=QUIET).success
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(demo_config),
                          selection=dg.AssetSelection.assets("audit_tables", "audit_report"), run_config=QUIET).success
    latest = HomeLayout(home).latest_report_dir()
    doc = json.loads((latest / "report.json").read_text(encoding="utf-8"))
    assert doc["scopes"] == ["xa"] and doc["scopes_missing"] == ["xb"]
    md = (latest / "report.md").read_text(encoding="utf-8")
    assert "1 scope(s) of the corpus are not in this audit** (never materialized): `xb`" in md
    assert "scope(s) of the corpus are not in this audit" in (latest / "report.html").read_text(encoding="utf-8")


def test_the_worklist_puts_claims_on_a_page_known_changed_after_their_verification_first(instance, demo_config, home, web):
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    web.set_epoch(2)
    _audit(instance, demo_config, "2026-03-01T09:00:00+00:00")
    _audit(instance, demo_config, "2026-06-01T09:00:00+00:00")  # the levy change confirmed (first seen 03-01)
    run_config = {**QUIET, "ops": {"worklist": {"config": {"sample": 1}}}}
    assert dg.materialize([*ALL_ASSETS], instance=instance, resources=resources_for(demo_config, "2026-06-02T09:00:00+00:00"),
                          selection=dg.AssetSelection.assets("worklist"), run_config=run_config).success
    items = json.loads((home / "worklist.json").read_text(encoding="utf-8"))["items"]
    assert [(i["id"], i["stale_changed"]) for i in items] == [("xa:18:5bd13010", True)]  # verified 02-10


def test_a_claim_whose_own_fetch_failed_is_read_on_another_scopes_good_fetch(instance, demo_config, home, web):
    """xa's last fetch of the levy page failed (its text hash is still the old stable one); a later fetch by
    shared/exit/regional read the page. The audit takes that newest state for the page, and reads xa's claim
    on it too, instead of keeping xa's 'unavailable' prior next to a page row that says OK."""
    from claims_pipeline.commands.demo import write_runtime_config

    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    scope_selection = dg.AssetSelection.all() - dg.AssetSelection.assets("worklist", "audit_tables", "audit_report")

    def scope_run(config, clock, scope):
        assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config, clock),
                              selection=scope_selection, partition_key=scope, run_config=QUIET).success

    dead = write_runtime_config(home, "127.0.0.1:9")  # port 9: nothing listens, every fetch is refused
    # The dead run keeps its circuit breaker to itself (fetch.host_lease_s: 0): shared through the cache, it would
    # keep the next run, a second later, off the host (store/host_leases.py, fetch.breaker_open_s; the routes differ
    # here, which closes it, but this test does not rest on that), while this test is
    # about the audit reading the newest fetch of the page.
    data = yaml.safe_load(dead.read_text(encoding="utf-8"))
    data["fetch"]["host_lease_s"] = 0
    dead.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    scope_run(dead, "2026-02-01T09:00:00+00:00", "xa")
    good = write_runtime_config(home, f"127.0.0.1:{web.port}")
    scope_run(good, "2026-02-02T09:00:00+00:00", "shared/exit/regional")
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(good, "2026-02-03T09:00:00+00:00"),
                          selection=dg.AssetSelection.assets("audit_tables", "audit_report"), run_config=QUIET).success
    p = _priors(home)
    assert p.loc["xa:18:5bd13010", "fetch_status"] == "OK"
    assert p.loc["xa:18:5bd13010", "prior"] == "TOKENS_PRESENT"  # 0.8 % is on the (unchanged) page


def _fetch_command(config, clock, urls):
    """What `claims-pipeline fetch URL` does: the library refresh on the same page cache, outside any audit."""
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline.steps.pages.refresh import refresh_pages
    from claims_pipeline.store.cache import PageCache

    settings = load_settings(config)
    with PageCache.at(settings.page_cache) as cache:
        refresh_pages(settings.page_fetching, urls, cache=cache, force=True, now=clock)


def test_a_change_confirmed_by_fetch_is_reported_once_even_after_a_partial_audit(instance, demo_config, home, web):
    """The fetch command confirms the levy change; an audit of xb alone (which does not cite the page) runs; then
    the full audit. The change is reported once: by the first report written after the confirmation (the audit
    reads every cited page's state from the cache), not never (a time cutoff moved past it by the partial audit
    hid it from the full one)."""
    sync_scope_partitions(instance, SCOPES + ["xb"])
    every = SCOPES + ["xb"]
    run = lambda clock, scopes: dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance,  # noqa: E731
                                               resources=resources_for(demo_config, clock), selection=SELECTION,
                                               tags=range_tags(scopes), run_config=QUIET)
    assert run("2026-01-10T09:00:00+00:00", every).success
    web.set_epoch(2)
    _fetch_command(demo_config, "2026-02-01T09:00:00+00:00", [LEVY])
    _fetch_command(demo_config, "2026-02-02T09:00:00+00:00", [LEVY])  # confirmed, outside any audit
    assert run("2026-02-03T09:00:00+00:00", ["xb"]).success  # `audit --scope xb`: xb re-fetched, then the audit
    p = _priors(home)
    assert set(p.index[p["content_changed"]]) == {"xa:18:5bd13010", "shared/exit/regional:8:5bd13010"}
    assert p.loc["xa:18:5bd13010", "prior"] == "TOKENS_ABSENT"  # read on the page's new text, not xa's snapshot
    assert run("2026-03-01T09:00:00+00:00", every).success
    assert not _priors(home)["content_changed"].any()  # reported once


def test_a_clock_set_back_neither_hides_nor_repeats_a_change(instance, demo_config, home, web):
    """Audits given clocks out of order (`--now`): the change this audit's own fetch confirms is reported (a
    cutoff by time hid it), and the next audit, set later again, does not report it a second time."""
    flags = _changed_per_audit(instance, demo_config, home, web, "2026-01-10T09:00:00+00:00",
                               ["2026-03-01T09:00:00+00:00", "2026-02-01T09:00:00+00:00", "2026-06-01T09:00:00+00:00"])
    assert flags == [0, 2, 0]


def test_the_worklist_right_after_the_audit_that_reported_a_change_still_shows_it(instance, demo_config, home, web):
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    web.set_epoch(2)
    _audit(instance, demo_config, "2026-03-01T09:00:00+00:00")
    _audit(instance, demo_config, "2026-06-01T09:00:00+00:00")  # reports the levy change
    _assert_worklist_flags_the_levy_change(instance, demo_config, home, "2026-06-02T09:00:00+00:00", sample=2)


def test_a_rebuilt_page_cache_does_not_hide_changes_behind_the_old_ones_ids(instance, demo_config, home, web):
    """The cache folder is deleted after some audits (its fetch ids start again at 1), and the fetch command
    confirms a change in the new cache before the next audit: the last report's watermark belongs to the old
    cache and must not hide that confirmation, whose id is lower."""
    import shutil

    sync_scope_partitions(instance, SCOPES)
    for clock in ("2026-01-10T09:00:00+00:00", "2026-01-11T09:00:00+00:00", "2026-01-12T09:00:00+00:00"):
        _audit(instance, demo_config, clock)  # the old cache's ids grow well past what the new one will reach
    shutil.rmtree(home / "cache")
    _fetch_command(demo_config, "2026-02-01T09:00:00+00:00", [LEVY])  # baseline in the new cache
    web.set_epoch(2)
    _fetch_command(demo_config, "2026-02-02T09:00:00+00:00", [LEVY])
    _fetch_command(demo_config, "2026-02-03T09:00:00+00:00", [LEVY])  # confirmed: fetch id 3
    _audit(instance, demo_config, "2026-02-04T09:00:00+00:00")
    assert set(_priors(home).index[_priors(home)["content_changed"]]) == {"xa:18:5bd13010", "shared/exit/regional:8:5bd13010"}


def _run_scopes(instance, config, clock, scopes):
    assert dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config, clock),
                          selection=SELECTION, tags=range_tags(scopes), run_config=QUIET).success


def test_a_change_on_a_page_no_report_covered_yet_is_kept_for_the_report_that_covers_it(instance, demo_config, home, web):
    """xa and shared/exit/regional exist but were never materialized; the fetch command confirms the levy change;
    an audit of xb alone writes a report (it does not cover the levy page); the full audit then reports it."""
    sync_scope_partitions(instance, SCOPES + ["xb"])
    _fetch_command(demo_config, "2026-01-10T09:00:00+00:00", [LEVY])
    web.set_epoch(2)
    _fetch_command(demo_config, "2026-01-11T09:00:00+00:00", [LEVY])
    _fetch_command(demo_config, "2026-01-12T09:00:00+00:00", [LEVY])  # confirmed
    _run_scopes(instance, demo_config, "2026-01-13T09:00:00+00:00", ["xb"])
    assert not _priors(home)["content_changed"].any()
    _run_scopes(instance, demo_config, "2026-01-14T09:00:00+00:00", SCOPES + ["xb"])
    assert set(_priors(home).index[_priors(home)["content_changed"]]) == {"xa:18:5bd13010", "shared/exit/regional:8:5bd13010"}


def test_after_a_rebuilt_cache_a_scope_snapshot_reports_no_old_change(instance, demo_config, home, web):
    import shutil

    sync_scope_partitions(instance, SCOPES + ["xb"])
    _run_scopes(instance, demo_config, "2026-01-10T09:00:00+00:00", SCOPES + ["xb"])
    web.set_epoch(2)
    _run_scopes(instance, demo_config, "2026-02-01T09:00:00+00:00", SCOPES + ["xb"])
    _run_scopes(instance, demo_config, "2026-03-01T09:00:00+00:00", SCOPES + ["xb"])  # the change reported
    assert int(_priors(home)["content_changed"].sum()) == 2
    shutil.rmtree(home / "cache")
    _run_scopes(instance, demo_config, "2026-03-02T09:00:00+00:00", ["xb"])  # xa's snapshot holds the old cache's change
    assert not _priors(home)["content_changed"].any()


def test_the_worklist_shows_the_change_the_last_report_showed_whoever_confirmed_it(instance, demo_config, home, web):
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    web.set_epoch(2)
    _fetch_command(demo_config, "2026-02-01T09:00:00+00:00", [LEVY])
    _fetch_command(demo_config, "2026-02-02T09:00:00+00:00", [LEVY])  # confirmed by the fetch command
    _audit(instance, demo_config, "2026-02-03T09:00:00+00:00")  # its own fetch sees the same text; it reports it
    assert int(_priors(home)["content_changed"].sum()) == 2
    _assert_worklist_flags_the_levy_change(instance, demo_config, home, "2026-02-04T09:00:00+00:00", sample=100)  # every claim


def test_a_page_changed_twice_between_reports_shows_both_changes(instance, demo_config, home, web):
    """The levy page changes twice (the rate, then the instalments), each confirmed by the fetch command, with
    no report between. The report's diff runs from the page the last report saw to the page now: the rate change
    is in it, not only the instalments one (each change keeps only its own diff)."""
    sync_scope_partitions(instance, SCOPES)
    _audit(instance, demo_config, "2026-01-10T09:00:00+00:00")
    for epoch, days in ((2, ("2026-02-01", "2026-02-02")), (3, ("2026-03-01", "2026-03-02"))):
        web.set_epoch(epoch)
        for d in days:
            _fetch_command(demo_config, f"{d}T09:00:00+00:00", [LEVY])
    _audit(instance, demo_config, "2026-04-01T09:00:00+00:00")
    pages = pd.read_parquet(home / "audit" / "tables" / "pages.parquet").set_index("url")
    diff = pages.loc[LEVY, "diff"]
    assert bool(pages.loc[LEVY, "content_changed"]) is True
    assert diff.startswith("2 changes since a report last covered this page (the first seen 2026-02-01)"), diff
    assert "0.8 %" in diff and "1.1 %" in diff and "three instalments" in diff
    _audit(instance, demo_config, "2026-05-01T09:00:00+00:00")  # shown once: the next report has no change
    assert not _priors(home)["content_changed"].any()


def _assert_worklist_flags_the_levy_change(instance, config, home, clock, *, sample):
    run_config = {**QUIET, "ops": {"worklist": {"config": {"sample": sample}}}}
    assert dg.materialize([*ALL_ASSETS], instance=instance, resources=resources_for(config, clock),
                          selection=dg.AssetSelection.assets("worklist"), run_config=run_config).success
    items = json.loads((home / "worklist.json").read_text(encoding="utf-8"))["items"]
    levy = [i for i in items if i["source_url"] == LEVY]
    assert levy and all(i["content_changed"] for i in levy), items


def test_a_report_never_shows_tables_another_audit_wrote_after_this_runs_own(instance, demo_config, home, monkeypatch):
    """Two audits of one home interleave (the CLI beside a Dagster run): another audit replaces the tables
    between this run's audit_tables step and its report. The report step refuses (its checks passed on other
    tables) instead of writing the other audit's tables, before their own check ran, as this run's report."""
    sync_scope_partitions(instance, SCOPES)
    with monkeypatch.context() as patched:
        another_audit_lands_during_the_checks(patched, "2026-01-10T09:00:05+00:00")  # a second audit's tables
        r = dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance,
                           resources=resources_for(demo_config, "2026-01-10T09:00:00+00:00"), selection=SELECTION,
                           tags=range_tags(SCOPES), run_config=QUIET, raise_on_error=False)
    assert not r.success
    failed = [e for e in r.all_events if e.is_step_failure]
    assert [e.step_key for e in failed] == ["audit_report"]
    assert "replaced by another audit of this home (run at 2026-01-10T09:00:05+00:00)" in str(failed[0].step_failure_data.error)
    assert not (home / "reports" / "LATEST").exists() and not (home / "audit" / "reported-changes.json").exists()

    _audit(instance, demo_config, "2026-01-11T09:00:00+00:00")  # the same home, no other audit: the report is written
    assert (home / "reports" / "LATEST").exists()
