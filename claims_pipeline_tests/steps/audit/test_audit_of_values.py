"""The audit tables built from the stored values as they are (build_audit_of_values, audit_scopes), the tables read
back a column at a time, and the tables copied beside the report: the same as through the records."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from claims_pipeline.priors import build_prior
from claims_pipeline.report.audit import build_audit, build_audit_of_values
from claims_pipeline.report.write import write_reports
from claims_pipeline.steps.audit.tables import load_audit, write_tables
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages, page_to_json
from claims_pipeline.steps.priors import ScopePriors
from claims_pipeline_tests.report.factories import FILLER, claim, rules_of, value
from claims_pipeline_tests.report.test_audit import scenario
from claims_pipeline_tests.store.helpers import day, make_cache, ok

RUN_AT = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


def _same_tables(a, b) -> None:
    for name in ("claims", "pages", "priors"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    assert a.headline == b.headline


def test_the_stored_values_give_the_tables_the_records_give() -> None:
    claims, pages, priors = scenario()
    stored_claims = [c.to_dict() for c in claims]
    stored_priors = {k: p.to_dict() for k, p in priors.items()}
    _same_tables(build_audit_of_values(stored_claims, pages, stored_priors, run_at=RUN_AT),
                 build_audit(claims, pages, priors, run_at=RUN_AT))

    # a value and a hit of an older shape (a key missing) read as their records' to_dict writes them
    first = next(c for c in stored_claims if c["values"])
    first["values"][0].pop("number")
    hit_prior = next(p for p in stored_priors.values() if p["hits"])
    hit_prior["hits"][0].pop("excerpt_end")
    audit = build_audit_of_values(stored_claims, pages, stored_priors, run_at=RUN_AT)
    cell = json.loads(audit.claims.set_index("id").at[first["id"], "values"])[0]
    assert list(cell) == ["type", "raw", "needles", "salient", "pos", "end", "number"] and cell["number"] is None
    hits = json.loads(audit.priors.set_index("claim_id").loc[[k for k, p in stored_priors.items() if p is hit_prior][0], "hits"])
    assert hits[0]["excerpt_end"] is None and list(hits[0])[-1] == "excerpt_end"


def test_audit_scopes_reads_a_claim_again_on_the_cache_state_and_measures_every_text(tmp_path: Path) -> None:
    from claims_pipeline.steps.audit.cross_scope import audit_scopes

    levy, fee = "https://www.tax.gov.xa/levy", "https://www.tax.gov.xa/fee"
    old_text, new_text = FILLER + "The levy is 0.8 %. " + FILLER, FILLER + "The levy is 1.1 % now. " + FILLER
    fee_text = FILLER + "The fee is 5 %. " + FILLER
    cache = make_cache(tmp_path)
    try:
        cache.record(ok(levy, old_text), now=day(1))
        cache.record(ok(fee, fee_text), now=day(1))
        snapshot = cache.states([levy, fee])  # what scope xa's pages asset stored
        for n in (2, 3):  # another scope's runs fetched the levy page since: its new text, seen twice, stands
            cache.record(ok(levy, new_text), now=day(n))
        c_levy = claim("Levy 0.8 %", [value("pct", "0.8 %")], url=levy, scope="xa", line_no=3)
        c_fee = claim("Fee 5 %", [value("pct", "5 %")], url=fee, scope="xa", line_no=4)
        stored_priors = {"xa": ScopePriors([{"id": c.id, **build_prior(c, snapshot[c.source_url], rules_of()).to_dict()}
                                            for c in (c_levy, c_fee)])}
        before = json.dumps(stored_priors["xa"].to_json())
        stored_pages = ScopePages.from_json({u: page_to_json(p) for u, p in snapshot.items()})  # as the IO manager reads
        done = audit_scopes(tmp_path / "home", rules_of(), {"xa": ScopeClaims([c_levy.to_dict(), c_fee.to_dict()], [])},
                            {"xa": stored_pages}, stored_priors, cache, RUN_AT, ["xa", "xb"])
    finally:
        cache.close()
    assert done.reread == 1 and json.dumps(stored_priors["xa"].to_json()) == before  # the stored values are left as they are
    priors = done.audit.priors.set_index("claim_id")["prior"]
    assert (priors[c_levy.id], priors[c_fee.id]) == ("TOKENS_ABSENT", "TOKENS_PRESENT")
    assert stored_priors["xa"].rows[0]["prior"] == "TOKENS_PRESENT"
    chars = done.audit.pages.set_index("url")["text_chars"]
    assert (chars[levy], chars[fee]) == (len(new_text), len(fee_text))  # the fee's text only measured, not kept
    assert done.audit.scopes_missing == ["xb"]


def test_tables_read_back_with_none_and_copied_beside_the_report(tmp_path: Path) -> None:
    claims, pages, priors = scenario()
    tables = write_tables(build_audit(claims, pages, priors, run_at=RUN_AT).to_tables(),
                          tmp_path / "home" / "audit" / "tables")
    audit = load_audit(tables["priors"].parent)
    assert audit.priors["change_reported_at"].dtype == object and audit.priors["diff"].dtype == object
    unchanged = audit.priors[~audit.priors["content_changed"] & ~audit.priors["stale_changed"]]
    assert len(unchanged) and all(d is None for d in unchanged["diff"])  # None, which is falsy; NaN is not
    assert all(isinstance(c, str) for c in audit.priors["claim"])

    copied = write_reports(audit, tmp_path / "copied", tables_dir=tables["priors"].parent)
    written = write_reports(audit, tmp_path / "written")
    for name in ("claims", "pages", "priors"):
        assert copied[f"{name}.parquet"].read_bytes() == tables[name].read_bytes()
        pd.testing.assert_frame_equal(pd.read_parquet(copied[f"{name}.parquet"]),
                                      pd.read_parquet(written[f"{name}.parquet"]), check_exact=True)
    for name in ("report.md", "report.json", "report.html"):
        assert copied[name].read_bytes() == written[name].read_bytes()
