"""A report at two sizes: a small audit lists every claim as today (cards with excerpts); a large one still lists
every flagged claim (as table rows past CARDS_MAX), counts the unflagged ones (WEAK_MATCH, unreadable sources)
by scope past LISTED_MAX, and keeps every claim in report.json. Audits are built from records (no fetch)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from claims_pipeline.priors import SOURCE_UNAVAILABLE, TOKENS_ABSENT, TOKENS_PRESENT, WEAK_MATCH, Prior
from claims_pipeline.report import write_reports
from claims_pipeline.report.audit import Audit, build_audit
from claims_pipeline.report.sections import CARDS_MAX, LISTED_MAX
from claims_pipeline_tests.report.factories import claim, page, value

RUN_AT = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
SCOPES = ("aa", "ab", "ac", "ad")
WHERE_RE = re.compile(r"countries/a[a-d]/[a-z]+\.md:\d+")  # a claim's file:line, as the reports show it


def make_audit(*, stale: int, absent: int, weak: int, unreadable: int, present: int) -> Audit:
    """Claims spread over SCOPES, five per page; `stale` of them on pages that changed after they were verified."""
    claims, pages, priors = [], {}, {}
    kinds = [("stale", stale), ("absent", absent), ("weak", weak), ("unreadable", unreadable), ("present", present)]
    n = 0
    for kind, count in kinds:
        for i in range(count):
            scope = SCOPES[n % len(SCOPES)]
            url = f"https://www.tax.gouv.fr/{kind}/{i // 5}"
            c = claim(f"The {kind} duty is **{i % 90 + 1}.5%** of the price", [value("pct", f"{i % 90 + 1}.5%")],
                      url=url, scope=scope, line_no=n + 1, last_verified="2026-01-10",
                      file=f"countries/{scope}/{kind}.md")
            n += 1
            claims.append(c)
            if kind == "stale":
                pages[url] = page(url, "text", content_changed=True, changed_at="2026-06-15T00:00:00+00:00",
                                  diff=f"-old {i // 5}\n+new {i // 5}")
                priors[c.id] = Prior(TOKENS_PRESENT)  # flagged by its page's change alone
            elif kind == "unreadable":
                pages[url] = page(url, None, status="HTTP_ERROR", note="HTTP 404" if i % 3 else "bot wall (403)")
                priors[c.id] = Prior(SOURCE_UNAVAILABLE, fetch_note="HTTP 404" if i % 3 else "bot wall (403)")
            else:
                pages[url] = page(url, "text")
                prior = {"absent": TOKENS_ABSENT, "weak": WEAK_MATCH, "present": TOKENS_PRESENT}[kind]
                priors[c.id] = Prior(prior, excerpts=[f"an excerpt of page {url}"],
                                     missing_tokens=[f"{i % 90 + 1}.5%"] if prior != TOKENS_PRESENT else [])
    return build_audit(claims, pages, priors, run_at=RUN_AT)


def written(audit: Audit, out: Path) -> tuple[str, str, dict, str]:
    paths = write_reports(audit, out)
    raw_json = paths["report.json"].read_text(encoding="utf-8")
    html = paths["report.html"].read_text(encoding="utf-8").replace("<wbr>", "")  # a path's break points
    return html, paths["report.md"].read_text(encoding="utf-8"), json.loads(raw_json), raw_json


def test_a_small_audit_lists_every_claim_as_before(tmp_path: Path) -> None:
    audit = make_audit(stale=5, absent=4, weak=6, unreadable=7, present=20)
    html, md, doc, raw = written(audit, tmp_path)
    assert html.count('<article class="claim stale">') == 5  # cards, with excerpts
    assert html.count('<article class="claim">') == 4 + 6
    assert "counted by scope" not in html and "counted by scope" not in md
    for r in audit.priors.itertuples():  # every flagged, weak and unreadable claim has its own row in report.md
        if r.prior != TOKENS_PRESENT:
            assert f"{r.file}:{r.line_no}" in md
    assert raw.startswith('{\n  "run_at"')  # indented, for a person
    assert len(doc["claims"]) == 42 and doc["total"] == 42


def test_a_large_audit_lists_flags_in_full_and_counts_the_rest_by_scope(tmp_path: Path) -> None:
    stale, unreadable, weak = CARDS_MAX + 20, LISTED_MAX + 100, LISTED_MAX + 8
    audit = make_audit(stale=stale, absent=12, weak=weak, unreadable=unreadable, present=50)
    html, md, doc, raw = written(audit, tmp_path)
    total = stale + 12 + weak + unreadable + 50
    # every flagged claim, each on its own row (past CARDS_MAX stale ones are table rows, not cards)
    assert '<article class="claim stale">' not in html
    assert html.count('<article class="claim">') == 12  # the few TOKENS_ABSENT ones keep their cards
    flagged = audit.priors[audit.priors["stale_changed"] | (audit.priors["prior"] == TOKENS_ABSENT)]
    assert len(flagged) == stale + 12
    where = {f"{r.file}:{r.line_no}" for r in flagged.itertuples()}
    # the unflagged ones: counted by scope, with their most frequent notes / files; none listed one by one
    assert set(WHERE_RE.findall(html)) == set(WHERE_RE.findall(md)) == where
    section = md.split("## PDF with no text layer")[1]
    counted = [int(n) for n in re.findall(r"^\| `a[a-d]` \| (\d+) \|", section, re.M)]
    assert len(counted) == len(SCOPES) and sum(counted) == unreadable
    assert "SOURCE\\_UNAVAILABLE: HTTP 404 ×" in section and "bot wall \\(403\\) ×" in section  # escaped cells
    weak_section = md.split("WEAK_MATCH` (")[1].split("## PDF")[0]
    assert sum(int(n) for n in re.findall(r"^\| `a[a-d]` \| (\d+) \|", weak_section, re.M)) == weak
    assert "countries/aa/weak.md ×" in weak_section
    # report.json is complete: every claim once, with its prior; written compactly
    assert [c["id"] for c in doc["claims"]] == list(audit.priors["claim_id"])
    assert len(doc["claims"]) == total == doc["total"]
    assert sum(c["prior"] == TOKENS_PRESENT for c in doc["claims"]) == 50 + stale  # stale ones: figure present
    assert not raw.startswith('{\n')


def test_the_counted_sections_do_not_grow_with_their_claims(tmp_path: Path) -> None:
    """Past LISTED_MAX the unflagged sections cost a row per scope: twice the unreadable and weak claims adds
    almost nothing to report.html and report.md (while report.json grows with every claim)."""
    small = written(make_audit(stale=5, absent=5, weak=LISTED_MAX + 1, unreadable=LISTED_MAX + 1, present=0),
                    tmp_path / "a")
    big = written(make_audit(stale=5, absent=5, weak=2 * LISTED_MAX, unreadable=2 * LISTED_MAX, present=0),
                  tmp_path / "b")
    for i in (0, 1):  # html, md: the same but for the counts
        assert len(big[i]) - len(small[i]) < 600, (i, len(small[i]), len(big[i]))
    assert len(big[3]) > 1.8 * len(small[3])
