"""Judge a worklist: cache first, then the provider with bounded concurrency, every answer through checks.verify.

Order (the caps cut from the end): claims whose page changed after they were verified (stale_changed), then
TOKENS_ABSENT, then WEAK_MATCH, then the rest in the order given (the caller passes the worklist's priority
order). A claim whose page has no readable text never reaches a provider (checks.unreadable_verdict); a cached
answer costs nothing; neither counts against the caps. max_claims_per_run bounds the claims sent; max_cost_usd
is checked before each claim is sent, against what was spent plus the estimate of what is in flight plus this
claim's estimate. Once a cap is hit, every later claim that would need a request is skipped (listed by id).

A malformed or truncated answer is asked again once, then the claim is INDETERMINATE; a request that failed
after the SDK's own retries (429/5xx/timeouts, up to judge.max_retries) is INDETERMINATE and not cached; an
authentication failure stops the run (stopped_by="provider_auth"): every later request would fail alike.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from claims_pipeline.judge import checks
from claims_pipeline.judge.cache import VerdictCache, cache_key
from claims_pipeline.judge.cost import (
    EXPECTED_OUTPUT_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
    Price,
    cost_usd,
    estimate_tokens,
    price_for,
)
from claims_pipeline.judge.model import DraftVerdict, JudgeItem, Verdict
from claims_pipeline.judge.prompt import PROMPT_VERSION, Prompt, build_prompt
from claims_pipeline.judge.providers.base import JudgeProvider, ProviderAnswer, ProviderError, parse_answer
from claims_pipeline.judge.providers.none import NO_JUDGE_MESSAGE
from claims_pipeline.settings import JudgeSettings
from claims_pipeline.web import event_loop

log = logging.getLogger(__name__)

Verifier = Callable[..., Verdict]


@dataclass(frozen=True)
class DryPrompt:
    id: str
    system: str
    user: str
    page_cut: bool
    est_input_tokens: int


@dataclass
class JudgeRun:
    verdicts: list[Verdict] = field(default_factory=list)
    provider: str = ""
    model: str = ""
    requests_sent: int = 0  # claims sent (each may take several HTTP attempts: SDK retries, one re-ask)
    attempts: int = 0  # answers asked for (a malformed answer's re-ask counts)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    price_known: bool = True
    cached: int = 0
    unreadable: int = 0
    failed: int = 0  # claims INDETERMINATE because no usable answer came back
    stopped_by: str | None = None  # None | "max_claims" | "max_cost" | "provider_auth"
    skipped: list[str] = field(default_factory=list)
    dry_run: bool = False
    prompts: list[DryPrompt] = field(default_factory=list)
    est_input_tokens: int = 0
    est_output_tokens: int = 0
    est_cost_usd: float = 0.0
    wall_s: float = 0.0

    def summary(self) -> dict:
        keys = ("provider", "model", "requests_sent", "attempts", "input_tokens", "output_tokens", "cost_usd",
                "price_known", "cached", "unreadable", "failed", "stopped_by", "dry_run", "est_input_tokens",
                "est_output_tokens", "est_cost_usd", "wall_s")
        out = {k: getattr(self, k) for k in keys}
        out["verdicts"] = len(self.verdicts)
        out["skipped"] = len(self.skipped)
        return out


def priority_order(items: Iterable[JudgeItem]) -> list[JudgeItem]:
    def rank(item: JudgeItem) -> int:
        if item.stale_changed:
            return 0
        return {"TOKENS_ABSENT": 1, "WEAK_MATCH": 2}.get(item.prior, 3)

    return sorted(items, key=rank)  # stable: the caller's order within a rank


def estimate_prompt_tokens(prompt: Prompt) -> int:
    return estimate_tokens(prompt.system) + estimate_tokens(prompt.user_text()) + REQUEST_OVERHEAD_TOKENS


def claim_deadline_s(settings: JudgeSettings) -> float:
    """A bound on one claim beyond the SDK's own: the SDK obeys a server's Retry-After however long it is
    (an hour, a day). Two answers at most, each of max_retries + 1 attempts at the request timeout, the SDK's
    backoff between them (0.5 s doubling, 8 s at most), and 2 s of slack."""
    n = settings.max_retries
    backoff = sum(min(0.5 * 2**i, 8.0) for i in range(n))
    return 2 * ((n + 1) * settings.request_timeout_s + backoff + 2.0)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class _Run:
    def __init__(self, provider: JudgeProvider, settings: JudgeSettings, cache: VerdictCache | None,
                 verify: Verifier, unreadable: Callable[[JudgeItem], Verdict]):
        self.provider = provider
        self.settings = settings
        self.cache = cache
        self.verify = verify
        self.unreadable = unreadable
        self.model = provider.model or settings.effective_model
        self.price: Price = price_for(settings, self.model)
        self.out = JudgeRun(provider=provider.name, model=self.model, price_known=self.price.known)
        self.reserved_usd = 0.0  # estimates of the claims in flight

    def _stamp(self, verdict: Verdict, item: JudgeItem, *, in_tok: int, out_tok: int, cached: bool,
               judged_at: str | None = None) -> Verdict:
        return verdict.model_copy(update={
            "provider": self.provider.name, "model": self.model, "input_tokens": in_tok, "output_tokens": out_tok,
            "cost_usd": cost_usd(self.price, in_tok, out_tok), "cached": cached,
            "page_text_hash": item.page_text_hash, "prompt_version": PROMPT_VERSION,
            "judged_at": judged_at or _now(),
        })

    def _admit(self, est_usd: float) -> str | None:
        """Why the next claim may not be sent (None: it may)."""
        if self.out.stopped_by:
            return self.out.stopped_by
        if self.out.requests_sent >= self.settings.max_claims_per_run:
            return "max_claims"
        if self.out.cost_usd + self.reserved_usd + est_usd > self.settings.max_cost_usd:
            return "max_cost"
        return None

    async def _ask(self, prompt: Prompt) -> tuple[DraftVerdict | None, str | None, int, int]:
        """(draft, error, input tokens, output tokens) after at most two answers."""
        in_tok = out_tok = 0
        error = None
        for _ in range(2):  # a malformed or truncated answer is asked once more
            self.out.attempts += 1
            answer: ProviderAnswer = await self.provider.ask(prompt, max_output_tokens=self.settings.max_output_tokens)
            in_tok += answer.input_tokens
            out_tok += answer.output_tokens
            try:
                draft = parse_answer(answer.text)
            except ValueError as exc:
                error = f"malformed answer: {exc}"
                if answer.truncated:
                    error = f"truncated answer (stop reason {answer.stop_reason}): {exc}"
                continue
            if answer.cited_spans:
                draft = draft.model_copy(update={"cited_spans": answer.cited_spans})
            return draft, None, in_tok, out_tok
        return None, error, in_tok, out_tok

    async def judge_one(self, item: JudgeItem, prompt: Prompt, est_usd: float) -> Verdict:
        self.out.requests_sent += 1
        self.reserved_usd += est_usd
        deadline = claim_deadline_s(self.settings)
        in_tok = out_tok = 0
        try:
            draft, error, in_tok, out_tok = await asyncio.wait_for(self._ask(prompt), deadline)
        except ProviderError as exc:
            draft, error = None, f"{exc.kind}: {exc}"
            if exc.kind == "auth":
                self.out.stopped_by = self.out.stopped_by or "provider_auth"
        except TimeoutError:
            draft, error = None, f"timeout: no answer within {deadline:g} s"
        finally:
            self.reserved_usd -= est_usd
        self.out.input_tokens += in_tok
        self.out.output_tokens += out_tok
        self.out.cost_usd += cost_usd(self.price, in_tok, out_tok)
        if draft is None:
            self.out.failed += 1
            log.warning("judge: %s: %s", item.id, error)
            return self._stamp(self.verify(None, item, raw_error=error), item, in_tok=in_tok, out_tok=out_tok,
                               cached=False)
        judged_at = _now()
        if self.cache is not None:
            self.cache.put(cache_key(item.claim_text, item.page_text_hash, self.model, PROMPT_VERSION),
                           claim_id=item.id, model=self.model, prompt_version=PROMPT_VERSION, draft=draft,
                           input_tokens=in_tok, output_tokens=out_tok, judged_at=judged_at)
        # quotes must come from the text the judge was sent (a long page is cut to the prompt's cap)
        return self._stamp(self.verify(draft, item, page_given=prompt.page), item, in_tok=in_tok, out_tok=out_tok,
                           cached=False, judged_at=judged_at)


async def judge_items(items: Iterable[JudgeItem], provider: JudgeProvider, settings: JudgeSettings,
                      cache: VerdictCache | None, *, dry_run: bool = False, verify: Verifier | None = None,
                      unreadable: Callable[[JudgeItem], Verdict] | None = None) -> JudgeRun:
    """Judge the items (see the module doc). Verdicts come back in priority order. With dry_run, no request
    is made: the prompts of the claims that would be sent, and their token and cost estimate."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    run = _Run(provider, settings, cache, verify or checks.verify, unreadable or checks.unreadable_verdict)
    out = run.out
    out.dry_run = dry_run
    ordered = priority_order(items)
    results: dict[int, Verdict] = {}
    pending: list[tuple[int, JudgeItem, Prompt, float]] = []
    est_total_usd = 0.0
    for idx, item in enumerate(ordered):
        if not item.readable:
            out.unreadable += 1
            results[idx] = run._stamp(run.unreadable(item), item, in_tok=0, out_tok=0, cached=False)
            continue
        hit = cache.get(cache_key(item.claim_text, item.page_text_hash, run.model, PROMPT_VERSION)) if cache else None
        if hit is not None:
            out.cached += 1
            draft = hit.draft
            if hit.claim_id != item.id and draft.id == hit.claim_id:
                # the same claim text on the same page under another id (a line moved, a claim repeated): the
                # answer copied its own claim's identity right, so it stands for this one's
                draft = draft.model_copy(update={"id": item.id, "scope": item.scope, "line_no": item.line_no,
                                                 "source_url": item.source_url})
            page_given = build_prompt(item, settings.max_page_chars).page  # the text that answer was given
            results[idx] = run._stamp(run.verify(draft, item, page_given=page_given), item, in_tok=0, out_tok=0,
                                      cached=True, judged_at=hit.judged_at)
            continue
        prompt = build_prompt(item, settings.max_page_chars)
        est_in = estimate_prompt_tokens(prompt)
        est_usd = cost_usd(run.price, est_in, EXPECTED_OUTPUT_TOKENS)
        if dry_run:  # the caps apply to the estimate as they would to the run
            if len(out.prompts) >= settings.max_claims_per_run:
                out.stopped_by = out.stopped_by or "max_claims"
            elif est_total_usd + est_usd > settings.max_cost_usd:
                out.stopped_by = out.stopped_by or "max_cost"
            if out.stopped_by:
                out.skipped.append(item.id)
                continue
            est_total_usd += est_usd
            out.prompts.append(DryPrompt(item.id, prompt.system, prompt.user_text(), prompt.page_cut, est_in))
            out.est_input_tokens += est_in
            out.est_output_tokens += EXPECTED_OUTPUT_TOKENS
            continue
        pending.append((idx, item, prompt, est_usd))
    out.est_cost_usd = cost_usd(run.price, out.est_input_tokens, out.est_output_tokens)
    if dry_run or not pending:
        out.verdicts = [results[i] for i in sorted(results)]
        out.wall_s = loop.time() - t0
        return out
    if not provider.configured:
        raise ProviderError("config", NO_JUDGE_MESSAGE)

    queue: asyncio.Queue[tuple[int, JudgeItem, Prompt, float]] = asyncio.Queue()
    for entry in pending:
        queue.put_nowait(entry)

    async def worker() -> None:
        while True:
            try:
                idx, item, prompt, est_usd = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            why = run._admit(est_usd)  # claims leave the queue in priority order: the caps cut from the end
            if why:
                out.stopped_by = out.stopped_by or why
                out.skipped.append(item.id)
                continue
            results[idx] = await run.judge_one(item, prompt, est_usd)

    await asyncio.gather(*(worker() for _ in range(min(settings.concurrency, len(pending)))))
    position = {it.id: n for n, it in enumerate(ordered)}
    out.skipped.sort(key=lambda i: position.get(i, 0))
    out.verdicts = [results[i] for i in sorted(results)]
    out.wall_s = loop.time() - t0
    return out


def run_judge(items: Iterable[JudgeItem], provider: JudgeProvider, settings: JudgeSettings,
              cache: VerdictCache | None, *, dry_run: bool = False, **kwargs) -> JudgeRun:
    """Sync wrapper of judge_items; closes the provider's HTTP client at the end."""

    async def main() -> JudgeRun:
        try:
            return await judge_items(items, provider, settings, cache, dry_run=dry_run, **kwargs)
        finally:
            await provider.aclose()

    # the same loop runner as the fetch: a stop (SIGINT, SIGTERM, a Dagster termination) cancels the requests
    return event_loop.run(main(), "asyncio")
