"""Fetch-free sampling (the earlier verifier's scoring, footer dates count) and the worklist JSON schema (the
earlier verifier's fields plus ours)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

from claims_pipeline.config.settings import SamplingWeights
from claims_pipeline.corpus.records import InlineStamp
from claims_pipeline.priors import build_prior
from claims_pipeline.steps.worklist.sampling import build_worklist, select_sample, selection_score
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value

NOW = datetime(2026, 7, 1, tzinfo=UTC)
W = SamplingWeights(official_source=0, secondary_source=0)  # the terms below, without the source tier's


class ZeroRng(random.Random):
    def random(self) -> float:  # isolate the deterministic part of the score
        return 0.0


def test_score_terms() -> None:
    pct = [value("pct", "5 %")]
    never = claim("x 5 %", pct)
    assert selection_score(never, W, ZeroRng(), NOW) == 50
    footer = claim("x 5 %", pct, last_verified="2026-04-02", origin="file")  # 90 days old via the footer
    assert selection_score(footer, W, ZeroRng(), NOW) == 24
    stale = claim("x 5 %", pct, last_verified="2026-07-01", stamp=InlineStamp("2026-07-01", "stale-marker"))
    assert selection_score(stale, W, ZeroRng(), NOW) == 100
    money = claim("fee €500", [value("money", "€500"), value("year", "2024", salient=False)])
    assert selection_score(money, W, ZeroRng(), NOW) == 60
    future = claim("x 5 %", pct, last_verified="2027-01-01")  # age floors at 0
    assert selection_score(future, W, ZeroRng(), NOW) == 0
    bad = claim("x 5 %", pct, last_verified="2026-13-45")
    assert selection_score(bad, W, ZeroRng(), NOW) == 9999 / 30 * 8


def test_the_source_tier_orders_the_review() -> None:
    """Official sources first, then secondary ones, the project's own pages last; nothing else differs."""
    from dataclasses import replace

    base = claim("x 5 %", [value("pct", "5 %")])
    score = {t: selection_score(replace(base, source_tier=t), SamplingWeights(), ZeroRng(), NOW)
             for t in ("primary-gov", "primary-allowlist", "secondary", "own")}
    assert score == {"primary-gov": 90, "primary-allowlist": 90, "secondary": 70, "own": 50}


def test_select_sample_is_deterministic_and_ordered() -> None:
    claims = [
        claim(f"c{i} 5 %", [value("pct", "5 %")], line_no=i, last_verified=None if i % 3 == 0 else f"2026-0{1 + i % 6}-01")
        for i in range(1, 40)
    ]
    claims.append(claim("stale", [value("pct", "5 %")], line_no=99, stamp=InlineStamp("2026-06-30", "stale"), last_verified="2026-06-30"))
    a = select_sample(claims, 10, 1234, NOW)
    b = select_sample(list(claims), 10, 1234, NOW)
    assert [c.id for c in a] == [c.id for c in b]
    assert a[0].line_no == 99  # the stale marker comes first
    assert len(a) == 10
    # never-verified claims (50) outrank a footer-dated claim verified in June (~2.4)
    assert all(c.last_verified is None for c in a[1:10])
    assert select_sample(claims, 0, 1, NOW) == []
    c = select_sample(claims, 10, 99, NOW)
    assert {x.id for x in c[:1]} == {a[0].id}


