"""JudgeItems from the demo corpus's records, and the demo judge end to end on them."""

from __future__ import annotations

from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.corpus.extract import extract_corpus
from claims_pipeline.judge.items import corpus_line, judge_item
from claims_pipeline.judge.providers import make_provider
from claims_pipeline.judge.runner import run_judge
from claims_pipeline.store.records import PageState
from claims_pipeline_demo.scripted_judge import DEMO_ENV, DEMO_MODEL, ScriptedJudgeServer, demo_judge_settings


def _page(url: str, text: str) -> PageState:
    return PageState(url=url, fetch_status="OK", http_status=200, content_kind="html", note="",
                     fetched_at="2026-12-01T00:00:00Z", text_hash="th-1", raw_hash="rh-1", text=text,
                     content_changed=False, changed_at=None, stable_since=None, diff=None)


def test_items_from_corpus_records_and_the_demo_judge_on_them():
    settings = settings_from_dict({}, deployment="demo")  # the bundled demo corpus
    claim = next(c for c in extract_corpus(corpus_source(settings)).claims if any(v.type == "pct" for v in c.values))
    line = corpus_line(settings.corpus_dir, claim.file, claim.line_no)
    carrying = next(v for v in claim.values if v.salient and v.type in ("pct", "money", "statute"))
    page = _page(claim.source_url, f"Rates\nThe duty is {carrying.raw} of the declared price.\n")
    it = judge_item(claim, page, "TOKENS_PRESENT", stale_changed=True, line_text=line)
    assert it.id == claim.id and it.values[0].raw == carrying.raw and it.readable and it.stale_changed
    assert line and claim.claim_text.strip()[:20] in line and it.line_text == line
    assert it.page_text_hash == "th-1"
    gone = judge_item(claim, None, "SOURCE_UNAVAILABLE")
    assert not gone.readable and gone.page_text == ""
    assert corpus_line(settings.corpus_dir, claim.file, 10**6) == ""
    with ScriptedJudgeServer() as srv:
        js = demo_judge_settings(srv)
        run = run_judge([it, gone], make_provider(js, environ=DEMO_ENV), js, None)
        # the first ask, then direction B asked for real before the MATCH is confirmed; the unreadable page never
        assert srv.count == 2 and run.requests_sent == 1 and run.b_requests_sent == 1
    judged, unreadable = run.verdicts  # the stale-changed item first
    assert judged.verdict == "MATCH" and judged.model == DEMO_MODEL and unreadable.verdict == "SOURCE_UNAVAILABLE"
    assert carrying.raw in judged.quote and "scripted demo judge" in judged.note
    assert run.cost_usd == 0 and not run.price_known
