"""The adversarial suite against answer_checks.verify directly: each scripted answer is parsed as the providers parse it
(providers.base.parse_answer), then checked; the verdict that ships and the check that caught it are asserted."""

from __future__ import annotations

import pytest

from claims_pipeline.judge.answer_checks import verify
from claims_pipeline.judge.figures import figure_hits, normalized, other_figures
from claims_pipeline.judge.model import QUOTED_VERDICTS, DirectionBDraft, JudgeItem, Verdict
from claims_pipeline.judge.providers.base import parse_answer, parse_direction_b
from claims_pipeline_tests.support.adversarial_cases import (
    CASES,
    CUSTOMS_PLANTED_QUOTE,
    EXIT_PLANTED_QUOTE,
    LEAK_MARKERS,
    PLANTED_QUOTE_1,
    PLANTED_QUOTE_2,
    PLANTED_QUOTE_3,
    UNMARKED_QUOTE,
    Case,
)


def judged(case: Case) -> Verdict:
    """As the runner judges: the answer checked; a would-be-confirmed MATCH asked direction B, checked again."""
    try:
        draft = parse_answer(case.answer)
    except ValueError as exc:
        return verify(None, case.item, raw_error=f"malformed answer: {exc}")
    first = verify(draft, case.item)
    if case.b_asked is not None:
        assert first.direction_b_pending is case.b_asked, case.name
    if not first.direction_b_pending:
        return first
    try:
        b = parse_direction_b(case.b_text)
    except ValueError as exc:
        b = DirectionBDraft(error=f"malformed answer: {exc}")
    return verify(draft, case.item, direction_b=b)


def test_the_suite_is_big_enough_and_named_uniquely():
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_adversarial_answer(case: Case):
    v = judged(case)
    assert v.verdict == case.verdict, [d.reason for d in v.downgrades]
    checks = [d.check for d in v.downgrades]
    if case.check is None:
        assert checks == [], v.downgrades
    else:
        assert case.check in checks
        assert all(d.reason for d in v.downgrades)
    # identity always the harness's, whatever the model said
    assert (v.id, v.scope, v.line_no, v.source_url) == (case.item.id, case.item.scope, case.item.line_no, case.item.source_url)
    for key, want in case.extra.items():
        assert getattr(v, key) == want


def _carries_figure(v: Verdict, item: JudgeItem) -> bool:
    value = item.values[0]
    if v.verdict == "MATCH":
        return bool(figure_hits(value, v.quote).strong)
    if v.verdict == "PARTIAL":
        return figure_hits(value, v.quote).any
    return bool(other_figures(value, v.quote))


def test_acceptance_no_quoted_verdict_ships_without_a_verbatim_quote_carrying_the_figure():
    shipped_quoted = 0
    for case in CASES:
        v = judged(case)
        if v.verdict not in QUOTED_VERDICTS:
            continue
        shipped_quoted += 1
        assert v.quote.strip(), case.name
        assert normalized(v.quote) in normalized(case.item.page_text), case.name
        assert case.item.values and _carries_figure(v, case.item), case.name
    assert shipped_quoted >= 10  # the suite also has honest answers that must get through


def test_no_line_planted_for_a_model_ships_as_evidence():
    """Whatever direction B brought back (garbled, silent, a refutation code cannot use), no quoted verdict carries
    a planted line as its quote or as one of its passages."""
    planted = [normalized(q) for q in (UNMARKED_QUOTE, PLANTED_QUOTE_1, PLANTED_QUOTE_2, PLANTED_QUOTE_3,
                                       CUSTOMS_PLANTED_QUOTE, EXIT_PLANTED_QUOTE)]
    tried = 0
    for case in CASES:
        v = judged(case)
        try:
            quoted = normalized(parse_answer(case.answer).quote)
        except ValueError:
            quoted = ""  # a malformed answer quotes nothing
        tried += quoted in planted
        if v.verdict in QUOTED_VERDICTS:
            shown = [normalized(t) for t in (v.quote, *v.passages) if t]
            assert not [p for p in planted if any(p in t or t in p for t in shown)], case.name
    assert tried >= 12  # the suite quotes planted lines often enough for this to mean something


def test_fabrications_never_ship_their_quote():
    v = judged(next(c for c in CASES if c.name == "fabricated_quote"))
    assert v.quote == "" and v.draft is not None and "all buyers" in v.draft.quote


def test_a_rejected_answer_ships_none_of_its_words():
    rejected = [judged(c) for c in CASES if c.name.startswith("rejected_answer")]
    assert len(rejected) == 3
    for v in rejected:
        assert v.verdict == "INDETERMINATE" and v.quote == "" and v.source_says == ""
        assert v.note.startswith("Set by code: the answer failed")
        shown = " ".join([v.quote, v.source_says, v.note, v.claimed, v.direction_a.line, v.direction_b.line,
                          *(f"{d.reason} {d.before} {d.after}" for d in v.downgrades)])
        assert not [m for m in LEAK_MARKERS if m in shown], shown
        assert v.draft is not None and v.draft.source_says  # the debug record keeps what was said


def test_judgment_calls_keep_both_passages_of_the_page():
    for name in ("unmarked_line_against_the_page", "two_figures_for_one_subject"):
        case = next(c for c in CASES if c.name == name)
        v = judged(case)
        assert v.verification_class == "flagged-judgment-call" and len(v.passages) == 2, name
        assert all(normalized(p) in normalized(case.item.page_text) for p in v.passages)
        assert v.passages[0] != v.passages[1]
    planted = judged(next(c for c in CASES if c.name == "unmarked_line_against_the_page"))
    assert "1.5 %" in planted.passages[1] and planted.direction_b.result == "flagged" and planted.direction_b.by == "code"


def test_a_confirmed_match_passed_both_directions_and_the_second_was_asked():
    v = judged(next(c for c in CASES if c.name == "direction_b_ask_not_refuted"))
    assert (v.verdict, v.verification_class) == ("MATCH", "confirmed")
    assert (v.direction_a.result, v.direction_b.result, v.direction_b.by) == ("pass", "pass", "ask")
    assert v.draft_b is not None and v.draft_b.refuted is False
