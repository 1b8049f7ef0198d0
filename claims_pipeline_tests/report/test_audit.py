"""Audit tables, stale_changed rule, headline numbers and their recomputation from stored tables."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.corpus.records import InlineStamp
from claims_pipeline.priors import build_prior
from claims_pipeline.report.audit import (
    Audit,
    build_audit,
    headline_mismatches,
    headline_numbers,
    is_stale_changed,
)
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value
from claims_pipeline_tests.time_scale import scaled

RUN_AT = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
A = "https://www.impots.gouv.fr/dmto"
B = "https://www.service-public.gouv.fr/changed"
C = "https://www.legifrance.gouv.fr/dead"


def scenario():
    """Six claims over three pages: present, absent, changed-after-verify, verified-after-change, dead."""
    claims = [
        claim("DMTO 6.32 %", [value("pct", "6.32 %")], url=A, line_no=10),
        claim("Fee €77,700", [value("money", "€77,700")], url=A, line_no=11),  # absent
        claim("Rate 4.5 %", [value("pct", "4.5 %")], url=B, line_no=20, last_verified="2026-05-01", origin="file"),
        claim(
            "Rate 4.5 % again",
            [value("pct", "4.5 %")],
            url=B,
            line_no=21,
            last_verified="2026-06-20",
            stamp=InlineStamp("2026-06-20", "verified"),
        ),
        claim("Never verified 4.5 %", [value("pct", "4.5 %")], url=B, line_no=22),
        claim("Dead 3 %", [value("pct", "3 %")], url=C, line_no=30, scope="shared/home-tax"),
    ]
    pages = {
        A: page(A, FILLER + "Le taux global est de 6,32 %. " + FILLER),
        B: page(
            B,
            FILLER + "The new rate is 5.5 %. " + FILLER,
            content_changed=True,
            changed_at="2026-06-15T08:00:00+00:00",
            diff="-The rate is 4.5 %.\n+The new rate is 5.5 %.",
        ),
        C: page(C, None, status="DEAD", note="http 404"),
    }
    priors = {c.id: build_prior(c, pages.get(c.source_url), rules_of()) for c in claims}
    return claims, pages, priors


def test_stale_changed_rule() -> None:
    assert is_stale_changed("2026-05-01", "2026-06-15T08:00:00+00:00", False) is True  # older verification
    assert is_stale_changed("2026-06-20", "2026-06-15T08:00:00+00:00", True) is False  # verified after change
    assert is_stale_changed("2026-06-15", "2026-06-15T08:00:00+00:00", True) is False  # same day: not after
    assert is_stale_changed(None, "2026-06-15T08:00:00+00:00", True) is True  # never verified, changed now
    assert is_stale_changed(None, "2026-06-15T08:00:00+00:00", False) is False  # never verified, old change
    assert is_stale_changed("2026-05-01", None, False) is False


def test_build_audit_headline_and_buckets() -> None:
    claims, pages, priors = scenario()
    audit = build_audit(claims, pages, priors, run_at=RUN_AT)
    h = audit.headline
    assert h["total"] == 6
    assert h["by_prior"] == {"SOURCE_UNAVAILABLE": 1, "TOKENS_ABSENT": 4, "TOKENS_PRESENT": 1}
    assert h["tokens_absent"] == 4
    assert h["content_changed"] == 3
    assert h["stale_changed"] == 2  # line 20 (verified before) and 22 (never verified); not 21
    assert h["source_unavailable"] == 1 and h["pdf_no_text"] == 0
    # flagged: lines 11, 20, 21, 22 (absent and/or changed) counted once each
    assert h["flagged"] == 4
    stale_lines = sorted(audit.bucket("stale_changed")["line_no"])
    assert stale_lines == [20, 22]
    row = audit.priors.set_index("line_no").loc[20]
    assert row["changed_at"].startswith("2026-06-15") and "5.5 %" in row["diff"]
    assert audit.run_at.startswith("2026-07-01")


def test_headline_recomputed_from_tables_agrees() -> None:
    claims, pages, priors = scenario()
    audit = build_audit(claims, pages, priors, run_at=RUN_AT)
    assert headline_numbers(audit.claims, audit.pages, audit.priors) == audit.headline


def test_duplicate_claim_ids_count_once() -> None:
    claims, pages, priors = scenario()
    audit = build_audit(claims + [claims[1]], pages, priors, run_at=RUN_AT)
    assert audit.headline["total"] == 6 and len(audit.priors) == 6


def test_flagged_counts_distinct_scope_line_url() -> None:
    # two claims on one line citing one URL (different ids) count once in flagged
    c1 = claim("Fee €1,111 and €2,222", [value("money", "€1,111")], url=A, line_no=5)
    c2 = claim("Fee €1,111 and €2,222", [value("money", "€2,222")], url=A, line_no=5)
    c2 = type(c2)(**{**{f: getattr(c2, f) for f in c2.__slots__}, "id": c2.id + "-b"})
    pages = {A: page(A, FILLER * 3, content_changed=True, changed_at="2026-06-30T00:00:00+00:00")}
    priors = {c.id: build_prior(c, pages[A], rules_of()) for c in (c1, c2)}
    audit = build_audit([c1, c2], pages, priors, run_at=RUN_AT)
    assert audit.headline["tokens_absent"] == 2 and audit.headline["content_changed"] == 2
    assert audit.headline["flagged"] == 1
    assert headline_numbers(audit.claims, audit.pages, audit.priors)["flagged"] == 1


def test_corrupted_tables_are_detected(tmp_path: Path) -> None:
    claims, pages, priors = scenario()
    audit = build_audit(claims, pages, priors, run_at=RUN_AT)
    for name, df in audit.to_tables().items():
        df.to_parquet(tmp_path / f"{name}.parquet")
    loaded = {n: pd.read_parquet(tmp_path / f"{n}.parquet") for n in ("claims", "pages", "priors", "meta")}
    reloaded = Audit.from_tables(loaded["claims"], loaded["pages"], loaded["priors"], meta=loaded["meta"])
    assert reloaded.headline == audit.headline
    assert headline_mismatches(reloaded.headline, headline_numbers(reloaded.claims, reloaded.pages, reloaded.priors)) == []

    # a prior flipped in the table
    bad = loaded["priors"].copy()
    bad.loc[bad["line_no"] == 10, "prior"] = "TOKENS_ABSENT"
    diffs = headline_mismatches(audit.headline, headline_numbers(loaded["claims"], loaded["pages"], bad))
    assert any(d.startswith("tokens_absent") for d in diffs) and any(d.startswith("flagged") for d in diffs)

    # a page's change flag lost
    bad_pages = loaded["pages"].copy()
    bad_pages.loc[bad_pages["url"] == B, "content_changed"] = False
    diffs = headline_mismatches(audit.headline, headline_numbers(loaded["claims"], bad_pages, loaded["priors"]))
    assert any(d.startswith("content_changed") for d in diffs)

    # a claim row dropped
    diffs = headline_mismatches(audit.headline, headline_numbers(loaded["claims"].iloc[1:], loaded["pages"], loaded["priors"]))
    assert any(d.startswith("total") for d in diffs)


def test_missing_prior_and_missing_page_are_source_unavailable() -> None:
    c = claim("rate 6.32 %", [value("pct", "6.32 %")], url="https://www.impots.gouv.fr/never")
    audit = build_audit([c], {}, {}, run_at=RUN_AT)
    assert audit.headline["source_unavailable"] == 1
    assert audit.priors.iloc[0]["fetch_status"] == "NOT_FETCHED"
    assert headline_numbers(audit.claims, audit.pages, audit.priors) == audit.headline


@pytest.fixture
def cli_demo(tmp_path: Path, monkeypatch):
    """A demo config under a temp home, its fixture web running, for `claims-pipeline audit` in-process."""
    from claims_pipeline.commands.demo import write_runtime_config
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    with FixtureWeb() as web:
        yield home, write_runtime_config(home, f"127.0.0.1:{web.port}")


def test_audit_command_names_both_reports(tmp_path: Path, monkeypatch, capsys) -> None:
    """`claims-pipeline audit` names report.md and report.html (the one for people), both written."""
    from claims_pipeline.cli import main
    from claims_pipeline.commands.demo import write_runtime_config
    from claims_pipeline_demo.fixture_web.server import FixtureWeb

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    (tmp_path / "home").mkdir()
    with FixtureWeb() as web:
        config = write_runtime_config(tmp_path / "home", f"127.0.0.1:{web.port}")
        assert main(["audit", "--config", str(config), "--scope", "xa"]) == 0
    err = capsys.readouterr().err
    md = Path(err.split("audit done → ")[1].split()[0])
    assert md.name == "report.md" and md.is_file(), err
    html = md.with_name("report.html")
    assert html.is_file(), err
    assert f"report for people → {html}" in err.splitlines()


@pytest.mark.slow
def test_a_failed_report_step_is_not_passed_off_with_the_previous_report(cli_demo, capsys) -> None:
    """The report directory of the new run cannot be written: the command exits 1 and says the newest report
    is an earlier run's, instead of 'audit done → <last month's report>' with this run's numbers."""
    from claims_pipeline.cli import main

    home, config = cli_demo
    assert main(["audit", "--config", str(config), "--now", "2026-04-01T00:00:00Z", "--json"]) == 0
    first = capsys.readouterr()
    old_report = Path(first.err.split("audit done → ")[1].split()[0])
    (home / "reports" / "20260601T000000").write_text("a file where the report folder goes")
    assert main(["audit", "--config", str(config), "--now", "2026-06-01T00:00:00Z", "--json"]) == 1
    out = capsys.readouterr()
    assert "audit done" not in out.err
    assert f"audit failed: no new report; the newest is an earlier run's → {old_report}" in out.err
    assert json.loads(out.out) == {}


