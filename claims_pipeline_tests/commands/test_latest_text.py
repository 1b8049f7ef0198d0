"""Figures are checked on the text just fetched (issue 34): a cited page edited between two audits is read on
its new text by the first audit that fetches it, which says the change is not confirmed yet; the change itself
(CONTENT_CHANGED, stale_changed, its diff) still counts on its second sighting. Real audits (the CLI's in-process
runs) of a one-file knowledge base against the fixture web on 127.0.0.1, whose page is edited on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from claims_pipeline.cli import main
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.notify.receivers import Webhook

HOST = "www.tax.gov.qq"
URL = f"http://{HOST}/levy.html"
FILLER = ("<p>Every owner of a dwelling pays an annual property levy to the municipality where the dwelling lies. "
          "Bills are issued each March and may be paid in two instalments, in March and in September.</p>")


def page(rate: str) -> str:
    return (f"<html><head><title>Annual levy</title></head><body><main><h1>Annual levy</h1>{FILLER}"
            f"<p>For the current year the levy is {rate} of the cadastral value.</p>{FILLER}</main></body></html>")


def audit(config: Path, now: str, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["audit", "--config", str(config), "--now", now, "--json"]) == 0
    err = capsys.readouterr().err
    return Path(err.split("audit done → ")[1].split()[0]).parent


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_figure_removed_from_a_page_is_reported_by_the_first_audit_that_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    sites = tmp_path / "sites"
    (sites / HOST).mkdir(parents=True)
    levy = sites / HOST / "levy.html"
    levy.write_text(page("1.5 %"), encoding="utf-8")
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "tax.md").write_text(
        "# Tax\n\n"
        f"- **Annual levy**: **1.5%** of the cadastral value ([Revenue — levy]({URL})) (2026-01-10 verified)\n",
        encoding="utf-8")
    with FixtureWeb(sites) as web, Webhook() as hook:
        config = tmp_path / "claims.yaml"
        config.write_text(yaml.safe_dump({
            "home": str(tmp_path / "home"),
            "extraction": {"corpus_dir": str(corpus)},
            "notify": {"urls": [f"json://127.0.0.1:{hook.port}/kb"]},
            "fetch": {"address_map": {HOST: f"127.0.0.1:{web.port}"}, "allow_networks": ["127.0.0.1/32"],
                      "gov_host": {"concurrency": 1, "interval_ms": 10}, "max_retries": 1},
        }), encoding="utf-8")

        first = audit(config, "2026-02-01T06:00:00Z", capsys)
        doc = json.loads((first / "report.json").read_text(encoding="utf-8"))
        assert [c["prior"] for c in doc["claims"]] == ["TOKENS_PRESENT"], doc["claims"]

        # the page is edited: 1.5 % → 2 %
        levy.write_text(page("2 %"), encoding="utf-8")
        sent = len(hook.received)
        second = audit(config, "2026-03-01T06:00:00Z", capsys)
        assert len(hook.received) == sent + 1
        doc = json.loads((second / "report.json").read_text(encoding="utf-8"))
        [row] = doc["tokens_absent"]
        assert row["missing"] == ["1.5%"], row
        assert row["page_unconfirmed_since"].startswith("2026-03-01")
        assert row["page_unconfirmed_note"] == "the page changed on 2026-03-01; not confirmed yet"
        assert doc["headline"]["content_changed"] == 0 and doc["stale_changed"] == [] and doc["changed_pages"] == []
        priors = pd.read_parquet(second / "priors.parquet")
        excerpts = " ".join(json.loads(priors.loc[0, "excerpts"]))
        assert "1.5 %" not in excerpts  # nothing of the old text is shown as the page's
        pages = pd.read_parquet(second / "pages.parquet").set_index("url")
        assert pages.loc[URL, "unconfirmed_since"].startswith("2026-03-01") and not pages.loc[URL, "content_changed"]
        md = (second / "report.md").read_text(encoding="utf-8")
        assert "1.5% (the page changed on 2026-03-01; not confirmed yet)" in md
        html = (second / "report.html").read_text(encoding="utf-8")
        assert "<em>the page changed on 2026-03-01; not confirmed yet</em>" in html
        # the notification after it has the news (it said "nothing new" when the old text was read)
        told = hook.received[-1]["json"]["message"]  # the first audit had nothing to tell
        assert (f"tax.md:3 — 1.5% not on {URL} (the page changed on 2026-03-01; not confirmed yet)" in told), told

        # the third audit sees the new text again: the change is confirmed and reported, dated at its first sighting
        sent = len(hook.received)
        third = audit(config, "2026-04-01T06:00:00Z", capsys)
        assert len(hook.received) == sent + 1
        doc = json.loads((third / "report.json").read_text(encoding="utf-8"))
        [row] = doc["tokens_absent"]
        assert "page_unconfirmed_since" not in row and "page_unconfirmed_note" not in row
        [stale] = doc["stale_changed"]
        assert stale["changed_at"].startswith("2026-03-01") and stale["change_note"] == "shown in this report"
        [changed] = doc["changed_pages"]
        assert changed["new"] and "-For the current year the levy is 1.5 %" in changed["diff"]
        assert "not confirmed yet" not in (third / "report.md").read_text(encoding="utf-8")
        # the confirmed change is news once; the missing figure was told already
        told = hook.received[-1]["json"]["message"]
        assert "Source changed after its Last verified date (1):" in told and "TOKENS_ABSENT) (" not in told, told
