"""The bundled demo corpus through the whole verdict step: fixture web (epoch 2: the levy page changed), priors,
items, the scripted demo judge over HTTP to the real Anthropic SDK, checks, report, recount, corrections applied
with real `git apply` to a copy, and the verdict section added to the audit's own report.html."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from claims_pipeline.commands.demo import write_runtime_config
from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import load_settings
from claims_pipeline.corpus.extract import extract_corpus
from claims_pipeline.judge.corrections import write_corrections
from claims_pipeline.judge.figures import normalized
from claims_pipeline.judge.items import corpus_line, judge_item
from claims_pipeline.judge.model import QUOTED_VERDICTS
from claims_pipeline.judge.providers import make_provider
from claims_pipeline.judge.recount import recount_mismatches, reverify_mismatches
from claims_pipeline.judge.report import (
    SCRIPTED_LABEL,
    append_verdict_section,
    load_verdicts,
    prior_agreement,
    write_verdict_report,
)
from claims_pipeline.judge.runner import run_judge
from claims_pipeline.priors import PriorRules, build_prior
from claims_pipeline.report import write_reports
from claims_pipeline.report.audit import build_audit
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.cache import PageCache
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_demo.scripted_judge import DEMO_ENV, ScriptedJudgeServer, demo_judge_settings
from claims_pipeline_tests.time_scale import scaled


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def test_demo_corpus_verdicts_report_and_corrections(tmp_path: Path):
    with FixtureWeb() as web:
        web.set_epoch(2)
        settings = load_settings(write_runtime_config(tmp_path, f"127.0.0.1:{web.port}"))
        claims = extract_corpus(corpus_source(settings)).claims
        pages = refresh_pages(settings.page_fetching, sorted({c.source_url for c in claims}), cache=PageCache.at(settings.page_cache))
    corpus = Path(settings.extraction.corpus_dir)
    corpus_before = _tree_digest(corpus)
    priors = {c.id: build_prior(c, pages.get(c.source_url), PriorRules.of(settings.priors, settings.fetch)) for c in claims}
    items = [judge_item(c, pages.get(c.source_url), priors[c.id], line_text=corpus_line(corpus, c.file, c.line_no))
             for c in claims]
    with ScriptedJudgeServer() as srv:
        js = demo_judge_settings(srv).model_copy(update={"max_claims_per_run": 500})
        run = run_judge(items, make_provider(js, environ=DEMO_ENV), js, None)
    out = tmp_path / "verdicts"
    # no "scripted" in run_info: the report recognises the demo judge's verdicts and labels them anyway
    paths = write_verdict_report(run.verdicts, {**run.summary(), "run_at": "2026-12-01T18:00:00Z"}, out)
    verdicts, counts = load_verdicts(paths["verdicts.json"])
    assert recount_mismatches(verdicts, counts) == []
    assert reverify_mismatches(verdicts, items) == []  # every stored verdict recomputes from its draft and page
    tampered = [v.model_copy(update={"verdict": "MATCH", "verification_class": "confirmed"}) if v.verdict == "NOT_FOUND" else v
                for v in verdicts]
    assert len(reverify_mismatches(tampered, items)) == counts["by_verdict"]["NOT_FOUND"] > 0
    assert SCRIPTED_LABEL in paths["verdicts.md"].read_text(encoding="utf-8")
    page_of = {i.id: i.page_text for i in items}
    for v in verdicts:
        if v.verdict in QUOTED_VERDICTS:
            assert normalized(v.quote) in normalized(page_of[v.id])
    assert counts["by_verdict"]["MATCH"] >= 3 and counts["by_verdict"]["SOURCE_UNAVAILABLE"] >= 5
    # the scripted judge reads figures with the priors' own readers ("5,80 %" is 5.80%, "€ 1 250" is €1,250): every
    # claim whose figures the priors found on a readable page gets MATCH or PARTIAL, and code refuses none of its answers
    present = [v for v in verdicts if v.prior == "TOKENS_PRESENT"]
    assert len(present) >= 13 and all(v.verdict in ("MATCH", "PARTIAL") for v in present), [
        (v.id, v.verdict) for v in present if v.verdict not in ("MATCH", "PARTIAL")]
    assert [v.id for v in verdicts if any(d.kind == "verdict" for d in v.downgrades)] == []
    # every verdict agrees with its prior, or says why not (the report's prior column)
    for v in verdicts:
        agrees, why = prior_agreement(v)
        assert agrees or why.strip(), v.id
    assert sum(1 for v in verdicts if prior_agreement(v)[0]) == len(verdicts)
    # a MATCH was confirmed only after direction B was asked, and never for a page in another language; a PARTIAL
    # shipped its quote only after direction B was asked too
    for v in verdicts:
        if v.verdict == "MATCH":
            assert (v.direction_a.result, v.direction_b.result, v.direction_b.by) == ("pass", "pass", "ask")
        if v.verdict == "PARTIAL":
            assert (v.direction_b.result, v.direction_b.by) == ("pass", "ask"), v.id
    quoted = counts["by_verdict"]["MATCH"] + counts["by_verdict"].get("PARTIAL", 0)
    assert run.b_requests_sent == quoted > counts["by_verdict"]["MATCH"] > 0

    result = write_corrections(verdicts, corpus, out)
    assert [(c.file, c.figure_before, c.figure_after) for c in result.corrections] == [
        ("countries/xa/playbook.md", "0.8%", "1.1%")]  # the levy page changed at epoch 2: the one real mismatch
    copy = tmp_path / "corpus-copy"
    shutil.copytree(corpus, copy)
    git = lambda *a: subprocess.run(["git", *a], cwd=copy, capture_output=True, text=True, timeout=scaled(60))  # noqa: E731
    assert git("init", "-q").returncode == 0
    check = git("apply", "--check", str(result.patch))
    assert check.returncode == 0, check.stderr
    assert _tree_digest(corpus) == corpus_before  # nothing was written to the corpus
    md = write_verdict_report(verdicts, {**run.summary(), "run_at": "2026-12-01T18:00:00Z"}, out,
                              corrections=result.corrections)["verdicts.md"].read_text(encoding="utf-8")
    assert "countries/xa/playbook.md:18` | MISMATCH | 0.8% | 1.1% |" in md

    audit = build_audit(claims, pages, priors, run_at=datetime(2026, 12, 1, 18, tzinfo=UTC))
    html = write_reports(audit, tmp_path / "audit")["report.html"]
    before = html.read_text(encoding="utf-8")
    assert append_verdict_section(html, verdicts, {**run.summary(), "run_at": "2026-12-01T18:00:00Z"},
                                  corrections=result.corrections) is True
    after = html.read_text(encoding="utf-8")
    assert len(after) > len(before) and after.startswith(before[: before.rindex("</main>")])
    assert after.count("<section id=\"claim-verdicts\">") == 1 and "0.8% of the cadastral value" in after
    assert '<span class="add">- **Annual property levy**: **1.1%** of the cadastral value' in after


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
def test_the_scripted_judge_reads_figures_as_the_priors_do(provider):
    """5.80% is on a page saying "5,80 %", €1,250 on one saying "€ 1 250", and 5 % is not on one saying "4,5 %"."""
    from claims_pipeline.judge.model import JudgeItem

    def it(n: int, claim: str, raw: str, kind: str, page: str) -> JudgeItem:
        return JudgeItem(id=f"xx:{n}:0", scope="xx", line_no=n, source_url=f"http://x.gov.xa/{n}", claim_text=claim,
                         values=[{"type": kind, "raw": raw}], page_text=page, page_text_hash=f"h{n}")

    items = [
        it(1, "Registration duties: 5.80% of the price", "5.80%", "pct",
           "Frais\nLe taux global des droits de mutation est de 5,80 % du prix.\n"),
        it(2, "Notarial deed: registration fee of €1,250 per deed", "€1,250", "money",
           "Fees\nA registration fee of € 1 250 is charged per notarial deed.\n"),
        it(3, "Foreign buyers pay a 5% surcharge on the price", "5%", "pct",
           "Surcharges\nForeign buyers pay a surcharge of 4,5 % on the price.\n"),
    ]
    with ScriptedJudgeServer() as srv:
        js = demo_judge_settings(srv, provider=provider)
        run = run_judge(items, make_provider(js, environ=DEMO_ENV), js, None)
    got = {v.id: v for v in run.verdicts}
    assert got["xx:1:0"].verdict == "PARTIAL"  # the figure, on a page in French: its subject is not read by words
    assert got["xx:2:0"].verdict == "MATCH" and got["xx:2:0"].verification_class == "confirmed"
    assert got["xx:3:0"].verdict == "MISMATCH" and got["xx:3:0"].figure_on_page == "4,5 %"
    assert all(not [d for d in v.downgrades if d.kind == "verdict"] for v in run.verdicts)  # code agreed with each
    assert all("scripted demo judge" in v.note for v in run.verdicts)
