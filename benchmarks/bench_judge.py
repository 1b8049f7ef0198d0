"""Benchmark of the judge engine against the scripted judge server (127.0.0.1 only). Prints:
1. 40 claims judged with the server answering each request after 1 s: wall time ÷ ideal, target ≤ 1.3, where
   the ideal is (the first asks + the direction-B asks the run made) / concurrency × 1 s: a perfect pool that
   sends every request the run needed (each would-be-confirmed MATCH is asked a second time, framed to refute);
2. requests sent on a rerun with nothing changed (either ask), target 0 (the server's own request log);
3. the dry run's token estimate (claims_pipeline.judge.cost: ~4 characters per token) against the tokens the
   server counted by its own method (scripted_server.count_tokens: letter runs, digits and punctuation), for
   the same claims, target within 15 %.
Claims are built from the fixture web's HTML pages (page text as the pipeline extracts it): a figure of the
page (the claim holds) or a figure changed (the claim is wrong), cycled to 40.
Run: .venv/bin/python benchmarks/bench_judge.py [--claims 40] [--concurrency 8] [--delay 1.0]
  [--provider anthropic|openai-compatible|both]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from claims_pipeline.config.settings import JudgeSettings  # noqa: E402
from claims_pipeline.judge.model import JudgeItem  # noqa: E402
from claims_pipeline.judge.providers import make_provider  # noqa: E402
from claims_pipeline.judge.runner import run_judge  # noqa: E402
from claims_pipeline.judge.verdict_cache import VerdictCache  # noqa: E402
from claims_pipeline.web.html_text import html_to_text  # noqa: E402
from claims_pipeline_demo.scripted_judge import ScriptedJudgeServer  # noqa: E402

SITES = REPO / "claims_pipeline_demo" / "fixture_web" / "sites"
FIGURE_RE = re.compile(r"\d+(?:[.,]\d+)?\s?%|\d[\d,.]{2,}\d")
ENV = {"ANTHROPIC_API_KEY": "bench-key", "OPENAI_API_KEY": "bench-key"}


def build_items(n: int) -> list[JudgeItem]:
    pages = []
    for path in sorted(SITES.rglob("*.html")):
        text = html_to_text(path.read_bytes())
        figures = [(m.group(0), text[max(0, m.start() - 80):m.start()]) for m in FIGURE_RE.finditer(text)]
        if figures:
            pages.append((path.relative_to(SITES).as_posix(), text, figures))
    items = []
    for i in range(n):
        name, text, figures = pages[i % len(pages)]
        raw, before = figures[(i // len(pages)) % len(figures)]
        if i % 3 == 2:  # every third claim carries a figure the page does not have
            raw = re.sub(r"\d", lambda m: str((int(m.group(0)) + 3) % 10), raw, count=1)
        words = " ".join(re.findall(r"[^\W\d_]{3,}", before)[-8:])
        kind = "pct" if "%" in raw else "money"
        items.append(JudgeItem(
            id=f"bench:{i + 1}:{i:08x}", scope="bench", file="bench.md", line_no=i + 1,
            source_url=f"https://{name}", claim_text=f"{words}: {raw}", line_text=f"- {words}: **{raw}**",
            values=[{"type": kind, "raw": raw}], prior="TOKENS_ABSENT" if i % 3 == 2 else "TOKENS_PRESENT",
            page_text=text, page_text_hash=f"h{i % len(pages)}",
        ))
    return items


def bench(provider: str, items: list[JudgeItem], concurrency: int, delay: float) -> None:
    with ScriptedJudgeServer(default_delay_s=delay) as srv, tempfile.TemporaryDirectory() as tmp:
        base = srv.anthropic_url if provider == "anthropic" else srv.openai_url
        js = JudgeSettings(provider=provider, base_url=base, concurrency=concurrency, request_timeout_s=30,
                           max_claims_per_run=len(items), max_cost_usd=100)
        cache_path = Path(tmp) / "verdicts.sqlite"
        dry = run_judge(items, make_provider(js, environ=ENV), js, None, dry_run=True)
        assert srv.count == 0, "a dry run sent a request"
        with VerdictCache(cache_path) as cache:
            t0 = time.perf_counter()
            run = run_judge(items, make_provider(js, environ=ENV), js, cache)
            wall = time.perf_counter() - t0
        sent_first = len(srv.requests("verdict"))
        sent_b = len(srv.requests("direction_b"))
        counted_in = sum(r.input_tokens for r in srv.requests("verdict"))
        srv_in_all, srv_out_all = srv.input_tokens, srv.output_tokens
        srv.reset_log()
        with VerdictCache(cache_path) as cache:
            t1 = time.perf_counter()
            rerun = run_judge(items, make_provider(js, environ=ENV), js, cache)
            rewall = time.perf_counter() - t1
        sent_rerun = srv.count
    ideal = (sent_first + sent_b) / concurrency * delay
    verdicts: dict[str, int] = {}
    for v in run.verdicts:
        verdicts[v.verdict] = verdicts.get(v.verdict, 0) + 1
    dev_total = (dry.est_input_tokens + dry.est_output_tokens) / (srv_in_all + srv_out_all) - 1
    print(f"[{provider}] {len(items)} claims, concurrency {concurrency}, server answers after {delay:g} s")
    print(f"  1. wall {wall:.2f} s / ideal {ideal:.2f} s = {wall / ideal:.3f}  (target <= 1.3)  "
          f"requests {sent_first} first + {sent_b} direction B, verdicts {verdicts}")
    print(f"  2. rerun with nothing changed: {sent_rerun} requests (target 0), {rerun.cached} cached, "
          f"wall {rewall:.3f} s")
    dry_first = sum(p.est_input_tokens for p in dry.prompts if p.kind == "verdict")
    dev_in = dry_first / counted_in - 1
    print(f"     direction-B asks: {sent_b} sent, the dry run expected {dry.est_b_requests} (TOKENS_PRESENT claims)")
    print(f"  3. dry-run estimate vs server count (first asks): input {dry_first} vs {counted_in} "
          f"({dev_in:+.1%}, target within 15 %); all asks input+output {dry.est_input_tokens + dry.est_output_tokens} "
          f"vs {srv_in_all + srv_out_all} ({dev_total:+.1%}); est cost ${dry.est_cost_usd:.4f}, "
          f"run cost ${run.cost_usd:.4f} ({js.effective_model})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--claims", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--provider", choices=["anthropic", "openai-compatible", "both"], default="both")
    args = ap.parse_args()
    items = build_items(args.claims)
    for provider in (["anthropic", "openai-compatible"] if args.provider == "both" else [args.provider]):
        bench(provider, items, args.concurrency, args.delay)


if __name__ == "__main__":
    main()
