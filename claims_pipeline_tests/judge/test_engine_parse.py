"""Lenient, bounded parsing of a model's answer (hostile input), the judge settings, the cost helpers."""

from __future__ import annotations

import json

import pytest

from claims_pipeline.config.settings import ConfigError, JudgeSettings, settings_from_dict
from claims_pipeline.judge.cost import cost_usd, estimate_tokens, price_for
from claims_pipeline.judge.providers.base import MAX_FIELD_CHARS, parse_answer, redact
from claims_pipeline_demo.scripted_judge import count_tokens

GOOD = {
    "id": "ag:1:x", "scope": "ag", "line_no": 1, "source_url": "https://ird.gov.ag/", "verdict": "MATCH",
    "claimed": "7.5%", "source_says": "7.5%", "quote": "is 7.5% payable", "confidence": 0.8, "note": "",
    "direction_a": {"result": "passed", "line": "on the page"}, "direction_b": {"result": "passed", "line": "same tax"},
    "verification_class": "confirmed",
}


def test_an_answer_in_fences_with_prose_around_it_is_read():
    d = parse_answer("Sure, here it is:\n```json\n" + json.dumps(GOOD) + "\n```\nHope this helps {not json}")
    assert d.verdict == "MATCH" and d.quote == "is 7.5% payable" and d.direction_b.result == "pass"


def test_loose_shapes_are_read_as_the_original_schema_allowed():
    loose = {**GOOD, "verdict": " match ", "confidence": "HIGH", "line_no": "1",
             "direction_a": "failed: the figure is absent", "extra_key": [1, 2]}
    d = parse_answer(json.dumps(loose))
    assert d.verdict == "MATCH" and d.confidence == 0.9 and d.line_no == 1
    assert d.direction_a.result == "fail" and d.direction_a.line == "the figure is absent"
    assert parse_answer(json.dumps({**GOOD, "confidence": 7})).confidence == 1.0  # clamped
    assert parse_answer(json.dumps({**GOOD, "confidence": "85%"})).confidence == pytest.approx(0.85)


@pytest.mark.parametrize("text, why", [
    ("", "no JSON object"),
    ("MATCH, trust me", "no JSON object"),
    ('{"verdict": "MATCH", "quote": "cut', "not valid JSON"),
    (json.dumps({**GOOD, "quote": {"text": "x"}}), "object or a list"),
    (json.dumps({**GOOD, "confidence": None}), "not a number"),
    (json.dumps({**GOOD, "confidence": "NaN"}), "not a number"),
    ("{" + " " * 300_000 + "}", "characters"),
])
def test_unusable_answers_raise_with_a_one_line_reason(text, why):
    with pytest.raises(ValueError) as exc:
        parse_answer(text)
    assert why in str(exc.value) and "\n" not in str(exc.value)


def test_a_huge_field_is_cut():
    d = parse_answer(json.dumps({**GOOD, "note": "x" * 50_000}))
    assert len(d.note) == MAX_FIELD_CHARS


def test_redact_hides_the_key():
    assert redact("bad key sk-abc123 sent", "sk-abc123") == "bad key [redacted] sent"


def test_judge_settings_defaults_and_bounds():
    js = JudgeSettings()
    assert js.provider == "none" and js.concurrency == 8 and js.on_schedule is False
    assert js.effective_model == "claude-haiku-4-5" and js.effective_api_key_env == "ANTHROPIC_API_KEY"
    assert 0 < js.request_timeout_s <= 900 and js.max_retries == 2
    for bad in ({"request_timeout_s": float("inf")}, {"request_timeout_s": 0}, {"concurrency": 0},
                {"provider": "gpt"}, {"base_url": "ftp://x"}, {"max_cost_usd": -1}):
        with pytest.raises(ConfigError) as exc:
            settings_from_dict({"judge": bad})
        assert "judge." in str(exc.value)
    s = settings_from_dict({"judge": {"provider": "openai-compatible", "model": "llama3.1:8b",
                                      "base_url": "http://127.0.0.1:11434/v1",
                                      "prices": {"llama3.1:8b": {"input_per_mtok": 0, "output_per_mtok": 0}}}})
    assert s.judge.effective_api_key_env == "OPENAI_API_KEY" and "llama3.1:8b" in s.judge.prices


def test_prices_by_exact_name_then_longest_prefix_else_unknown():
    js = JudgeSettings()
    assert price_for(js, "claude-haiku-4-5").input_per_mtok == 1.0
    dated = price_for(js, "claude-haiku-4-5-20251001")
    assert dated.known and dated.output_per_mtok == 5.0
    assert price_for(js, "gpt-4o-mini-2024-07-18").input_per_mtok == 0.15  # not gpt-4o's price
    local = price_for(js, "qwen2.5:7b")
    assert not local.known and cost_usd(local, 10_000, 10_000) == 0
    assert cost_usd(price_for(js, "claude-haiku-4-5"), 1_000_000, 100_000) == pytest.approx(1.5)


def test_the_estimate_and_the_servers_count_are_independent_but_close_on_prose():
    prose = ("Stamp duty on the transfer of land is 7.5% payable by the vendor; the purchaser pays 2.5% "
             "of the market value, and non-citizens need a licence under CAP. 293. ") * 20
    est, counted = estimate_tokens(prose), count_tokens(prose)
    assert est != counted and abs(est / counted - 1) < 0.25
    assert estimate_tokens("") == 0 and estimate_tokens("税率") == 2  # non-ASCII: one token per character


@pytest.mark.parametrize("direction", [None, "", "yes!!", 42, ["passed"], {"result": "ok", "line": "fine"}, {"line": "x"},
                                       {"result": None}])
def test_an_empty_or_garbled_direction_is_incomplete_never_passed(direction):
    body = {**GOOD, "direction_a": direction}
    if direction is None:
        del body["direction_a"]
    d = parse_answer(json.dumps(body))
    assert d.direction_a.result == "incomplete"


@pytest.mark.parametrize("text, refuted", [
    ('{"id": "a", "refuted": false, "quote": "", "line": "nothing"}', False),
    ('{"id": "a", "refuted": true, "quote": "x"}', True),
    ('{"id": "a", "refuted": "false"}', False),
    ('{"id": "a", "refuted": "perhaps"}', None),
    ('{"id": "a", "refuted": 1}', None),
    ('{"id": "a"}', None),
])
def test_the_direction_b_answer_is_read_strictly(text, refuted):
    from claims_pipeline.judge.providers.base import parse_direction_b

    assert parse_direction_b(text).refuted is refuted
