"""Reports: report.md layout, report.json, parquet round trip, and report.html escaping of hostile input."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from claims_pipeline.priors import build_prior
from claims_pipeline.report import write_reports
from claims_pipeline.report.audit import Audit, build_audit, headline_numbers
from claims_pipeline.report.escape import ZWSP, url_break_points
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value

RUN_AT = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
GOOD = "https://www.impots.gouv.fr/dmto"
EVIL_PAGE = "https://www.evil.gouv.fr/page"
JS_URL = "javascript:alert(1)"

HOSTILE_TEXT = (
    FILLER
    + '<script>alert("page")</script> "><img src=x onerror=alert(1)> <a href="javascript:alert(2)">x</a> '
    + "The DMTO rate is 6,32 % | injected | cell | and **bold** [link](javascript:alert(3)) "
    + FILLER
)


def hostile_audit() -> tuple[Audit, list]:
    claims = [
        claim(
            'DMTO <b>6.32 %</b> | pipe | "><img src=x onerror=alert(9)> [x](javascript:alert(4))',
            [value("pct", "6.32 %")],
            url=EVIL_PAGE,
            line_no=7,
            last_verified="2026-05-01",
        ),
        claim("Fee **€77,700** <script>alert(5)</script>", [value("money", "€77,700")], url=GOOD, line_no=8),
        claim("Rate 2.5 % via a script link", [value("pct", "2.5 %")], url=JS_URL, line_no=9, scope="shared/home-tax"),
    ]
    pages = {
        EVIL_PAGE: page(
            EVIL_PAGE,
            HOSTILE_TEXT,
            content_changed=True,
            changed_at="2026-06-15T00:00:00+00:00",
            diff='-old <script>alert("diff")</script>\n+new "><img src=x onerror=alert(6)>',
        ),
        GOOD: page(GOOD, FILLER * 3),
        JS_URL: page(JS_URL, None, status="REFUSED", note='refused <img src=x onerror=alert(7)>'),
    }
    priors = {c.id: build_prior(c, pages.get(c.source_url), rules_of()) for c in claims}
    return build_audit(claims, pages, priors, run_at=RUN_AT), claims


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        self.tags.append((tag, attrs))


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "div", "section", "b", "span", "svg",
    "rect", "text", "table", "tr", "th", "td", "article", "code", "blockquote", "mark", "details", "summary",
    "pre", "a", "p", "wbr", "colgroup", "col",
}


def test_html_escapes_everything_from_pages_and_corpus(tmp_path: Path) -> None:
    audit, _ = hostile_audit()
    paths = write_reports(audit, tmp_path, previous_run="2026-06-01T09:00:00+00:00")
    doc = paths["report.html"].read_text(encoding="utf-8")
    collector = TagCollector()
    collector.feed(doc)
    tags = {t for t, _ in collector.tags}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS  # no <script>, <img>, <iframe> … got through
    for tag, attrs in collector.tags:
        for name, val in attrs:
            assert not name.startswith("on"), (tag, name)
            if name == "href":
                assert val is not None and re.match(r"https?://", val), val
    hrefs = [v for t, a in collector.tags if t == "a" for n, v in a if n == "href"]
    assert sorted(set(hrefs)) == sorted([EVIL_PAGE, GOOD])  # the javascript: source is shown as text only
    assert "javascript:alert(1)" in doc and "&lt;script&gt;" in doc and "&lt;img src=x onerror" in doc
    # the matched figure is highlighted inside its excerpt
    assert "<mark>6,32 %</mark>" in doc
    # the diff is shown, escaped, with its lines classed
    assert '<span class="del">-old &lt;script&gt;' in doc


def test_html_orders_stale_first_and_is_self_contained(tmp_path: Path) -> None:
    audit, _ = hostile_audit()
    doc = write_reports(audit, tmp_path)["report.html"].read_text(encoding="utf-8")
    assert (doc.index("Re-verify first") < doc.index("Cited page CHANGED") < doc.index("TOKENS_ABSENT (1)")
            < doc.index("WEAK_MATCH (0)") < doc.index("Not readable"))
    assert "<svg" in doc and "Priors by scope" in doc
    assert "<link" not in doc and "@import" not in doc and "url(" not in doc


def md_label(url: str) -> str:
    """A URL as report.md labels its link: a zero-width space where a line may break (escape.md_link)."""
    return ZWSP.join(url_break_points(url))


def md_rows(md: str, heading_start: str) -> list[str]:
    lines = md.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(heading_start))
    rows = []
    for line in lines[i + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append(line)
    return rows


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_sections_tables_and_escaping(tmp_path: Path) -> None:
    audit, _ = hostile_audit()
    md = write_reports(audit, tmp_path, previous_run="2026-06-01")["report.md"].read_text(encoding="utf-8")
    heads = [line for line in md.splitlines() if line.startswith("#")]
    assert heads == [
        "# Source-content audit (deterministic — no LLM)",
        "## Prior breakdown",
        "## ⚠️ Source changed AFTER its `Last verified` date (re-verify first)",
        "## Cited page CHANGED (1 page · 1 claim)",
        "## Figure NOT on cited page — `TOKENS_ABSENT` (1)",
        "## Figures only partly on cited page — `WEAK_MATCH` (0)",
        "## PDF with no text layer (0)  ·  Source unavailable (1)  ·  Binary source (0)",
    ]
    assert "Run: 2026-07-01 09:00:00 UTC  ·  previous run: 2026-06-01 00:00:00 UTC" in md
    assert "Claims checked: 3  ·  flagged: 2" in md
    assert "> **These are tripwires, not verdicts.**" in md
    assert "- SOURCE_UNAVAILABLE: 1" in md and "- TOKENS_ABSENT: 1" in md and "- TOKENS_PRESENT: 1" in md
    stale = md_rows(md, "## ⚠️")
    assert stale[0] == "| scope | where | claim | verified | changed (UTC) | change shown | url |"
    assert stale[1] == "|---|---|---|---|---|---|---|"
    row = stale[2]
    assert unescaped_pipes(row) == 8  # 7 cells: the claim's own pipes are escaped
    assert row.startswith("| `fr` | `countries/fr/playbook.md:7` | ") and "| 2026-05-01 |" in row
    assert "\\<b\\>" in row and re.search(r"(?<!\\)[<>]", row.split("](<")[0]) is None  # no raw markup survives
    assert row.endswith(f"| [{md_label(EVIL_PAGE)}](<{EVIL_PAGE}>) |")  # the URL cell is an explicit link
    assert "javascript" not in row and "x | 2026-05-01" in row  # a link in a claim shows as its label
    assert "| 2026-06-15 00:00:00 UTC | shown in this report |" in row
    absent = md_rows(md, "## Figure NOT")
    assert absent[0] == "| scope | where | claim | missing | verified | url |"
    assert "€77,700" in absent[2] and "\\<script\\>" in absent[2] and re.search(r"(?<!\\)[<>]", absent[2].split("](<")[0]) is None
    assert "| Fee €77,700 \\<script\\>" in absent[2] and "*" not in absent[2]  # bold shows as plain text
    assert md_rows(md, "## Cited page")[2].startswith("| `fr` | `countries/fr/playbook.md:7` | ")


def test_markdown_empty_tables(tmp_path: Path) -> None:
    c = claim("DMTO 6.32 %", [value("pct", "6.32 %")], url=GOOD)
    pages = {GOOD: page(GOOD, FILLER + "6,32 %" + FILLER)}
    audit = build_audit([c], pages, {c.id: build_prior(c, pages[GOOD], rules_of())}, run_at=RUN_AT)
    md = write_reports(audit, tmp_path)["report.md"].read_text(encoding="utf-8")
    assert md.count("_(none)_") == 5  # stale, changed, absent, weak, unreadable
    assert "previous run: (none)" in md and "flagged: 0" in md


def test_json_and_parquet_round_trip(tmp_path: Path) -> None:
    audit, _ = hostile_audit()
    paths = write_reports(audit, tmp_path)
    assert set(paths) == {"report.md", "report.json", "report.html", "claims.parquet", "pages.parquet", "priors.parquet"}
    doc = json.loads(paths["report.json"].read_text(encoding="utf-8"))
    assert doc["headline"] == audit.headline and doc["flagged"] == 2 and doc["total"] == 3
    assert [r["line_no"] for r in doc["stale_changed"]] == [7]
    assert doc["tokens_absent"][0]["missing"] == ["€77,700"]
    tables = {n: pd.read_parquet(paths[f"{n}.parquet"]) for n in ("claims", "pages", "priors")}
    assert headline_numbers(tables["claims"], tables["pages"], tables["priors"]) == doc["headline"]
    again = Audit.from_tables(tables["claims"], tables["pages"], tables["priors"], run_at=audit.run_at, headline=doc["headline"])
    out2 = tmp_path / "again"
    write_reports(again, out2)
    assert (out2 / "report.md").read_text(encoding="utf-8") == paths["report.md"].read_text(encoding="utf-8")


def test_no_report_carries_a_raw_control_or_bidi_override(tmp_path: Path) -> None:
    """ESC/BEL/C1 controls and bidi overrides from the corpus, a URL or a page never reach a report raw: a
    terminal showing report.md would obey them, and an override makes a line read backwards."""
    nasty = "\x1b]0;owned\x07 \x1b[2J \x9b31m \u202eevil\u202c \u2066iso\u2069"
    url = "https://www.evil.gouv.fr/p\x1b[31m"
    claims = [claim(f"DMTO 6.32 % {nasty}", [value("pct", "6.32 %")], url=url, line_no=3)]
    pages = {url: page(url, FILLER + f" the rate is 7 % {nasty} " + FILLER, content_changed=True,
                       changed_at="2026-06-15T00:00:00+00:00", diff=f"-old {nasty}\n+new")}
    priors = {c.id: build_prior(c, pages.get(c.source_url), rules_of()) for c in claims}
    paths = write_reports(build_audit(claims, pages, priors, run_at=RUN_AT), tmp_path)
    unsafe = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    for name in ("report.md", "report.html", "report.json"):
        doc = paths[name].read_text(encoding="utf-8")
        assert "evil" in doc and not unsafe.search(doc), (name, unsafe.findall(doc))
    md, html_doc = paths["report.md"].read_text(encoding="utf-8"), paths["report.html"].read_text(encoding="utf-8")
    assert "\ufffd]0;owned\ufffd" in md.replace("\\", "") and "\ufffdevil\ufffd" in html_doc
    # report.json keeps the data exactly, as JSON escapes
    def strings(node):  # noqa: ANN001, ANN202
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for v in node.values():
                yield from strings(v)
        elif isinstance(node, list):
            for v in node:
                yield from strings(v)

    data = json.loads(paths["report.json"].read_text(encoding="utf-8"))
    assert any(nasty in text for text in strings(data)) and url in set(strings(data))


def test_two_files_of_one_scope_citing_a_changed_page_on_the_same_line_are_two_rows(tmp_path: Path) -> None:
    """report.md merged rows by (scope, line, url) and said 1 where every other output said 2."""
    url = "https://www.tax.gov.zz/levy"
    claims = [claim("Levy 0.8 %", [value("pct", "0.8 %")], url=url, scope="zz", line_no=5, file=f)
              for f in ("countries/zz/a.md", "countries/zz/sub/b.md")]
    pages = {url: page(url, FILLER + "The levy is 1.1 %. " + FILLER, content_changed=True,
                       changed_at="2026-06-15T00:00:00+00:00", diff="-0.8 %\n+1.1 %")}
    priors = {c.id: build_prior(c, pages[url], rules_of()) for c in claims}
    audit = build_audit(claims, pages, priors, run_at=RUN_AT)
    assert audit.headline["content_changed"] == 2 and audit.headline["flagged"] == 2
    md = write_reports(audit, tmp_path)["report.md"].read_text(encoding="utf-8")
    assert "## Cited page CHANGED (1 page · 2 claims)" in md
    rows = md_rows(md, "## Cited page")[2:]
    assert [r.split(" | ")[1] for r in rows] == ["`countries/zz/a.md:5`", "`countries/zz/sub/b.md:5`"]


def test_binary_sources_are_listed(tmp_path: Path) -> None:
    url = "https://www.tax.gov.zz/form.zip"
    c = claim("Form fee 1.5 %", [value("pct", "1.5 %")], url=url, scope="zz", line_no=3)
    pages = {url: page(url, None, status="BINARY", note="application/zip")}
    audit = build_audit([c], pages, {c.id: build_prior(c, pages[url], rules_of())}, run_at=RUN_AT)
    paths = write_reports(audit, tmp_path)
    md = paths["report.md"].read_text(encoding="utf-8")
    assert "Binary source (1)" in md
    assert f"| `zz` | `countries/zz/playbook.md:3` | `SOURCE_BINARY` | application/zip | [{md_label(url)}](<{url}>) |" in md
    doc = json.loads(paths["report.json"].read_text(encoding="utf-8"))
    assert [r["url"] for r in doc["source_binary"]] == [url]


def test_chart_keeps_the_scopes_with_figures_absent_and_says_how_many_it_left_out() -> None:
    from claims_pipeline.report.chart import priors_by_scope_svg

    rows = [{"scope": f"s{i:03d}", "prior": "TOKENS_PRESENT"} for i in range(70)]
    rows += [{"scope": "s069", "prior": "TOKENS_ABSENT"}]  # the last scope by name has a flag
    svg = priors_by_scope_svg(pd.DataFrame(rows), max_scopes=60)
    drawn = re.findall(r'text-anchor="end">(s\d{3})<', svg)
    assert len(drawn) == 60 and "s069" in drawn and drawn == sorted(drawn)
    assert "10 more scopes not drawn" in svg
    assert "not drawn" not in priors_by_scope_svg(pd.DataFrame(rows[:5]), max_scopes=60)
