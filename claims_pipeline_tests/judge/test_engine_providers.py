"""The real anthropic and openai SDKs against the scripted judge server (by base URL, nothing patched)."""

from __future__ import annotations

import logging
import time

import pytest

from claims_pipeline.config.settings import ConfigError, JudgeSettings
from claims_pipeline.judge.cost import price_for
from claims_pipeline.judge.providers import NO_JUDGE_MESSAGE, ProviderError, make_provider
from claims_pipeline.judge.runner import claim_deadline_s, run_judge
from claims_pipeline_demo.scripted_judge import Answer, ScriptedJudgeServer, demo_answerer
from claims_pipeline_tests.judge.engine_helpers import ENV, KEY, item, provider_for, settings_for

PROVIDERS = ["anthropic", "openai-compatible"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_provider_returns_checked_verdicts(provider):
    items = [item(1), item(2, raw="3.5%", claim="The purchaser pays 3.5% of the market value", prior="TOKENS_ABSENT"),
             item(3, raw="12%", claim="Annual rates on villas are 12%", prior="TOKENS_ABSENT")]
    with ScriptedJudgeServer() as srv:
        js = settings_for(srv, provider)
        run = run_judge(items, provider_for(js), js, None)
        every = srv.requests()
        log = srv.requests("verdict")
    by_id = {v.id: v for v in run.verdicts}
    assert [v.id for v in run.verdicts] == [items[1].id, items[2].id, items[0].id]  # TOKENS_ABSENT first
    assert by_id[items[0].id].verdict == "MATCH"
    assert "7.5%" in by_id[items[0].id].quote and by_id[items[0].id].quote in items[0].page_text
    assert by_id[items[1].id].verdict == "MISMATCH" and "2.5%" in by_id[items[1].id].quote
    assert by_id[items[2].id].verdict == "NOT_FOUND"
    for v in run.verdicts:
        assert v.checks_run, "every draft went through answer_checks.verify"
        assert v.provider == provider and v.model == js.effective_model and not v.cached
        assert v.prompt_version and v.judged_at.endswith("Z") and v.page_text_hash == "hash-1"
    # tokens are the server's own counts, cost is tokens x the price table
    assert run.requests_sent == 3 and len(log) == 3
    # the MATCH was confirmed only after direction B was asked for real, over the same wire
    b = [r for r in every if r.kind == "direction_b"]
    assert [r.claim_id for r in b] == [items[0].id] and run.b_requests_sent == 1
    assert by_id[items[0].id].direction_b.result == "pass" and by_id[items[0].id].direction_b.by == "ask"
    assert run.input_tokens == sum(r.input_tokens for r in every) > 0
    assert run.output_tokens == sum(r.output_tokens for r in every) > 0
    price = price_for(js, js.effective_model)
    expected = (run.input_tokens * price.input_per_mtok + run.output_tokens * price.output_per_mtok) / 1e6
    assert run.cost_usd == pytest.approx(expected) and run.cost_usd > 0
    assert sum(v.cost_usd for v in run.verdicts) == pytest.approx(run.cost_usd)
    if provider == "anthropic":  # the page went as a citations-enabled document; spans came back as citations
        doc = log[0].body["messages"][0]["content"][0]
        assert doc["type"] == "document" and doc["citations"] == {"enabled": True}
        spans = by_id[items[0].id].draft.cited_spans
        assert spans and spans[0]["text"] == items[0].page_text[spans[0]["start"]:spans[0]["end"]]
        assert KEY in (log[0].headers.get("x-api-key") or log[0].headers.get("authorization", ""))
    else:  # structured output was asked for, the second ask with its own schema
        assert log[0].body["response_format"]["type"] == "json_schema"
        assert b[0].body["response_format"]["json_schema"]["name"] == "direction_b"


def test_openai_compatible_falls_back_to_plain_json_when_the_schema_is_rejected():
    items = [item(1), item(2)]
    with ScriptedJudgeServer(json_schema_supported=False) as srv:
        js = settings_for(srv, "openai-compatible", concurrency=1)
        prov = provider_for(js)
        run = run_judge(items, prov, js, None)
        log = srv.requests("verdict")
    assert [v.verdict for v in run.verdicts] == ["MATCH", "MATCH"]
    assert [r.status for r in log] == [400, 200, 200]
    assert "response_format" in log[0].body and "response_format" not in log[1].body
    assert "response_format" not in log[2].body  # remembered: the second claim went plain at once
    assert prov.structured is False


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_with_retry_after_is_retried_by_the_sdk_up_to_the_cap(provider):
    it = item(1)
    with ScriptedJudgeServer() as srv:
        srv.script(it.id, Answer(fault="429", retry_after_s=0.2), Answer(fault="429", retry_after_s=0.2))
        js = settings_for(srv, provider, max_retries=2)
        t0 = time.monotonic()
        run = run_judge([it], provider_for(js), js, None)
        took = time.monotonic() - t0
        statuses = [r.status for r in srv.requests("verdict")]
    assert statuses == [429, 429, 200]
    assert run.verdicts[0].verdict == "MATCH"
    assert took >= 0.4  # the Retry-After waits were honoured
    with ScriptedJudgeServer() as srv:  # one retry allowed: the second 429 ends it
        srv.script(it.id, Answer(fault="429", retry_after_s=0.1), Answer(fault="429", retry_after_s=0.1))
        js = settings_for(srv, provider, max_retries=1)
        run = run_judge([it], provider_for(js), js, None)
        statuses = [r.status for r in srv.requests("verdict")]
    assert statuses == [429, 429]
    assert run.verdicts[0].verdict == "INDETERMINATE" and run.failed == 1
    assert "429" in run.verdicts[0].downgrades[0].reason


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_hour_long_retry_after_does_not_hold_the_run(provider):
    it = item(1)
    with ScriptedJudgeServer() as srv:
        srv.script(it.id, Answer(fault="429", retry_after_s=3600))
        js = settings_for(srv, provider, request_timeout_s=0.5, max_retries=1)
        prov = provider_for(js)  # the SDK imported before the clock starts (anthropic's import takes seconds)
        t0 = time.monotonic()
        run = run_judge([it], prov, js, None)
        took = time.monotonic() - t0
    # Anthropic's SDK would wait the hour (the claim's deadline then ended it, reported as a timeout): a wait that
    # does not fit the deadline is not retried, and the 429 is said at once. OpenAI's does not retry past a minute.
    reason = run.verdicts[0].downgrades[0].reason
    assert run.verdicts[0].verdict == "INDETERMINATE"
    assert "429" in reason and "timeout" not in reason
    if provider == "anthropic":
        assert "rate limited (429), retry after 3600 s" in reason
        assert took < claim_deadline_s(js) / 2, took  # not waited out
    assert took <= claim_deadline_s(js) + 2.0 and claim_deadline_s(js) < 10


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500_is_retried_then_answered(provider):
    it = item(1)
    with ScriptedJudgeServer() as srv:
        srv.script(it.id, Answer(fault="500"))
        js = settings_for(srv, provider, max_retries=1)
        run = run_judge([it], provider_for(js), js, None)
        statuses = [r.status for r in srv.requests("verdict")]
    assert statuses == [500, 200] and run.verdicts[0].verdict == "MATCH"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_hung_connection_ends_within_the_timeout_as_indeterminate(provider):
    it = item(1)
    with ScriptedJudgeServer() as srv:
        srv.script(it.id, Answer(fault="hang"), Answer(fault="hang"), Answer(fault="hang"))
        js = settings_for(srv, provider, request_timeout_s=0.5, max_retries=1)
        prov = provider_for(js)
        t0 = time.monotonic()
        run = run_judge([it], prov, js, None)
        took = time.monotonic() - t0
        attempts = srv.count
    assert run.verdicts[0].verdict == "INDETERMINATE"
    assert "timeout" in run.verdicts[0].downgrades[0].reason
    assert attempts == 2  # the first try and one retry, each cut at 0.5 s
    assert 1.0 <= took < 5.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_json_is_asked_once_more_then_indeterminate(provider):
    a, b = item(1), item(2)
    with ScriptedJudgeServer() as srv:
        srv.script(a.id, Answer(fault="malformed"), Answer(fault="malformed"), Answer())
        srv.script(b.id, Answer(fault="malformed"))  # the re-ask is answered properly
        js = settings_for(srv, provider)
        run = run_judge([a, b], provider_for(js), js, None)
        per_id = {i: sum(1 for r in srv.requests("verdict") if r.claim_id == i) for i in (a.id, b.id)}
    got = {v.id: v for v in run.verdicts}
    assert per_id == {a.id: 2, b.id: 2}
    assert got[a.id].verdict == "INDETERMINATE" and "malformed answer" in got[a.id].downgrades[0].reason
    assert got[b.id].verdict == "MATCH"
    assert run.attempts == 4 + run.b_requests_sent and run.failed == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_truncated_output_is_indeterminate_and_says_so(provider):
    it = item(1)
    with ScriptedJudgeServer() as srv:
        srv.script(it.id, Answer(fault="truncated"), Answer(fault="truncated"))
        js = settings_for(srv, provider)
        run = run_judge([it], provider_for(js), js, None)
    v = run.verdicts[0]
    assert v.verdict == "INDETERMINATE" and "truncated answer" in v.downgrades[0].reason
    assert run.output_tokens > 0  # the cut answers were paid for and counted


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_api_key_never_appears_in_logs_errors_or_verdicts(provider, caplog):
    items = [item(1), item(2)]
    caplog.set_level(logging.DEBUG)  # the SDKs' and httpx's debug logs included
    with ScriptedJudgeServer(expected_api_key="the-right-key") as srv:  # answers 401 echoing the key it got
        js = settings_for(srv, provider, concurrency=1)
        run = run_judge(items, provider_for(js), js, None)
        log = srv.requests()
    assert log[0].status == 401 and KEY in (log[0].headers.get("x-api-key") or log[0].headers.get("authorization", ""))
    assert run.stopped_by == "provider_auth" and len(log) == 1  # every later request would fail alike
    assert run.skipped == [items[1].id]
    text = caplog.text + " ".join(v.model_dump_json() for v in run.verdicts) + repr(run.summary())
    assert "401" in text and "[redacted]" in text
    assert KEY not in text


def test_keys_come_from_the_named_environment_variable_only():
    with pytest.raises(ConfigError) as exc:
        make_provider(JudgeSettings(provider="anthropic", api_key_env="MY_JUDGE_KEY"), environ={})
    assert "MY_JUDGE_KEY" in str(exc.value)
    prov = make_provider(JudgeSettings(provider="anthropic", api_key_env="MY_JUDGE_KEY"), environ={"MY_JUDGE_KEY": KEY})
    assert prov.name == "anthropic"
    with pytest.raises(ConfigError) as exc:  # a key pasted where the variable's name goes is refused, not echoed
        from claims_pipeline.config.settings import settings_from_dict

        settings_from_dict({"judge": {"provider": "anthropic", "api_key_env": "sk-ant-api03-abc"}})
    assert "sk-ant" not in str(exc.value) and "judge.api_key_env" in str(exc.value)
    # a local openai-compatible server needs no key
    local = make_provider(JudgeSettings(provider="openai-compatible", base_url="http://127.0.0.1:9/v1"), environ={})
    assert local.name == "openai-compatible"


def test_provider_none_judges_nothing_and_says_how_to_configure():
    prov = make_provider(JudgeSettings(), environ=ENV)
    assert prov.name == "none" and not prov.configured
    assert "judge.provider" in NO_JUDGE_MESSAGE and "judge.api_key_env" in NO_JUDGE_MESSAGE
    with pytest.raises(ProviderError) as exc:
        run_judge([item(1)], prov, JudgeSettings(), None)
    assert str(exc.value) == NO_JUDGE_MESSAGE
    # a dry run still shows what would be sent
    run = run_judge([item(1)], make_provider(JudgeSettings(), environ=ENV), JudgeSettings(), None, dry_run=True)
    # the first ask, and the direction-B ask a TOKENS_PRESENT claim will likely need
    assert run.dry_run and [p.kind for p in run.prompts] == ["verdict", "direction_b"] and run.requests_sent == 0


def test_demo_answerer_answers_from_the_page_it_is_sent():
    with ScriptedJudgeServer(demo_answerer) as srv:
        js = settings_for(srv, "anthropic")
        run = run_judge([item(1, page=PAGE_WITHOUT_FIGURE)], provider_for(js), js, None)
    assert run.verdicts[0].verdict == "NOT_FOUND" and "scripted demo judge" in run.verdicts[0].note


PAGE_WITHOUT_FIGURE = "Inland Revenue\nOpening hours are Monday to Friday.\nContact the office for forms.\n"
