"""verdicts.md / .html / .json from the adversarial suite's verdicts: every downgrade shown with its reason, hostile
text escaped, the counts recounted another way; the verdict section appended to a real audit report.html."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from claims_pipeline.common.text_safety import UNSAFE_RE
from claims_pipeline.judge.model import Verdict
from claims_pipeline.judge.recount import recount, recount_mismatches
from claims_pipeline.judge.report import (
    SCRIPTED_LABEL,
    _events,
    append_verdict_section,
    load_verdicts,
    no_judge_report,
    validate_appended,
    verdict_counts,
    verification_line,
    write_verdict_report,
)
from claims_pipeline.report import write_reports
from claims_pipeline.report.escape import md_cell
from claims_pipeline_tests.judge.test_adversarial import judged
from claims_pipeline_tests.report.html_text import as_html
from claims_pipeline_tests.support.adversarial_cases import CASES

RUN = {"provider": "anthropic", "model": "claude-haiku-4-5", "prompt_version": "judge-test", "run_at": "2026-12-01T18:00:00Z",
       "input_tokens": 1234, "output_tokens": 567, "cost_usd": 0.0042, "cached": 0}


def suite_verdicts() -> list[Verdict]:
    # the cases share items: each verdict gets its own id, as every claim of a real run has
    out = []
    for i, case in enumerate(CASES):
        v = judged(case)
        out.append(v.model_copy(update={"id": f"{v.id}#{i}", "input_tokens": 100 + i, "output_tokens": 50, "cost_usd": 0.001}))
    return out


@pytest.fixture(scope="module")
def verdicts() -> list[Verdict]:
    return suite_verdicts()


def test_verification_line_has_the_agreed_shape(verdicts):
    line = verification_line(verdict_counts(verdicts))
    assert re.fullmatch(r"checks: (?:[a-z_]+ \d+/\d+(?: \(\d+ failed\))?)(?:, [a-z_]+ \d+/\d+(?: \(\d+ failed\))?)* · "
                        r"\d+ shipped as said(?:, \d+ (?:downgraded|reworded|reclassified|set by code))*", line), line
    counts = verdict_counts(verdicts)
    assert counts["checks"]["quote_verbatim"]["failed"] >= 8 and counts["outcomes"]["downgraded"] >= 20
    assert sum(counts["outcomes"].values()) == counts["total"] == len(CASES)


def test_every_downgrade_appears_in_the_verification_section_with_its_reason(tmp_path: Path, verdicts):
    paths = write_verdict_report(verdicts, RUN, tmp_path)
    md = paths["verdicts.md"].read_text(encoding="utf-8")
    html = paths["verdicts.html"].read_text(encoding="utf-8")
    section_md = md[md.index("## Verification"):md.index("## Claims")]
    section_html = html[html.index("<h2>Verification</h2>"):html.index("<h2>Claims (")]
    n = 0
    for v in verdicts:
        for d in v.downgrades:
            n += 1
            assert md_cell(d.reason, 240) in section_md, d.reason
            assert as_html(d.reason) in section_html, d.reason
    assert n >= 35
    assert f"`{verification_line(verdict_counts(verdicts))}`" in section_md


def test_reports_escape_hostile_model_text(tmp_path: Path, verdicts):
    paths = write_verdict_report(verdicts, RUN, tmp_path)
    html = paths["verdicts.html"].read_text(encoding="utf-8")
    md = paths["verdicts.md"].read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert _events(html).problems == []  # every tag closed, in order
    tags = _Tags()
    tags.feed(html)
    assert {t for t, _ in tags.events} <= {"html", "head", "meta", "title", "style", "body", "main", "section", "h1",
                                            "h2", "div", "wbr", "b", "span", "p", "code", "table", "tr", "th", "td",
                                            "blockquote", "a", "colgroup", "col"}
    assert all(not name.startswith("on") for _, attrs in tags.events for name, _ in attrs)
    assert "<script>" not in md and "\\<script\\>" in md
    doc = paths["verdicts.json"].read_text(encoding="utf-8")
    assert not UNSAFE_RE.search(doc)


def test_rows_do_not_split_on_model_pipes(tmp_path: Path):
    v = suite_verdicts()[0].model_copy(update={"note": "a | b | c", "source_says": "x|y"})
    md = write_verdict_report([v], RUN, tmp_path)["verdicts.md"].read_text(encoding="utf-8")
    claims = md[md.index("## Claims"):].splitlines()
    header = next(line for line in claims if line.startswith("| verdict"))
    row = next(line for line in claims if line.startswith("| MATCH"))
    assert len(re.findall(r"(?<!\\)\|", row)) == len(re.findall(r"(?<!\\)\|", header))


def test_json_round_trips_and_recounts_clean(tmp_path: Path, verdicts):
    paths = write_verdict_report(verdicts, RUN, tmp_path)
    loaded, counts = load_verdicts(paths["verdicts.json"])
    assert loaded == verdicts
    assert recount_mismatches(loaded, counts) == []
    doc = json.loads(paths["verdicts.json"].read_text(encoding="utf-8"))
    assert recount_mismatches(doc["verdicts"], doc["counts"]) == []  # JSON dicts work too
    assert doc["scripted_demo_judge"] is False and doc["run"]["model"] == "claude-haiku-4-5"


def test_recount_catches_a_wrong_count_and_a_broken_verdict(verdicts):
    counts = verdict_counts(verdicts)
    bad = json.loads(json.dumps(counts))
    bad["checks"]["figure_in_quote"]["failed"] -= 1
    bad["by_verdict"]["MATCH"] += 1
    bad["outcomes"]["as_said"] += 1
    problems = recount_mismatches(verdicts, bad)
    assert any(p.startswith("checks.figure_in_quote") for p in problems)
    assert any(p.startswith("by_verdict.MATCH") for p in problems)
    assert any(p.startswith("outcomes.as_said") for p in problems)
    # an engine bug: a MATCH that lost its quote, a MISMATCH whose check failure was ignored, a repeated id
    match = next(v for v in verdicts if v.verdict == "MATCH")
    lowered = next(v for v in verdicts if any(d.check == "figure_in_quote" for d in v.downgrades))
    broken = [match.model_copy(update={"quote": ""}), lowered.model_copy(update={"verdict": "MISMATCH", "verification_class": "corrected"}),
              match.model_copy(update={"quote": ""})]
    problems = recount_mismatches(broken, verdict_counts(broken))
    assert any("shipped without a quote" in p for p in problems)
    assert any("although figure_in_quote failed" in p for p in problems)
    assert any("repeated" in p for p in problems)


def test_recount_derives_outcomes_from_the_fields_not_the_records(verdicts):
    # drop the record of a rewording: the report would call it "as said", the recount sees the text changed
    reworded = next(v for v in verdicts if any(d.check == "causal_wording" and d.kind == "text" for d in v.downgrades)
                    and v.verdict == "MATCH")
    hidden = reworded.model_copy(update={"downgrades": []})
    assert recount([hidden])["outcomes"] == {"reworded": 1}
    assert recount_mismatches([hidden], verdict_counts([hidden]))


def test_scripted_judge_is_labelled(tmp_path: Path, verdicts):
    paths = write_verdict_report(verdicts[:3], {**RUN, "scripted": True}, tmp_path / "s")
    assert SCRIPTED_LABEL in paths["verdicts.md"].read_text(encoding="utf-8")
    assert as_html(SCRIPTED_LABEL) in paths["verdicts.html"].read_text(encoding="utf-8")
    assert json.loads(paths["verdicts.json"].read_text(encoding="utf-8"))["scripted_demo_judge"] is True
    plain = write_verdict_report(verdicts[:3], RUN, tmp_path / "p")
    assert SCRIPTED_LABEL not in plain["verdicts.md"].read_text(encoding="utf-8")


def test_no_judge_report_says_why(tmp_path: Path):
    paths = no_judge_report(tmp_path, "no judge configured: set judge.provider")
    assert "No judge ran" in paths["verdicts.md"].read_text(encoding="utf-8")
    doc = json.loads(paths["verdicts.json"].read_text(encoding="utf-8"))
    assert doc["judged"] is False and doc["verdicts"] == [] and recount_mismatches([], doc["counts"]) == []


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.events: list = []

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        self.events.append((tag, attrs))


def _audit_report(tmp_path: Path) -> Path:
    from claims_pipeline_tests.report.test_report import hostile_audit

    audit, _ = hostile_audit()
    return write_reports(audit, tmp_path / "audit")["report.html"]


def test_append_keeps_the_audit_report_and_adds_one_section(tmp_path: Path, verdicts):
    path = _audit_report(tmp_path)
    original = path.read_text(encoding="utf-8")
    assert append_verdict_section(path, verdicts, RUN) is True
    updated = path.read_text(encoding="utf-8")
    start, end = updated.index("<!-- claim-verdicts:start -->"), updated.index("<!-- claim-verdicts:end -->")
    assert updated[:start] + updated[end + len("<!-- claim-verdicts:end -->\n"):] == original  # nothing else moved
    assert updated.index("</main>") > end and "<script>" not in updated[start:end]
    # a re-run replaces the section instead of adding a second one
    assert append_verdict_section(path, verdicts[:5], RUN) is True
    again = path.read_text(encoding="utf-8")
    assert again.count('<section id="claim-verdicts">') == 1
    tags = _Tags()
    tags.feed(again)
    assert ("section", [("id", "claim-verdicts")]) in tags.events


def test_append_restores_the_original_bytes_when_validation_fails(tmp_path: Path, verdicts):
    path = tmp_path / "report.html"
    # an unterminated comment swallows whatever is inserted before </main>: the section would not be in the DOM
    broken = b"<!DOCTYPE html><html><body><main><p>audit</p><!-- note </main></body></html>\r\n"
    path.write_bytes(broken)
    assert append_verdict_section(path, verdicts, RUN) is False
    assert path.read_bytes() == broken


def test_validation_catches_a_changed_element():
    section = '<section id="claim-verdicts"><p>x</p></section>'
    original = '<html><body><main><div class="a">1</div></main></body></html>'
    good = original.replace("</main>", section + "</main>")
    assert validate_appended(original, good, section) == []
    changed = good.replace('class="a"', 'class="b"')
    assert validate_appended(original, changed, section) == ["the document's existing elements or attributes changed"]
    assert validate_appended(original, good, "<section><p>x</section>")  # an unbalanced section is refused