def test_worklist_schema_and_added_fields() -> None:
    url = "https://www.impots.gouv.fr/dmto"
    c1 = claim("DMTO 6.32 %", [value("pct", "6.32 %")], url=url, line_no=3, last_verified="2026-05-01", origin="file")
    c2 = claim("Fee €77,700", [value("money", "€77,700")], url=url, line_no=4)
    c3 = claim("Other 1 %", [value("pct", "1 %")], url="https://www.impots.gouv.fr/unfetched", line_no=5)
    pages = {
        url: page(
            url,
            FILLER + "Le taux est de 6,32 %. " + FILLER,
            content_changed=True,
            changed_at="2026-06-10T00:00:00+00:00",
            diff="\n".join(f"-old {i}\n+new {i}" for i in range(20)),
        )
    }
    priors = {c.id: build_prior(c, pages.get(c.source_url), rules_of()) for c in (c1, c2, c3)}
    wl = build_worklist([c1, c2, c3], pages, priors, generated_at=NOW)
    json.dumps(wl)  # serialisable
    assert wl["version"] == 1 and wl["generated_at"].startswith("2026-07-01")
    st = wl["stats"]
    assert st["total"] == 3
    assert st["by_prior"] == {"SOURCE_UNAVAILABLE": 1, "TOKENS_ABSENT": 1, "TOKENS_PRESENT": 1}
    assert st["by_scope_top"] == {"fr": 3}
    assert st["tokens_absent_count"] == 1 and st["tokens_absent"][0]["missing"] == ["€77,700"]
    i1, i2, i3 = wl["items"]
    for key in ("id", "scope", "line_no", "claim_text", "values", "source_url", "source_tier", "inline_stamp",
                "fetch_status", "http_status", "content_hash", "fetched_at", "content_kind", "content_changed",
                "prev_fetched_at", "prior", "matched_tokens", "strong_matched", "missing_tokens", "excerpts",
                "last_verified", "last_verified_origin", "link_kind", "hits", "changed_at", "diff_excerpt", "stale_changed"):
        assert key in i1, key
    assert i1["values"][0]["norm"] == "6.32 %"
    assert i1["prior"] == "TOKENS_PRESENT" and i1["hits"][0]["matched_text"] == "6,32 %"
    assert i1["stale_changed"] is True and i1["last_verified_origin"] == "file"
    assert i2["stale_changed"] is True  # never verified and changed this run
    assert i1["diff_excerpt"].count("\n") == 12 and "more lines" in i1["diff_excerpt"]
    assert i3["fetch_status"] == "UNAVAILABLE" and i3["fetch_note"] == "not fetched"


def test_worklist_file_escapes_terminal_and_bidi_controls_from_pages() -> None:
    from claims_pipeline.steps.worklist.sampling import worklist_json

    url = "https://www.impots.gouv.fr/dmto"
    c = claim("DMTO 6.32 %", [value("pct", "6.32 %")], url=url, line_no=3)
    text = FILLER + "Le taux est de 6,32 % \x1b]0;PWNED\x07 \u202egnp.exe. " + FILLER
    pages = {url: page(url, text)}
    wl = build_worklist([c], pages, {c.id: build_prior(c, pages[url], rules_of())}, generated_at=NOW)
    out = worklist_json(wl)
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\u001b]0;PWNED\\u0007" in out and "\\u202e" in out
    assert json.loads(out) == wl  # the same data


def test_claims_whose_page_the_cache_knows_changed_after_verification_come_first() -> None:
    url_changed, url_same = "https://www.impots.gouv.fr/levy", "https://www.impots.gouv.fr/other"
    changed_old = claim("Levy 0.8 %", [value("pct", "0.8 %")], url=url_changed, line_no=3, last_verified="2026-02-10", origin="file")
    changed_new = claim("Levy 0.9 %", [value("pct", "0.9 %")], url=url_changed, line_no=4, last_verified="2026-06-20", origin="file")
    never = [claim(f"Fee {i} %", [value("pct", f"{i} %")], url=url_same, line_no=10 + i) for i in range(5)]
    claims = never + [changed_new, changed_old]
    known = {url_changed: "2026-06-01T09:00:00+00:00"}  # the cache's latest confirmed change of that page
    first = select_sample(claims, 1, 7, NOW, changed_at_of=known)
    assert [c.line_no for c in first] == [3]  # verified 02-10, before the change: ahead of the never-verified
    without = select_sample(claims, 1, 7, NOW)
    assert without[0].line_no != 3  # fetch-free ranking alone puts a never-verified claim first
    assert 4 not in [c.line_no for c in select_sample(claims, 6, 7, NOW, changed_at_of=known)]  # verified after