def test_newest_page_states_takes_the_latest_fetch_of_each_url() -> None:
    from claims_pipeline.report.audit import newest_page_states

    url = "https://www.tax.gov.xa/levy"
    old = page(url, FILLER + "0.8 %", fetched_at="2026-01-10T09:00:00+00:00")
    new = page(url, FILLER + "1.1 %", fetched_at="2026-03-05T09:00:00+00:00", content_changed=True,
               changed_at="2026-03-01T09:00:00+00:00")
    other = page("https://www.tax.gov.xa/other", FILLER, fetched_at="2026-01-10T09:00:00+00:00")
    for by_scope in ({"xa": {url: old, other.url: other}, "zz": {url: new}}, {"aa": {url: new}, "xa": {url: old}}):
        merged = newest_page_states(by_scope)
        assert merged[url] is new
    assert newest_page_states({"xa": {url: old, other.url: other}, "zz": {url: new}})[other.url] is other


def test_two_audits_of_one_second_get_two_report_folders(tmp_path: Path) -> None:
    from claims_pipeline.steps.audit.publish import report_dir_for

    reports = tmp_path / "reports"
    first = report_dir_for(reports, "2026-06-01T09:00:00.120000+00:00")
    assert first.name == "20260601T090000"
    first.mkdir(parents=True)
    (first / "report.json").write_text(json.dumps({"run_at": "2026-06-01T09:00:00.120000+00:00"}))
    assert report_dir_for(reports, "2026-06-01T09:00:00.120000+00:00") == first  # the same audit again
    second = report_dir_for(reports, "2026-06-01T09:00:00.870000+00:00")
    assert second.name == "20260601T090000-2"


