"""Issue 15 §3: a changed page's diff once with its claims under it, WEAK_MATCH listed, times in UTC, "change
reported on <date>" for a change an earlier report showed, URLs that wrap at sensible points; the same content
in report.md, report.html and report.json, with hostile text escaped in every new cell."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

from claims_pipeline.priors import build_prior
from claims_pipeline.report import write_reports
from claims_pipeline.report.audit import Audit, build_audit, headline_numbers
from claims_pipeline.report.escape import ZWSP
from claims_pipeline.report.sections import ScopeCount, counts_by_scope
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value
from claims_pipeline_tests.report.test_report import ALLOWED_TAGS, TagCollector, md_rows, unescaped_pipes

# a run clock two hours east of UTC, with microseconds: every rendering shows 09:00:05 UTC
RUN_AT = datetime(2026, 7, 1, 11, 0, 5, 250000, tzinfo=timezone(timedelta(hours=2)))
NEW = "https://www.tax.gov.zz/levy?year=2026&kind=<b>|x"  # a hostile but http(s) URL: linked, escaped
OLD = "https://www.tax.gov.zz/transfer-duty_rates/annual"
WEAK = "https://www.tax.gov.zz/fees"
SHOWN_ON = "2026-05-02T07:00:00+00:00"
HOSTILE = ' <img src=x onerror=alert(1)> | cell | [x](javascript:alert(2)) ![p](http://203.0.113.9/t.png) **b**'
NEW_DIFF = "-The levy is 0.8 %. ```` <script>alert('diff')</script>\n+The levy is 1.1 %. \"><img src=x onerror=alert(3)>"
OLD_DIFF = "-The duty is 1.0 %.\n+The duty is 1.2 %."
EVIL_FILE = "countries/zz/<img src=x onerror=alert(4)>.md"


def scenario() -> tuple[Audit, dict]:
    """Three claims on a page whose change this report shows (two stale, one verified after it), two on a page
    an earlier report showed (one stale), one WEAK_MATCH, one TOKENS_ABSENT on an unchanged page."""
    c = {
        "new_stale": claim("Levy 0.8 %" + HOSTILE, [value("pct", "0.8 %")], url=NEW, scope="zz", line_no=5,
                           last_verified="2026-05-01", file=EVIL_FILE),
        "new_fresh": claim("Levy 1.1 %", [value("pct", "1.1 %")], url=NEW, scope="zz", line_no=6,
                           last_verified="2026-06-20"),
        "new_never": claim("Levy again 0.8 %", [value("pct", "0.8 %")], url=NEW, scope="yy", line_no=2),
        "old_stale": claim("Duty 1.0 %", [value("pct", "1.0 %")], url=OLD, scope="zz", line_no=9,
                           last_verified="2026-03-01"),
        "old_fresh": claim("Duty 1.2 %", [value("pct", "1.2 %")], url=OLD, scope="zz", line_no=10,
                           last_verified="2026-04-20"),
        "weak": claim("Fee 2.5 % and €300,000" + HOSTILE, [value("pct", "2.5 %"), value("money", "€300,000")],
                      url=WEAK, scope="yy", line_no=4, last_verified="2026-06-01"),
        "absent": claim("Fee €77,700", [value("money", "€77,700")], url=WEAK, scope="yy", line_no=7),
    }
    pages = {
        NEW: page(NEW, FILLER + "The levy is 1.1 %. " + FILLER, content_changed=True,
                  changed_at="2026-06-15T08:30:45.123456+02:00", diff=NEW_DIFF),
        OLD: replace(page(OLD, FILLER + "The duty is 1.2 %. " + FILLER, changed_at="2026-04-10T10:00:00+00:00",
                          diff=OLD_DIFF), change_fetch_id=4, change_reported_at=SHOWN_ON),
        WEAK: page(WEAK, FILLER + "The fee is 2,5 %. " + FILLER),
    }
    priors = {x.id: build_prior(x, pages[x.source_url], rules_of()) for x in c.values()}
    audit = build_audit(list(c.values()), pages, priors, run_at=RUN_AT)
    assert audit.priors.set_index("claim_id").loc[c["weak"].id, "prior"] == "WEAK_MATCH"  # the scenario holds
    return audit, c


def render(tmp_path: Path) -> tuple[Audit, dict, str, str, dict]:
    audit, c = scenario()
    paths = write_reports(audit, tmp_path, previous_run="2026-06-01T09:00:00.5+00:00")
    md, html_doc = paths["report.md"].read_text(encoding="utf-8"), paths["report.html"].read_text(encoding="utf-8")
    return audit, c, md, html_doc, json.loads(paths["report.json"].read_text(encoding="utf-8"))


def test_a_changed_pages_diff_appears_once_with_every_claim_citing_it(tmp_path: Path) -> None:
    audit, c, md, html_doc, doc = render(tmp_path)
    assert audit.headline["content_changed"] == 3 and audit.headline["stale_changed"] == 3
    # report.md: the new change, its diff once, the three claims citing the page under it
    assert "## Cited page CHANGED (1 page · 3 claims)" in md
    assert md.count("The levy is 0.8 %") == 1 and md.count("The duty is 1.0 %") == 1
    section = md.split("## Cited page CHANGED")[1].split("\n## ")[0]
    assert "cited by 3 claims" in section and "```diff" in section
    rows = md_rows(md, "## Cited page CHANGED")[2:]
    assert [r.split(" | ")[1] for r in rows] == [
        "`countries/yy/playbook.md:2`", "countries/zz/\\<img src=x onerror=alert\\(4\\)\\>.md:5",
        "`countries/zz/playbook.md:6`"]
    assert [r.split(" | ")[-1] for r in rows] == ["yes |", "yes |", "no |"]  # stale_changed
    # report.html: one diff block per changed page, none in the claim cards
    assert html_doc.count('<pre class="diff">') == 2 and html_doc.count("The levy is 0.8 %") == 1
    page_section = html_doc.split("Cited page CHANGED")[1].split("<h2>")[0]
    assert page_section.count("<tr><td><code>") == 3 and "cited by 3 claims" in page_section
    # report.json: the same groups
    groups = {g["url"]: g for g in doc["changed_pages"]}
    assert [g["url"] for g in doc["changed_pages"]] == [NEW, OLD]  # this report's change first
    assert sorted(groups[NEW]["claims"]) == sorted([c["new_stale"].id, c["new_fresh"].id, c["new_never"].id])
    assert groups[NEW]["new"] is True and groups[NEW]["diff"] == NEW_DIFF
    assert groups[OLD]["claims"] == [c["old_stale"].id] and groups[OLD]["diff"] == OLD_DIFF
    assert doc["changed_pages_count"] == 1


def test_a_change_an_earlier_report_showed_says_when(tmp_path: Path) -> None:
    audit, c, md, html_doc, doc = render(tmp_path)
    note = "change reported on 2026-05-02 07:00:00 UTC"
    stale = {r.split(" | ")[1]: r for r in md_rows(md, "## ⚠️")[2:]}
    assert note in stale["`countries/zz/playbook.md:9`"]
    assert "| shown in this report |" in stale["`countries/yy/playbook.md:2`"]
    assert "## Changed before, shown by an earlier report: claims still stale (1 page · 1 claim)" in md
    earlier = md.split("## Changed before")[1].split("\n## ")[0]
    assert note in earlier and "The duty is 1.0 %" in earlier and "playbook.md:10" not in earlier  # not stale
    assert html_doc.count(note) == 2  # the stale claim's card and its page's section
    rows = {r["id"]: r for r in doc["stale_changed"]}
    assert rows[c["old_stale"].id]["change_note"] == note and rows[c["old_stale"].id]["change_reported_at"] == SHOWN_ON
    assert rows[c["new_stale"].id]["change_note"] == "shown in this report"
    assert doc["changed_pages"][1]["change_reported_at_utc"] == "2026-05-02 07:00:00 UTC"


def test_cited_page_changed_0_beside_two_stale_claims_is_explained(tmp_path: Path) -> None:
    """The case the issue names: no new change, two claims still stale on changes earlier reports showed."""
    url2 = "https://www.tax.gov.zz/other"
    claims = [claim("Duty 1.0 %", [value("pct", "1.0 %")], url=OLD, scope="zz", line_no=9, last_verified="2026-03-01"),
              claim("Other 3 %", [value("pct", "3 %")], url=url2, scope="zz", line_no=12, last_verified="2026-03-01")]
    pages = {OLD: replace(page(OLD, FILLER + "The duty is 1.2 %. " + FILLER, changed_at="2026-04-10T10:00:00+00:00",
                               diff=OLD_DIFF), change_fetch_id=4, change_reported_at=SHOWN_ON),
             url2: replace(page(url2, FILLER + "It is 4 %. " + FILLER, changed_at="2026-04-11T10:00:00+00:00",
                                diff="-3 %\n+4 %"), change_fetch_id=6)}  # shown by a version before the ledger
    audit = build_audit(claims, pages, {x.id: build_prior(x, pages[x.source_url], rules_of()) for x in claims},
                        run_at=RUN_AT)
    assert audit.headline["content_changed"] == 0 and audit.headline["stale_changed"] == 2
    paths = write_reports(audit, tmp_path)
    md = paths["report.md"].read_text(encoding="utf-8")
    assert "## Cited page CHANGED (0 pages · 0 claims)" in md
    notes = [r.split(" | ")[5] for r in md_rows(md, "## ⚠️")[2:]]
    assert notes == ["change reported on 2026-05-02 07:00:00 UTC", "change reported in an earlier report"]
    assert "claims still stale (2 pages · 2 claims)" in md
    html_doc = paths["report.html"].read_text(encoding="utf-8")
    assert "change reported in an earlier report" in html_doc and "Cited page CHANGED (0 pages · 0 claims)" in html_doc
    # the cards agree: 2 stale claims beside 0 pages changed since the last report and 2 changed before
    cards = {label: int(n) for n, label in re.findall(r'<div class="card[^"]*"><b>(\d+)</b><span>([^<]+)</span>', html_doc)}
    assert cards["Claims stale: page changed after their Last verified"] == 2
    assert cards["Pages changed since the last report"] == 0 and cards["Claims on a page changed since the last report"] == 0
    assert cards["Pages changed before, shown by an earlier report, claims still stale"] == 2


def test_weak_matches_are_listed_in_every_rendering(tmp_path: Path) -> None:
    audit, c, md, html_doc, doc = render(tmp_path)
    assert audit.headline["by_prior"]["WEAK_MATCH"] == 1
    rows = md_rows(md, "## Figures only partly on cited page — `WEAK_MATCH` (1)")
    assert rows[0] == "| scope | where | claim | found | missing | verified | url |"
    row = rows[2]
    assert row.startswith("| `yy` | `countries/yy/playbook.md:4` | Fee 2.5 % and €300,000 ")
    assert "| 2.5 % | €300,000 | 2026-06-01 |" in row
    assert unescaped_pipes(row) == 8  # 7 cells: the claim's own pipes are escaped
    assert re.search(r"(?<!\\)[<>]", row.split("](<")[0]) is None and "javascript" not in row
    assert [r["id"] for r in doc["weak_match"]] == [c["weak"].id] and doc["weak_match"][0]["missing"] == ["€300,000"]
    weak_html = html_doc.split("WEAK_MATCH (1)</h2>")[1].split("<h2>")[0]
    assert weak_html.count('<article class="claim">') == 1 and "Missing: €300,000" in weak_html


def test_times_are_to_the_second_in_utc_and_marked(tmp_path: Path) -> None:
    audit, c, md, html_doc, doc = render(tmp_path)
    assert "Run: 2026-07-01 09:00:05 UTC  ·  previous run: 2026-06-01 09:00:00 UTC" in md
    assert "changed 2026-06-15 06:30:45 UTC" in md  # +02:00 with microseconds, shown in UTC
    assert "| 2026-06-15 06:30:45 UTC |" in md_rows(md, "## ⚠️")[2]
    assert "Run 2026-07-01 09:00:05 UTC · previous run 2026-06-01 09:00:00 UTC" in html_doc
    assert "page changed 2026-06-15 06:30:45 UTC" in html_doc
    for text in (md, html_doc):
        assert "T06:30" not in text and "08:30:45" not in text and "+02:00" not in text
    assert doc["run_at_utc"] == "2026-07-01 09:00:05 UTC" and doc["run_at"] == audit.run_at  # the key stays as stored
    assert doc["changed_pages"][0]["changed_at_utc"] == "2026-06-15 06:30:45 UTC"


def test_urls_wrap_at_separators_and_links_keep_the_exact_url(tmp_path: Path) -> None:
    audit, c, md, html_doc, doc = render(tmp_path)
    label = ZWSP.join(["https://", "www.tax.gov.zz", "/transfer-duty\\_rates", "/annual"])
    assert f"[{label}](<{OLD}>)" in md  # the label wraps between segments, the link target is exact
    assert ('<a href="https://www.tax.gov.zz/transfer-duty_rates/annual" rel="noopener noreferrer nofollow">'
            "https://<wbr>www.tax.gov.zz<wbr>/transfer-duty_rates<wbr>/annual</a>") in html_doc
    assert "<td><code>shared<wbr>/" not in html_doc and "<td>countries<wbr>/zz<wbr>/playbook.md:6</td>" in html_doc
    assert "break-all" not in html_doc  # no break inside a word ("gouv.f" / "r")


def test_hostile_text_is_escaped_in_every_new_cell(tmp_path: Path) -> None:
    audit, c, md, html_doc, doc = render(tmp_path)
    # report.md: page headers, claim rows under a page, weak rows; the diff sits in a fence it cannot close
    section = md.split("## Cited page CHANGED")[1].split("\n## Changed before")[0]
    header = next(line for line in section.splitlines() if line.startswith("**"))
    assert "](<https://www.tax.gov.zz/levy?year=2026&kind=%3Cb%3E%7Cx>)" in header  # < > | percent-encoded
    assert re.search(r"(?<!\\)[<>|]", header.split("](<")[0]) is None
    fence = next(line for line in section.splitlines() if line.startswith("``"))
    assert fence == "`````diff" and section.count("`````") == 2  # longer than the diff's own ````
    for row in md_rows(md, "## Cited page CHANGED")[2:] + md_rows(md, "## Figures only partly")[2:]:
        assert unescaped_pipes(row) == len(row.split(" | ")) + 1, row
        cells = row.split("](<")[0]
        assert re.search(r"(?<!\\)[<>]", cells) is None and "javascript" not in cells and "![" not in cells, row
    # report.html: only the expected tags, no handlers, links only to http(s)
    collector = TagCollector()
    collector.feed(html_doc)
    assert {t for t, _ in collector.tags} <= ALLOWED_TAGS
    for tag, attrs in collector.tags:
        assert not any(n.startswith("on") for n, _ in attrs), tag
        assert all(re.match(r"https?://", v or "") for n, v in attrs if n == "href"), attrs
    assert "&lt;script&gt;alert(&#39;diff&#39;)" in html_doc and "&lt;img src=x onerror=alert(4)&gt;.md:5" in html_doc
    assert ">https://<wbr>www.tax.gov.zz<wbr>/levy<wbr>?year=2026<wbr>&amp;kind=&lt;b&gt;|x</a>" in html_doc
    # report.json keeps the data exactly
    assert doc["changed_pages"][0]["url"] == NEW and doc["changed_pages"][0]["diff"] == NEW_DIFF


def test_the_new_sections_read_back_from_the_parquet_tables(tmp_path: Path) -> None:
    """The report step renders tables read back from parquet: the same report as from the audit in memory."""
    import pandas as pd

    audit, _, md, html_doc, doc = render(tmp_path / "first")
    for name, df in audit.to_tables().items():
        df.to_parquet(tmp_path / f"{name}.parquet")
    t = {n: pd.read_parquet(tmp_path / f"{n}.parquet") for n in ("claims", "pages", "priors", "meta")}
    assert headline_numbers(t["claims"], t["pages"], t["priors"]) == audit.headline
    again = Audit.from_tables(t["claims"], t["pages"], t["priors"], meta=t["meta"])
    paths = write_reports(again, tmp_path / "again", previous_run="2026-06-01T09:00:00.5+00:00")
    assert paths["report.md"].read_text(encoding="utf-8") == md
    assert paths["report.html"].read_text(encoding="utf-8") == html_doc


def test_a_counted_section_gives_each_scope_its_three_most_frequent_labels_ties_in_row_order() -> None:
    """counts_by_scope: scopes in order, a row without a scope left out, equally frequent labels in the order of the
    rows; the same as a group-by scope with a value_counts per group, on ties and on 40 labels of one count."""
    rows = pd.DataFrame({"scope": ["zb", "za", "zb", None, "zb", "zb", "za", "é"]})
    labels = pd.Series(["b.md", "x.md", "a.md", "a.md", "a.md", "c.md", None, "x.md"])
    assert counts_by_scope(rows, labels) == [
        ScopeCount("za", 2, [("x.md", 1), ("", 1)]),
        ScopeCount("zb", 4, [("a.md", 2), ("b.md", 1), ("c.md", 1)]),
        ScopeCount("é", 1, [("x.md", 1)]),
    ]
    rnd = random.Random(7)
    for n_labels in (2, 17, 40):
        scopes = [f"s{rnd.randrange(3)}" for _ in range(1200)]
        names = [f"f{i % n_labels}.md" for i in range(1200)]
        rnd.shuffle(names)
        rows, labels = pd.DataFrame({"scope": scopes}), pd.Series(names)
        frame = pd.DataFrame({"scope": rows["scope"].astype(str), "label": labels.astype(str)})
        by_group = [ScopeCount(str(scope), len(group), [(str(k), int(v)) for k, v in
                                                        group["label"].value_counts(sort=True).head(3).items()])
                    for scope, group in frame.groupby("scope", sort=True)]
        assert counts_by_scope(rows, labels) == by_group
