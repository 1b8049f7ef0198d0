"""The adversarial suite against checks.verify directly: each scripted answer is parsed as the providers parse it
(providers.base.parse_answer), then checked; the verdict that ships and the check that caught it are asserted."""

from __future__ import annotations

import pytest

from claims_pipeline.judge.checks import verify
from claims_pipeline.judge.figures import figure_hits, normalized, other_figures
from claims_pipeline.judge.model import QUOTED_VERDICTS, JudgeItem, Verdict
from claims_pipeline.judge.providers.base import parse_answer
from claims_pipeline_tests.judge.adversarial_cases import CASES, Case


def judged(case: Case) -> Verdict:
    try:
        draft = parse_answer(case.answer)
    except ValueError as exc:
        return verify(None, case.item, raw_error=f"malformed answer: {exc}")
    return verify(draft, case.item)


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


def test_fabrications_never_ship_their_quote():
    v = judged(next(c for c in CASES if c.name == "fabricated_quote"))
    assert v.quote == "" and v.draft is not None and "all buyers" in v.draft.quote
