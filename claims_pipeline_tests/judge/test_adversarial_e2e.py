"""The adversarial suite end to end: each scripted answer served by the scripted judge server over real HTTP to the
real anthropic and openai SDKs, through the runner (prompt, provider, lenient parse, one re-ask of a malformed
answer, answer_checks.verify), then the verdict report and its recount. Same expectations as the direct suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claims_pipeline.config.settings import JudgeSettings
from claims_pipeline.judge.figures import figure_hits, normalized, other_figures
from claims_pipeline.judge.model import QUOTED_VERDICTS
from claims_pipeline.judge.providers import make_provider
from claims_pipeline.judge.providers.base import parse_answer
from claims_pipeline.judge.recount import recount_mismatches
from claims_pipeline.judge.report import load_verdicts, write_verdict_report
from claims_pipeline.judge.runner import run_judge
from claims_pipeline_demo.scripted_judge import Answer, ScriptedJudgeServer
from claims_pipeline_tests.support.adversarial_cases import CASES, LEAK_MARKERS

KEY = "sk-adversarial-3b9d"
ENV = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY}


def _served(text: str) -> Answer:
    """A parseable JSON object goes as the answer object (Anthropic then cites the quote, an OpenAI server
    honouring the schema returns its keys); anything else as the raw text a model sent."""
    try:
        parse_answer(text)
        body = json.loads(text)
        if isinstance(body, dict):
            return Answer(body=body)
    except ValueError:
        pass
    return Answer(body=text)


@pytest.fixture(scope="module", params=["anthropic", "openai-compatible"])
def judged(request, tmp_path_factory):
    items, expected = [], {}
    with ScriptedJudgeServer(expected_api_key=KEY) as srv:
        for i, case in enumerate(CASES):
            new_id = f"{case.item.id}#{i}"  # one claim per case, each with its own id
            item = case.item.model_copy(update={"id": new_id})
            text = case.answer.replace(json.dumps(case.item.id), json.dumps(new_id))
            srv.script(new_id, _served(text), _served(text))  # a malformed answer is asked for twice
            b_text = case.b_text.replace(json.dumps(case.item.id), json.dumps(new_id))
            srv.script_b(new_id, _served(b_text), _served(b_text))
            items.append(item)
            expected[new_id] = case
        base = srv.anthropic_url if request.param == "anthropic" else srv.openai_url
        js = JudgeSettings(provider=request.param, base_url=base, request_timeout_s=5.0, max_retries=1, concurrency=4,
                           max_claims_per_run=200, max_cost_usd=50.0)
        run = run_judge(items, make_provider(js, environ=ENV), js, None)
        log = srv.requests()
    return request.param, run, expected, {i.id: i for i in items}, log


def test_every_case_ships_what_the_direct_suite_ships(judged):
    provider, run, expected, items, log = judged
    assert len(run.verdicts) == len(CASES) and run.stopped_by is None
    sent = sum(1 for c in CASES if c.sent)
    assert run.requests_sent == sent and run.unreadable == len(CASES) - sent
    # direction B went over the wire for every would-be-confirmed MATCH, and for none of the others
    b_sent = {r.claim_id for r in log if "ask: direction_b" in json.dumps(r.body)}
    assert run.b_requests_sent == len(b_sent) > 0
    for new_id, case in expected.items():
        if case.b_asked is not None:
            assert (new_id in b_sent) is case.b_asked, (provider, case.name)
    assert {r.claim_id for r in log} <= {i for i, c in expected.items() if c.sent}  # an unreadable page is never sent
    for v in run.verdicts:
        case = expected[v.id]
        checks = [d.check for d in v.downgrades]
        assert v.verdict == case.verdict, (provider, case.name, [d.reason for d in v.downgrades])
        if case.check is None or not case.sent:
            assert checks == [], (provider, case.name, v.downgrades)
        else:
            assert case.check in checks, (provider, case.name, checks)
        assert v.provider == provider and v.id == items[v.id].id and v.source_url == items[v.id].source_url
        for key, want in case.extra.items():
            assert getattr(v, key) == want, (provider, case.name, key)


def test_no_word_of_a_rejected_answer_reaches_the_report(judged, tmp_path: Path):
    _, run, expected, _, _ = judged
    paths = write_verdict_report(run.verdicts, {**run.summary(), "run_at": "2026-12-03T09:00:00Z"}, tmp_path)
    shown = paths["verdicts.md"].read_text(encoding="utf-8") + paths["verdicts.html"].read_text(encoding="utf-8")
    assert [m for m in LEAK_MARKERS if m in shown] == []
    for v in run.verdicts:
        if v.draft is not None and v.verdict == "INDETERMINATE" and any(d.kind == "verdict" for d in v.downgrades):
            assert (v.quote, v.source_says) == ("", "") and v.note.startswith("Set by code"), expected[v.id].name


def test_acceptance_no_quoted_verdict_without_a_verbatim_quote_that_carries_the_figure(judged):
    _, run, _, items, _ = judged
    for v in run.verdicts:
        if v.verdict not in QUOTED_VERDICTS:
            continue
        item = items[v.id]
        assert v.quote and normalized(v.quote) in normalized(item.page_text)
        value = item.values[0]
        if v.verdict == "MATCH":
            assert figure_hits(value, v.quote).strong
        elif v.verdict == "PARTIAL":
            assert figure_hits(value, v.quote).any
        else:
            assert other_figures(value, v.quote)


def test_the_report_shows_every_downgrade_and_recounts_clean(judged, tmp_path: Path):
    provider, run, _, _, _ = judged
    info = {**run.summary(), "run_at": "2026-12-01T18:00:00Z", "prompt_version": "test"}
    paths = write_verdict_report(run.verdicts, info, tmp_path)
    verdicts, counts = load_verdicts(paths["verdicts.json"])
    assert recount_mismatches(verdicts, counts) == []
    assert counts["input_tokens"] == run.input_tokens > 0
    html = paths["verdicts.html"].read_text(encoding="utf-8")
    from claims_pipeline_tests.report.html_text import as_html

    reasons = [d.reason for v in run.verdicts for d in v.downgrades]
    assert len(reasons) >= 35
    for reason in reasons:
        assert as_html(reason) in html
    assert f"provider: {provider}" in html


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
def test_the_projects_own_scripted_judge_never_ships_a_planted_line(provider):
    """The demo's scripted judge answers honestly from the page, so on a page whose only line stating the claim's
    figure was planted for a model it quotes that line: code must not ship it, whichever way the line is worded."""
    from claims_pipeline_tests.support.adversarial_cases import PLANTED, PLANTED_POLITE, PLANTED_SETUP

    items = [PLANTED, PLANTED_POLITE, PLANTED_SETUP]
    with ScriptedJudgeServer(expected_api_key=KEY) as srv:  # the default answerer: the demo's scripted judge
        base = srv.anthropic_url if provider == "anthropic" else srv.openai_url
        js = JudgeSettings(provider=provider, base_url=base, request_timeout_s=5.0, max_retries=1)
        run = run_judge(items, make_provider(js, environ=ENV), js, None)
        said = [r for r in srv.requests("verdict")]
    assert len(said) == 3
    for v in run.verdicts:
        assert v.draft is not None and v.draft.verdict == "MATCH" and "2 %" in v.draft.quote  # it did quote the line
        assert v.verdict == "INDETERMINATE" and v.verification_class != "confirmed", (v.id, v.downgrades)
        assert v.quote == ""