@pytest.mark.slow
def test_a_failed_step_the_report_does_not_need_still_names_this_runs_report(cli_demo, monkeypatch, capsys) -> None:
    """The citation linter fails, the report is written anyway: the command names it (and exits 1), instead
    of saying no new report was written."""
    import claims_pipeline.corpus.linter as linter
    from claims_pipeline.cli import main

    home, config = cli_demo
    assert main(["audit", "--config", str(config), "--now", "2026-04-01T00:00:00Z"]) == 0
    capsys.readouterr()

    def broken(*args, **kwargs):
        raise RuntimeError("linter broke")

    monkeypatch.setattr(linter, "lint_corpus", broken)
    assert main(["audit", "--config", str(config), "--now", "2026-05-01T00:00:00Z", "--json"]) == 1
    out = capsys.readouterr()
    assert "audit done → " in out.err and "20260501T000000" in out.err and "audit failed" not in out.err
    assert json.loads(out.out)["total"] > 0


def test_combine_scopes_reads_a_claim_again_on_the_newest_fetch_of_its_page() -> None:
    from claims_pipeline.report.audit import combine_scopes
    from claims_pipeline.store.recent_changes import ReportedChanges

    url = "https://www.tax.gov.xa/levy"
    old = page(url, FILLER + "The levy is 0.8 %. " + FILLER, fetched_at="2026-01-10T09:00:00+00:00")
    failed = page(url, None, status="UNAVAILABLE", fetched_at="2026-02-01T09:00:00+00:00")
    new = page(url, FILLER + "The levy is 1.1 %. " + FILLER, fetched_at="2026-03-05T09:00:00+00:00")
    xa = claim("Levy 0.8 %", [value("pct", "0.8 %")], url=url, scope="xa", line_no=18)
    zz = claim("Levy 0.8 %", [value("pct", "0.8 %")], url=url, scope="zz", line_no=8)
    # the claims and priors as their assets store them (to_dict)
    stored = {xa.id: build_prior(xa, old, rules_of()).to_dict(), zz.id: build_prior(zz, new, rules_of()).to_dict()}
    ledger = ReportedChanges("1@x")
    pages, priors, reread = combine_scopes({"xa": [xa.to_dict()], "zz": [zz.to_dict()]},
                                           {"xa": {url: old}, "zz": {url: new}}, {}, stored, rules_of(), ledger, {})
    assert pages[url].text_hash == new.text_hash and reread == 1
    assert (stored[xa.id]["prior"], priors[xa.id]["prior"]) == ("TOKENS_PRESENT", "TOKENS_ABSENT")
    assert priors[zz.id] is stored[zz.id]
    _, priors, reread = combine_scopes({"xa": [xa.to_dict()]}, {"xa": {url: failed}, "zz": {url: old}}, {}, {},
                                       rules_of(), ledger, {})
    assert reread == 0 and priors == {}  # the failed fetch is the newest: nothing newer to read it on
    # the page cache's current state (a fetch no scope snapshot holds) wins over every snapshot
    pages, priors, reread = combine_scopes({"xa": [xa.to_dict()]}, {"xa": {url: old}}, {url: new}, stored, rules_of(),
                                           ledger, {})
    assert pages[url] is new and reread == 1 and priors[xa.id]["prior"] == "TOKENS_ABSENT"


