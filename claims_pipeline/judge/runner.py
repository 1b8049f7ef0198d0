"""Judge a worklist: cache first, then the provider with bounded concurrency, every answer through answer_checks.verify.

Order (the caps cut from the end): claims whose page changed after they were verified (stale_changed), then
TOKENS_ABSENT, then WEAK_MATCH, then the rest in the order given (the caller passes the worklist's priority
order). A claim whose page has no readable text never reaches a provider (answer_checks.unreadable_verdict); a cached
answer costs nothing; neither counts against the caps. max_claims_per_run bounds the claims sent; max_cost_usd
is checked before each claim is sent, against what was spent plus the estimate of what is in flight plus this
claim's estimate. Once a cap is hit, every later claim that would need a request is skipped (listed by id). When
no cap can cut the run, the claims likely to need a second ask are sent first (the verdicts keep the order).

Direction B: an answer that would ship its quote as evidence (MATCH or PARTIAL) is asked once more,
independently, framed to refute (prompt.build_direction_b_prompt); the answer goes back through answer_checks.verify.
Its tokens and cost count on the claim's verdict and against max_cost_usd (the admission of a TOKENS_PRESENT claim
reserves its likely second ask), and its answer is cached apart (prompt.DIRECTION_B_VERSION). A second ask the
cost cap leaves unasked makes direction B incomplete: the claim ships INDETERMINATE, its quote unshipped.

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
from typing import Any

from claims_pipeline.config.settings import JudgeSettings
from claims_pipeline.judge import answer_checks
from claims_pipeline.judge.cost import (
    EXPECTED_B_OUTPUT_TOKENS,
    EXPECTED_OUTPUT_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
    Price,
    cost_usd,
    estimate_tokens,
    price_for,
)
from claims_pipeline.judge.model import DirectionBDraft, DraftVerdict, JudgeItem, Verdict
from claims_pipeline.judge.prompt import (
    DIRECTION_B_VERSION,
    PROMPT_VERSION,
    Prompt,
    build_direction_b_prompt,
    build_prompt,
)
from claims_pipeline.judge.providers.base import (
    JudgeProvider,
    ProviderAnswer,
    ProviderError,
    parse_answer,
    parse_direction_b,
)
from claims_pipeline.judge.providers.none import NO_JUDGE_MESSAGE
from claims_pipeline.judge.verdict_cache import CachedAnswer, VerdictCache, cache_key
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
    kind: str = "verdict"


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
    b_requests_sent: int = 0  # direction-B asks sent (each a second request for a claim)
    b_cached: int = 0  # direction-B answers read from the cache
    b_unasked: int = 0  # direction-B asks the cost cap left unasked (those claims ship INDETERMINATE)
    unreadable: int = 0
    failed: int = 0  # claims INDETERMINATE because no usable answer came back
    stopped_by: str | None = None  # None | "max_claims" | "max_cost" | "provider_auth"
    skipped: list[str] = field(default_factory=list)
    dry_run: bool = False
    prompts: list[DryPrompt] = field(default_factory=list)
    est_input_tokens: int = 0
    est_output_tokens: int = 0
    est_cost_usd: float = 0.0
    est_b_requests: int = 0  # dry run: direction-B asks expected (TOKENS_PRESENT claims, and cached MATCHes)
    wall_s: float = 0.0

    def summary(self) -> dict:
        keys = ("provider", "model", "requests_sent", "attempts", "input_tokens", "output_tokens", "cost_usd",
                "price_known", "cached", "b_requests_sent", "b_cached", "b_unasked", "unreadable", "failed",
                "stopped_by", "dry_run", "est_input_tokens", "est_output_tokens", "est_cost_usd", "est_b_requests",
                "wall_s")
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


def likely_direction_b(item: JudgeItem) -> bool:
    """Will this claim probably need the direction-B ask? Every answer that would ship a quote as MATCH or PARTIAL
    does (a secondary source's too), and the claims whose figures the priors found are the ones a judge supports."""
    return item.prior == "TOKENS_PRESENT"


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

    async def _ask(self, prompt: Prompt, parse: Callable[[str], Any] = parse_answer) -> tuple[Any, str | None, int, int]:
        """(draft, error, input tokens, output tokens) after at most two answers."""
        in_tok = out_tok = 0
        error = None
        for _ in range(2):  # a malformed or truncated answer is asked once more
            self.out.attempts += 1
            answer: ProviderAnswer = await self.provider.ask(prompt, max_output_tokens=self.settings.max_output_tokens)
            in_tok += answer.input_tokens
            out_tok += answer.output_tokens
            try:
                draft = parse(answer.text)
            except ValueError as exc:
                error = f"malformed answer: {exc}"
                if answer.truncated:
                    error = f"truncated answer (stop reason {answer.stop_reason}): {exc}"
                continue
            if answer.cited_spans and isinstance(draft, DraftVerdict):
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
        verdict = self.verify(draft, item, page_given=prompt.page)
        if verdict.direction_b_pending:
            verdict, b_in, b_out = await self.settle_direction_b(item, draft, prompt.page)
            in_tok, out_tok = in_tok + b_in, out_tok + b_out
        return self._stamp(verdict, item, in_tok=in_tok, out_tok=out_tok, cached=False, judged_at=judged_at)

    def b_key(self, item: JudgeItem) -> str:
        return cache_key(item.claim_text, item.page_text_hash, self.model, DIRECTION_B_VERSION)

    async def settle_direction_b(self, item: JudgeItem, draft: DraftVerdict, page_given: str) -> tuple[Verdict, int, int]:
        """The direction-B answer (cached, or asked now within the cost cap) and the verdict checked with it;
        with the tokens the ask cost."""
        hit = self.cache.get_b(self.b_key(item)) if self.cache is not None else None
        in_tok = out_tok = 0
        if hit is not None:
            self.out.b_cached += 1
            b = hit.draft
        else:
            prompt = build_direction_b_prompt(item, self.settings.max_page_chars)
            est_usd = cost_usd(self.price, estimate_prompt_tokens(prompt), EXPECTED_B_OUTPUT_TOKENS)
            if self.out.stopped_by == "provider_auth":
                b = DirectionBDraft(error="not asked: the provider refused the key")
            elif self.out.cost_usd + self.reserved_usd + est_usd > self.settings.max_cost_usd:
                self.out.b_unasked += 1
                self.out.stopped_by = self.out.stopped_by or "max_cost"
                b = DirectionBDraft(error="not asked: judge.max_cost_usd reached")
            else:
                self.out.b_requests_sent += 1
                self.reserved_usd += est_usd
                error = None
                unusable = False  # the model answered, twice, with nothing parseable
                try:
                    got, error, in_tok, out_tok = await asyncio.wait_for(self._ask(prompt, parse_direction_b),
                                                                         claim_deadline_s(self.settings))
                    unusable = got is None
                except ProviderError as exc:
                    got, error = None, f"{exc.kind}: {exc}"
                    if exc.kind == "auth":
                        self.out.stopped_by = self.out.stopped_by or "provider_auth"
                except TimeoutError:
                    got, error = None, "timeout"
                finally:
                    self.reserved_usd -= est_usd
                self.out.input_tokens += in_tok
                self.out.output_tokens += out_tok
                self.out.cost_usd += cost_usd(self.price, in_tok, out_tok)
                if got is None:
                    log.warning("judge: %s: direction B: %s", item.id, error)
                    b = DirectionBDraft(error=error or "no answer")
                else:
                    b = got
                # an unparseable answer is the model's answer for this page: kept (incomplete) like a parsed one,
                # so a rerun does not pay for it again; a timeout or transport error is asked again next run
                if (got is not None or unusable) and self.cache is not None:
                    self.cache.put_b(self.b_key(item), claim_id=item.id, model=self.model,
                                     prompt_version=DIRECTION_B_VERSION, draft=b, input_tokens=in_tok,
                                     output_tokens=out_tok, judged_at=_now())
        return self.verify(draft, item, page_given=page_given, direction_b=b), in_tok, out_tok


_Pending = tuple[int, JudgeItem, Prompt, float]  # (position, item, prompt, estimated cost): a first ask to send
_BOnly = tuple[int, JudgeItem, DraftVerdict, str, str]  # a cached first answer whose direction B is still to ask


async def judge_items(items: Iterable[JudgeItem], provider: JudgeProvider, settings: JudgeSettings,
                      cache: VerdictCache | None, *, dry_run: bool = False, verify: Verifier | None = None,
                      unreadable: Callable[[JudgeItem], Verdict] | None = None) -> JudgeRun:
    """Judge the items (see the module doc). Verdicts come back in priority order. With dry_run, no request
    is made: the prompts of the claims that would be sent, and their token and cost estimate."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    run = _Run(provider, settings, cache, verify or answer_checks.verify, unreadable or answer_checks.unreadable_verdict)
    out = run.out
    out.dry_run = dry_run
    ordered = priority_order(items)
    results: dict[int, Verdict] = {}
    pending, b_only = _plan(run, ordered, results, dry_run=dry_run)
    out.est_cost_usd = cost_usd(run.price, out.est_input_tokens, out.est_output_tokens)
    if not dry_run and (pending or b_only):
        if not provider.configured:
            raise ProviderError("config", NO_JUDGE_MESSAGE)
        await _send(run, pending, b_only, results)
        position = {it.id: n for n, it in enumerate(ordered)}
        out.skipped.sort(key=lambda i: position.get(i, 0))
    out.verdicts = [results[i] for i in sorted(results)]
    out.wall_s = loop.time() - t0
    return out


def _plan(run: _Run, ordered: list[JudgeItem], results: dict[int, Verdict], *,
          dry_run: bool) -> tuple[list[_Pending], list[_BOnly]]:
    """Decide, without a request, what each item needs: a verdict now (unreadable, or answered from the cache),
    a direction-B ask only, or a first ask; a dry run records the prompts and estimates instead, within the caps."""
    out, settings, cache = run.out, run.settings, run.cache
    pending: list[_Pending] = []
    b_only: list[_BOnly] = []
    est_total_usd = 0.0
    for idx, item in enumerate(ordered):
        if not item.readable:
            out.unreadable += 1
            results[idx] = run._stamp(run.unreadable(item), item, in_tok=0, out_tok=0, cached=False)
            continue
        hit = cache.get(cache_key(item.claim_text, item.page_text_hash, run.model, PROMPT_VERSION)) if cache else None
        if hit is not None:
            out.cached += 1
            entry = _from_cache(run, idx, item, hit, results, dry_run=dry_run)
            if entry is not None:
                b_only.append(entry)
            continue
        prompt = build_prompt(item, settings.max_page_chars)
        est_in = estimate_prompt_tokens(prompt)
        est_usd = cost_usd(run.price, est_in, EXPECTED_OUTPUT_TOKENS)
        b_prompt = build_direction_b_prompt(item, settings.max_page_chars) if likely_direction_b(item) else None
        est_b_in = estimate_prompt_tokens(b_prompt) if b_prompt is not None else 0
        if b_prompt is not None:
            est_usd += cost_usd(run.price, est_b_in, EXPECTED_B_OUTPUT_TOKENS)
        if not dry_run:
            pending.append((idx, item, prompt, est_usd))
            continue
        # the caps apply to the estimate as they would to the run
        if sum(1 for p in out.prompts if p.kind == "verdict") >= settings.max_claims_per_run:
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
        if b_prompt is not None:
            _estimate_direction_b(out, item, b_prompt)
    return pending, b_only


def _estimate_direction_b(out: JudgeRun, item: JudgeItem, b_prompt: Prompt) -> None:
    est_b = estimate_prompt_tokens(b_prompt)
    out.est_b_requests += 1
    out.prompts.append(DryPrompt(item.id, b_prompt.system, b_prompt.user_text(), b_prompt.page_cut, est_b,
                                 kind="direction_b"))
    out.est_input_tokens += est_b
    out.est_output_tokens += EXPECTED_B_OUTPUT_TOKENS


def _from_cache(run: _Run, idx: int, item: JudgeItem, hit: CachedAnswer, results: dict[int, Verdict], *,
                dry_run: bool) -> _BOnly | None:
    """The verdict of a cached first answer, re-checked by code; when its direction B is neither cached nor
    estimated (a dry run), the second ask still to send."""
    draft = hit.draft
    if hit.claim_id != item.id and draft.id == hit.claim_id:
        # the same claim text on the same page under another id (a line moved, a claim repeated): the
        # answer copied its own claim's identity right, so it stands for this one's
        draft = draft.model_copy(update={"id": item.id, "scope": item.scope, "line_no": item.line_no,
                                         "source_url": item.source_url})
    page_given = build_prompt(item, run.settings.max_page_chars).page  # the text that answer was given
    verdict = run.verify(draft, item, page_given=page_given)
    if verdict.direction_b_pending:
        b_hit = run.cache.get_b(run.b_key(item)) if run.cache else None
        if b_hit is not None:
            run.out.b_cached += 1
            verdict = run.verify(draft, item, page_given=page_given, direction_b=b_hit.draft)
        elif dry_run:
            _estimate_direction_b(run.out, item, build_direction_b_prompt(item, run.settings.max_page_chars))
        else:
            return (idx, item, draft, page_given, hit.judged_at)
    results[idx] = run._stamp(verdict, item, in_tok=0, out_tok=0, cached=True, judged_at=hit.judged_at)
    return None


async def _send(run: _Run, pending: list[_Pending], b_only: list[_BOnly], results: dict[int, Verdict]) -> None:
    """Send the planned asks: the direction-B asks of cached answers, then the first asks, `concurrency` at a
    time, each admitted against the caps in priority order."""
    settings, out = run.settings, run.out
    gate = asyncio.Semaphore(max(1, settings.concurrency))

    async def settle_cached(idx: int, item: JudgeItem, draft: DraftVerdict, page_given: str, judged_at: str) -> None:
        async with gate:
            verdict, in_tok, out_tok = await run.settle_direction_b(item, draft, page_given)
        results[idx] = run._stamp(verdict, item, in_tok=in_tok, out_tok=out_tok, cached=True, judged_at=judged_at)

    await asyncio.gather(*(settle_cached(*e) for e in b_only))

    if len(pending) <= settings.max_claims_per_run and sum(e[3] for e in pending) <= settings.max_cost_usd:
        # no cap can cut this run, so the order decides nothing but the wall time: the claims likely to need a
        # second ask go first (longest first), and the one-request claims fill the pool's last slots
        pending.sort(key=lambda e: not likely_direction_b(e[1]))
    queue: asyncio.Queue[_Pending] = asyncio.Queue()
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
