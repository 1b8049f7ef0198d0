"""The pure helpers the Dagster UI shows: headline table, flagged claims table, per-scope figures."""

from __future__ import annotations

import re
import subprocess
import sys

from claims_pipeline.report.escape import ZWSP
from claims_pipeline.report.ui_summary import flagged_claims_markdown, headline_markdown, scope_status_rows
from claims_pipeline_tests.report.test_report import unescaped_pipes
from claims_pipeline_tests.report.test_sections import HOSTILE, NEW, OLD, WEAK, scenario


def test_the_helpers_import_no_dagster() -> None:
    code = ("import sys, claims_pipeline.report.ui_summary, claims_pipeline.report.md_tables; "
            "print('dagster' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_headline_markdown_is_a_table_of_the_headline_numbers() -> None:
    audit, _ = scenario()
    audit.scopes_missing = ["xx"]
    assert headline_markdown(audit).splitlines() == [
        "| figure | value |",
        "|---|---|",
        "| claims | 7 |",
        "| flagged | 5 |",
        "| TOKENS\\_ABSENT | 4 |",
        "| CONTENT\\_CHANGED pages | 1 \\(3 claims\\) |",
        "| stale\\_changed | 3 |",
        "| WEAK\\_MATCH | 1 |",
        "| by prior | TOKENS\\_ABSENT 4 · TOKENS\\_PRESENT 2 · WEAK\\_MATCH 1 |",
        "| scopes | 2 \\(1 more in the corpus, not in this audit\\) |",
        "| run | 2026-07-01 09:00:05 UTC |",
    ]


def test_flagged_claims_come_in_triage_order_escaped_and_cut() -> None:
    audit, c = scenario()
    long_claim = "Levy 0.8 %" + HOSTILE * 4  # longer than a UI cell shows
    audit.priors.loc[audit.priors["claim_id"] == c["new_stale"].id, "claim"] = long_claim
    lines = flagged_claims_markdown(audit, limit=50).splitlines()
    assert lines[0] == "| flag | file:line | claim (and the figures missing) | url |"
    rows = lines[2:]
    # a path may wrap after each '/' and before its extension (zero-width spaces)
    flags_and_places = [(r.split(" | ")[0][2:], r.split(" | ")[1].replace(ZWSP, "")) for r in rows]
    assert rows[0].split(" | ")[1] == f"countries/{ZWSP}yy/{ZWSP}playbook{ZWSP}.md{ZWSP}:2"
    # as many rows as the headline's flagged; the WEAK_MATCH claim is not among them
    assert len(rows) == audit.headline["flagged"] == 5
    assert flags_and_places == [
        ("`stale_changed`", "countries/yy/playbook.md:2"),
        ("`stale_changed`", "countries/zz/\\<img src=x onerror=alert\\(4\\)\\>.md:5"),
        ("`stale_changed`", "countries/zz/playbook.md:9"),
        ("`TOKENS_ABSENT`", "countries/yy/playbook.md:7"),
        ("`CONTENT_CHANGED`", "countries/zz/playbook.md:6"),
    ]
    for row in rows:
        assert unescaped_pipes(row) == 5, row  # 4 cells, whatever the claim holds
        cells = row.split("](<")[0]
        assert re.search(r"(?<!\\)[<>]", cells) is None and "javascript" not in cells and "![" not in cells, row
    evil = rows[1].split(" | ")
    claim, missing = evil[2].split(" — **missing:** ")
    assert claim.endswith("…") and len(claim.replace("\\", "")) <= 70  # the claim shortened
    assert missing == "0.8 %"  # the figure missing
    # the url: a label cut to fit that may wrap between its segments, the exact (percent-encoded) target
    label, target = evil[3].split("](<")
    assert label.replace(ZWSP, "") == "[https://www.tax.gov.zz/levy?year=2026\\&kind=\\<b\\>\\|x"
    assert target == "https://www.tax.gov.zz/levy?year=2026&kind=%3Cb%3E%7Cx>) |"
    long_url = OLD + "/" + "section-" * 12
    audit.priors.loc[audit.priors["claim_id"] == c["old_stale"].id, "url"] = long_url
    row = flagged_claims_markdown(audit).splitlines()[4]
    label = row.split(" | ")[3].split("](<")[0][1:].replace(ZWSP, "")
    assert label.endswith("…") and len(label.replace("\\", "")) == 48 and f"(<{long_url}>)" in row


def test_the_weak_match_claims_are_a_list_of_their_own() -> None:
    audit, _ = scenario()
    lines = flagged_claims_markdown(audit, weak_match=True).splitlines()
    assert [r.replace(ZWSP, "").split(" | ")[:2] for r in lines[2:]] == [["| `WEAK_MATCH`", "countries/yy/playbook.md:4"]]
    assert lines[2].split(" | ")[2].endswith(" — **missing:** €300,000") and f"(<{WEAK}>)" in lines[2]


def test_a_cut_table_says_how_many_more_rows_the_report_has() -> None:
    audit, _ = scenario()
    text = flagged_claims_markdown(audit, limit=2)
    assert len([line for line in text.splitlines() if line.startswith("| `")]) == 2
    assert text.endswith("\n\n_…and 3 more rows in the full report (report.md, report.html)_")
    assert "more rows" not in flagged_claims_markdown(audit, limit=5)
    assert flagged_claims_markdown(audit, limit=0) == "_5 rows in the full report (report.md, report.html)_"
    audit.priors = audit.priors[audit.priors["prior"] == "TOKENS_PRESENT"].assign(content_changed=False, stale_changed=False)
    assert flagged_claims_markdown(audit) == "_(none)_"


def test_scope_status_rows_per_scope_including_one_without_claims() -> None:
    audit, _ = scenario()
    audit.scopes = ["xx", "yy", "zz"]  # xx was audited and has no claims
    assert scope_status_rows(audit) == [
        {"scope": "xx", "claims": 0, "flagged": 0, "stale_changed": 0, "tokens_absent": 0, "weak_match": 0,
         "changed_pages": 0},
        {"scope": "yy", "claims": 3, "flagged": 2, "stale_changed": 1, "tokens_absent": 2, "weak_match": 1,
         "changed_pages": 1},
        {"scope": "zz", "claims": 4, "flagged": 3, "stale_changed": 2, "tokens_absent": 2, "weak_match": 0,
         "changed_pages": 1},
    ]
    total = {k: sum(r[k] for r in scope_status_rows(audit)) for k in ("claims", "flagged", "stale_changed", "tokens_absent")}
    h = audit.headline
    assert total == {"claims": h["total"], "flagged": h["flagged"], "stale_changed": h["stale_changed"],
                     "tokens_absent": h["tokens_absent"]}
    assert NEW in set(audit.priors["url"])  # the one changed page both scopes cite


def _verdict(verdict: str, line: int, quote: str = "", note: str = ""):
    from claims_pipeline.judge.model import Verdict

    return Verdict(id=f"xa:{line}:0", scope="xa", file="countries/xa/playbook.md", line_no=line,
                   source_url="http://www.tax.gov.xa/property/annual-levy.html", claim_text=f"Levy **0.8 %** ({line})",
                   source_tier="primary-gov", prior="TOKENS_ABSENT", verdict=verdict, quote=quote, note=note)


def test_verdicts_markdown_lists_the_kinds_asked_mismatch_first_with_their_quotes() -> None:
    from claims_pipeline.report.ui_summary import verdicts_markdown

    verdicts = [_verdict("MATCH", 1, "0.8 %"), _verdict("STALE", 2, "was 0.8 %"),
                _verdict("MISMATCH", 3, "From this year the levy is 1.1 % of the cadastral value" + " and more" * 20),
                _verdict("NOT_FOUND", 4, note="no figure on the page")]
    lines = verdicts_markdown(verdicts, ("MISMATCH", "STALE")).splitlines()
    assert lines[0] == "| verdict | file:line | claim | the page says (quote) |"
    rows = [r.split(" | ") for r in lines[2:]]
    assert [(r[0], r[1].replace(ZWSP, "")) for r in rows] == [("| `MISMATCH`", "countries/xa/playbook.md:3"),
                                            ("| `STALE`", "countries/xa/playbook.md:2")]
    quote = rows[0][3].removesuffix(" |")
    assert quote.startswith("From this year the levy is 1.1 % of the cadastral value") and quote.endswith("…")
    assert len(quote) <= 120
    other = verdicts_markdown(verdicts, ("NOT_FOUND",))
    assert "\\(no figure on the page\\)" in other and "MISMATCH" not in other
    cut = verdicts_markdown(verdicts * 3, ("MISMATCH", "STALE"), limit=4)
    assert cut.endswith("_…and 2 more in verdicts.md / verdicts.html_")
    assert verdicts_markdown(verdicts, ("PARTIAL",)) == "_(none)_"