@pytest.mark.slow
def test_two_cli_audits_of_one_home_at_once_both_finish_with_whole_files(cli_demo, tmp_path: Path) -> None:
    """`claims-pipeline audit` runs outside Dagster's run queue, so two can share a home (a cron job and a person,
    a CLI run beside the UI's). Both finish (one refuses its report when the other replaced the tables first),
    and the files they share are whole: the ledger of shown changes, last-run.txt, LATEST and the report it names."""
    import os
    import subprocess
    import sys

    home, config = cli_demo
    procs = []
    for k in range(2):
        env = {**os.environ, "DAGSTER_HOME": str(tmp_path / f"dagster-{k}")}
        procs.append(subprocess.Popen([sys.executable, "-m", "claims_pipeline.cli", "audit", "--config", str(config), "--json"],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=scaled(300)) for p in procs]
    for p, (out, err) in zip(procs, outs):
        if p.returncode == 0:
            assert "audit done → " in err and json.loads(out)["total"] > 0
        else:  # the other audit replaced the tables between this one's tables and its report: it says so
            assert p.returncode == 1 and "replaced by another audit of this home" in err, err[-2000:]
    assert 0 in [p.returncode for p in procs]
    ledger = json.loads((home / "audit" / "reported-changes.json").read_text(encoding="utf-8"))
    assert set(ledger) == {"cache", "changes"}
    assert (home / "audit" / "last-run.txt").read_text(encoding="utf-8").strip()
    latest = HomeLayout(home).latest_report_dir()
    assert (latest / "report.md").is_file() and json.loads((latest / "report.json").read_text(encoding="utf-8"))["run_at"]
    leftovers = [p for p in home.rglob("*.tmp")]
    assert leftovers == []


def test_a_refused_report_is_not_passed_off_with_the_other_audits_report(cli_demo, monkeypatch, capsys) -> None:
    """Another audit of the home replaces the tables and writes its report while this one runs: this run's report
    step refuses the tables, and the command does not present the other audit's report (LATEST moved) as its own."""
    from claims_pipeline.cli import main
    from claims_pipeline_tests.defs.conftest import another_audit_lands_during_the_checks

    home, config = cli_demo
    other_run_at = "2026-04-01T00:00:05+00:00"

    def its_report_too(home_dir: Path) -> None:
        other = home / "reports" / "20260401T000005"
        other.mkdir(parents=True, exist_ok=True)
        (other / "report.md").write_text("# the other audit's report\n")
        (other / "report.json").write_text(json.dumps({"run_at": other_run_at, "headline": {"flagged": 0}}))
        (home / "reports" / "LATEST").write_text(f"{other}\n")

    another_audit_lands_during_the_checks(monkeypatch, other_run_at, also=its_report_too)
    assert main(["audit", "--config", str(config), "--now", "2026-04-01T00:00:00Z", "--json"]) == 1
    out = capsys.readouterr()
    assert "audit done" not in out.err and "replaced by another audit of this home" in out.err, out.err
    assert json.loads(out.out) == {}


def test_a_stale_claim_on_a_change_an_earlier_report_showed_carries_that_reports_date(tmp_path: Path) -> None:
    """The ledger records the report that showed a change; the audit's priors and pages tables carry its run_at
    for a claim still stale on it (the report says "change reported on <date>" beside CONTENT_CHANGED 0)."""
    from dataclasses import replace

    from claims_pipeline.report.audit import build_audit_of_values, combine_scopes
    from claims_pipeline.store.recent_changes import ReportedChanges

    shown_on = "2026-06-01T09:00:00+00:00"
    changed = replace(page(B, FILLER + "The new rate is 5.5 %. " + FILLER, changed_at="2026-05-20T08:00:00+00:00",
                           diff="-4.5 %\n+5.5 %"), change_fetch_id=7)
    stale = claim("Rate 4.5 %", [value("pct", "4.5 %")], url=B, line_no=20, last_verified="2026-05-01")
    fresh = claim("Rate 5.5 %", [value("pct", "5.5 %")], url=B, line_no=21, last_verified="2026-06-20")
    prior_of = {c.id: build_prior(c, changed, rules_of()).to_dict() for c in (stale, fresh)}
    claims = [stale.to_dict(), fresh.to_dict()]

    def audit_with(ledger: ReportedChanges) -> Audit:
        pages, priors, _ = combine_scopes({"fr": claims}, {"fr": {B: changed}}, {B: changed}, prior_of,
                                          rules_of(), ledger, {B: B})
        return build_audit_of_values(claims, pages, priors, run_at=RUN_AT)

    audit = audit_with(ReportedChanges("1@x", {B: (7, shown_on)}))
    assert audit.headline["content_changed"] == 0 and audit.headline["stale_changed"] == 1
    rows = audit.priors.set_index("line_no")
    assert rows.loc[20, "change_reported_at"] == shown_on and rows.loc[20, "diff"] == "-4.5 %\n+5.5 %"
    assert pd.isna(rows.loc[21, "change_reported_at"])  # verified after the change: nothing to explain
    assert audit.pages.set_index("url").loc[B, "change_reported_at"] == shown_on
    # the column survives the parquet tables (what the report step reads back)
    for name, df in audit.to_tables().items():
        df.to_parquet(tmp_path / f"{name}.parquet")
    loaded = {n: pd.read_parquet(tmp_path / f"{n}.parquet") for n in ("claims", "pages", "priors", "meta")}
    again = Audit.from_tables(loaded["claims"], loaded["pages"], loaded["priors"], meta=loaded["meta"])
    assert again.priors.set_index("line_no").loc[20, "change_reported_at"] == shown_on
    # tables written before the column read back with it empty
    old = Audit.from_tables(loaded["claims"], loaded["pages"].drop(columns="change_reported_at"),
                            loaded["priors"].drop(columns="change_reported_at"), meta=loaded["meta"])
    assert old.priors["change_reported_at"].isna().all() and "change_reported_at" in old.pages.columns

    # a newer change of the page (another fetch id): shown now, so no earlier date
    audit = audit_with(ReportedChanges("1@x", {B: (5, shown_on)}))
    assert audit.headline["content_changed"] == 2 and audit.priors["change_reported_at"].isna().all()
    # shown by a version before the ledger ("" in its record): reported, date unknown
    audit = audit_with(ReportedChanges("1@x", {B: (7, "")}))
    assert audit.headline["content_changed"] == 0 and audit.priors["change_reported_at"].isna().all()
