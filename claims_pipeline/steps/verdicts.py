"""The verdict step between the stored audit values and the judge package: which claims of a scope are asked,
in which order, and where the verdict report goes.

Called by the `verdicts` and `verdict_report` assets (defs/verdicts) and by `claims-pipeline verify --dry-run`.
The corpus is only read (each claim's line, for the suggested corrections); nothing is ever written into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import JudgeSettings, SamplingSettings
from claims_pipeline.judge.model import JudgeItem, Verdict
from claims_pipeline.judge.providers.base import JudgeProvider
from claims_pipeline.judge.verdict_cache import VerdictCache
from claims_pipeline.steps.changes import PAGE_CHANGES, ScopeChanges
from claims_pipeline.steps.corpus import CLAIMS, ScopeClaims
from claims_pipeline.steps.pages.fetched import FETCHED_PAGES, ScopePages, with_text
from claims_pipeline.steps.priors import PRIORS, ScopePriors
from claims_pipeline.steps.stored import StoredStep
from claims_pipeline.steps.verdict_run import VerdictRun

if TYPE_CHECKING:
    from claims_pipeline.judge.report import VerdictCounts
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState


@dataclass(frozen=True)
class VerdictSources:
    """What the verdict step reads besides the stored audit values, picked from the settings at its entry point:
    the home (stored values, verdict cache, reports), the corpus (each claim's line; only read) and the sampling
    section (the order the claims are asked in)."""

    home: Path
    corpus: CorpusSource
    sampling: SamplingSettings


@dataclass
class AuditedScopes:
    """The stored records the verdict step reads, by scope: a scope absent from `priors` is not audited yet."""

    claims: dict[str, ScopeClaims]
    fetched_pages: dict[str, ScopePages]
    priors: dict[str, ScopePriors]
    page_changes: dict[str, ScopeChanges]

    def items(self, sources: VerdictSources, scope: str, cache: PageCache, now: datetime) -> list[JudgeItem]:
        return scope_items(sources, self.claims.get(scope, ScopeClaims([], [])),
                           self.fetched_pages.get(scope, ScopePages({})), self.priors.get(scope, ScopePriors([])),
                           self.page_changes.get(scope, ScopeChanges([], [])), cache, now)

    @classmethod
    def stored(cls, home: Path, scopes: list[str]) -> AuditedScopes:
        """The scopes' records as the audit stored them (steps/stored.py)."""
        return cls(CLAIMS.read_scopes(home, scopes)[0], FETCHED_PAGES.read_scopes(home, scopes)[0],
                   PRIORS.read_scopes(home, scopes)[0], PAGE_CHANGES.read_scopes(home, scopes)[0])


def scope_items(sources: VerdictSources, scope_claims: ScopeClaims, scope_pages: ScopePages, scope_priors: ScopePriors,
                scope_changes: ScopeChanges, cache: PageCache, now: datetime) -> list[JudgeItem]:
    """The scope's claims as judge items, in the worklist's priority order (the runner then puts stale_changed,
    TOKENS_ABSENT and WEAK_MATCH first). Page texts come from the cache; a page without text stays empty, and
    its claim is never sent (the runner gives it SOURCE_UNAVAILABLE by code)."""
    from claims_pipeline.judge.items import corpus_line, corpus_lines, judge_item
    from claims_pipeline.steps.worklist.sampling import select_sample

    claims = scope_claims.records()
    prior_of = {row["id"]: row.get("prior") for row in scope_priors.rows}
    stale = scope_changes.stale_ids()
    ranked = select_sample(claims, len(claims), sources.sampling.seed, now, sources.sampling.priority_weights)
    pages: dict[str, PageState] = {}
    items = []
    files: dict[str, list[str]] = {}  # each corpus file read once, bounded, as the walker reads it
    root, ex = sources.corpus.root, sources.corpus.extraction
    for c in ranked:
        if c.source_url not in pages and c.source_url in scope_pages.pages:
            pages[c.source_url] = with_text(scope_pages.pages[c.source_url], cache)
        if c.file not in files:
            files[c.file] = corpus_lines(root, c.file, max_bytes=ex.max_file_bytes,
                                         follow_links_out=ex.follow_links_out_of_corpus)
        items.append(judge_item(c, pages.get(c.source_url), prior_of.get(c.id), stale_changed=c.id in stale,
                                line_text=corpus_line(root, c.file, c.line_no, lines=files[c.file])))
    return items


def limited(judge: JudgeSettings, max_claims: int = 0) -> JudgeSettings:
    """The judge settings of one run: `--max-claims N` (N > 0) takes the place of judge.max_claims_per_run."""
    return judge.model_copy(update={"max_claims_per_run": max_claims}) if max_claims > 0 else judge


@dataclass
class ScopeVerdicts:
    """One scope's verdicts as stored per partition (the verdict report reads them back)."""

    verdicts: list[Verdict]
    run: VerdictRun
    counts: VerdictCounts  # the report's counts of these verdicts (the blocking check recounts them)

    def to_json(self) -> dict[str, Any]:
        return {"verdicts": [v.model_dump(mode="json") for v in self.verdicts], "run": self.run.to_json(),
                "counts": self.counts}

    @classmethod
    def from_json(cls, d: Any) -> ScopeVerdicts:
        # the stored counts are taken as written: verdict_counts_recount compares them with a recount
        return cls([Verdict.model_validate(v) for v in d.get("verdicts", [])], VerdictRun.from_json(d.get("run", {})),
                   cast("VerdictCounts", dict(d.get("counts", {}))))


# Stored as JSON text in its column (form None): a verdict nests the judge's drafts and both directions' answers,
# and a run holds at most judge.max_claims_per_run of them, so the columnar form would buy nothing here.
VERDICTS = StoredStep("verdicts", ScopeVerdicts, None)


def judge_scope(items: list[JudgeItem], provider: JudgeProvider, judge: JudgeSettings, cache: VerdictCache,
                now: datetime, *,
                scripted: bool = False) -> ScopeVerdicts:
    from claims_pipeline.judge.prompt import PROMPT_VERSION
    from claims_pipeline.judge.report import verdict_counts
    from claims_pipeline.judge.runner import run_judge

    run = run_judge(items, provider, judge, cache)
    info = VerdictRun.of(run, prompt_version=PROMPT_VERSION, run_at=now.isoformat(), scripted=scripted)
    return ScopeVerdicts(run.verdicts, info, verdict_counts(run.verdicts))


def judge_scopes(sources: VerdictSources, scopes: list[str], audited: AuditedScopes, judge: JudgeSettings,
                 new_provider: Callable[[], JudgeProvider], page_cache: PageCache, now: datetime, *,
                 scripted: bool = False) -> dict[str, ScopeVerdicts]:
    """Each scope of a run judged from its stored audit records; a scope not audited yet gets no verdict and says so. new_provider() gives a fresh client per scope (a run closes its own).
    judge.max_claims_per_run and judge.max_cost_usd bound the whole run: each scope gets what the earlier ones left
    (model_copy does not validate, so a spent budget of 0 reaches the runner, which then sends nothing more)."""
    out = {s: not_judged("scope not audited yet: materialize its audit first", now) for s in scopes
           if s not in audited.priors}
    claims_left, usd_left = judge.max_claims_per_run, judge.max_cost_usd
    with VerdictCache.in_home(sources.home) as verdict_cache:
        for scope in [s for s in scopes if s in audited.priors]:
            items = audited.items(sources, scope, page_cache, now)
            budget = judge.model_copy(update={"max_claims_per_run": claims_left, "max_cost_usd": usd_left})
            out[scope] = judge_scope(items, new_provider(), budget, verdict_cache, now, scripted=scripted)
            claims_left = max(0, claims_left - out[scope].run.requests_sent)
            usd_left = max(0.0, usd_left - out[scope].run.cost_usd)
    return out


def not_judged(reason: str, now: datetime) -> ScopeVerdicts:
    from claims_pipeline.judge.report import verdict_counts

    return ScopeVerdicts([], VerdictRun.not_judged(reason, now.isoformat()), verdict_counts([]))


def recount_problems(scope_verdicts: ScopeVerdicts) -> list[str]:
    """The stored counts against a recount from the stored verdicts, done another way (judge/recount.py)."""
    from claims_pipeline.judge.recount import recount_mismatches

    return recount_mismatches(scope_verdicts.verdicts, scope_verdicts.counts)


@dataclass
class PublishedVerdicts:
    out_dir: Path
    files: dict[str, Path]
    verdicts: list[Verdict]
    counts: VerdictCounts
    run: VerdictRun  # merged over the scopes
    appended_to_report: bool


def publish_verdict_report(home_dir: Path, corpus: CorpusSource, by_scope: dict[str, ScopeVerdicts]) -> PublishedVerdicts:
    """verdicts.md / .html / .json and corrections.patch (suggestions, never applied) next to the newest audit
    report (reports/LATEST), and a verdict section appended to its report.html; under the home's audit lock,
    so a report being written meanwhile is never half-annotated. Without an audit report yet: <home>/verdicts/."""
    from claims_pipeline.judge.corrections import write_corrections
    from claims_pipeline.judge.report import (
        append_verdict_section,
        no_judge_report,
        verdict_counts,
        write_verdict_report,
    )
    from claims_pipeline.store.files import locked

    verdicts = [v for scope in sorted(by_scope) for v in by_scope[scope].verdicts]
    run = VerdictRun.merged([by_scope[s].run for s in sorted(by_scope)])
    with locked(HomeLayout(home_dir).audit_lock):
        out_dir = verdict_report_dir(home_dir)
        if not run.judged:
            files = no_judge_report(out_dir, run.reason, run.to_json())
            return PublishedVerdicts(out_dir, files, [], verdict_counts([]), run, False)
        corrections = write_corrections(verdicts, corpus.root, out_dir, max_bytes=corpus.extraction.max_file_bytes)
        files = write_verdict_report(verdicts, run.to_json(), out_dir, corrections=corrections.corrections)
        files["corrections.json"] = corrections.listing
        files["corrections.patch"] = corrections.patch
        report_html = out_dir / "report.html"
        appended = report_html.is_file() and append_verdict_section(report_html, verdicts, run.to_json(),
                                                                    corrections=corrections.corrections)
    return PublishedVerdicts(out_dir, files, verdicts, verdict_counts(verdicts), run, appended)


def verdict_report_dir(home_dir: Path) -> Path:
    """Where the verdict report goes: beside the newest audit report, or <home>/verdicts/ before any."""
    home = HomeLayout(home_dir)
    path = home.latest_report_dir()  # relative to the home, or absolute (older homes)
    return path if path is not None and path.is_dir() else home.verdicts_dir


@dataclass(frozen=True)
class PublishedSummary:
    """The verdict report's headline as `claims-pipeline verify` prints it, read back from the verdicts.json that
    publish_verdict_report wrote (not from the asset's metadata, which is for the UI)."""

    judged: bool
    reason: str | None
    verdicts: int
    by_verdict: dict[str, int]
    verification: str | None
    cost_usd: float
    report: Path

    @classmethod
    def read(cls, home_dir: Path) -> PublishedSummary | None:
        """None when no verdicts.json is where the verdict report goes (no verdict report yet)."""
        import json

        path = verdict_report_dir(home_dir) / "verdicts.json"
        if not path.is_file():
            return None
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            run = VerdictRun.from_json(doc.get("run") or {})
            judged = bool(doc.get("judged", True)) and run.judged
            return cls(judged, None if judged else str(doc.get("reason") or run.reason),
                       len(doc.get("verdicts") or []), dict(doc["counts"]["by_verdict"]) if judged else {},
                       str(doc["verification"]) if judged else None, run.cost_usd, path.with_name("verdicts.md"))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: not a verdict report this version can read ({type(exc).__name__}: {exc}); "
                             "run `claims-pipeline verify` again to rewrite it") from None

    def to_json(self) -> dict[str, Any]:
        return {"judged": self.judged, "reason": self.reason, "verdicts": self.verdicts, "by_verdict": self.by_verdict,
                "verification": self.verification, "cost_usd": self.cost_usd, "report": str(self.report)}


@dataclass(frozen=True)
class DryRunPlan:
    """What `verify --dry-run` says: what would be sent and its estimate (the fields, in order, are the keys of
    its --json document, docs/cli-json.md)."""

    scopes: list[str]
    scopes_not_audited: list[str]
    claims: int
    would_send: int
    would_reuse: int
    would_ask_direction_b: int
    requests: int
    unreadable: int
    provider: str
    model: str | None  # None: no judge configured (verify --dry-run says what to set)
    max_claims_per_run: int
    est_input_tokens: int
    est_output_tokens: int
    est_cost_usd: float | None
    price_known: bool
    stopped_by: str | None
    prompts: list[DryRunPrompt]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DryRunPrompt:
    id: str
    kind: str
    system: str
    user: str
    page_cut: bool
    est_input_tokens: int


def dry_run(sources: VerdictSources, judge: JudgeSettings, page_cache: PageCache, scopes: list[str], now: datetime, *,
            max_claims: int = 0, scripted: bool = False) -> DryRunPlan:
    """What `verify` would send, from the scopes' stored audit values: the prompts and a token and cost
    estimate, after the verdict cache (an answer it holds is reused, not sent; the rerun of an unchanged run
    sends nothing). Direction-B asks are counted: the TOKENS_PRESENT claims sent, and the cached MATCHes whose
    second answer is not cached. No request is made, so no key is needed. page_cache: the pages' texts, opened
    and closed by the caller."""
    from claims_pipeline.judge.providers import make_provider
    from claims_pipeline.judge.runner import run_judge

    home = HomeLayout(sources.home)
    judge = limited(judge, max_claims)
    if judge.provider == "none":  # estimate as the default provider would be asked
        judge = judge.model_copy(update={"provider": "anthropic"})

    audited = AuditedScopes.stored(sources.home, scopes)
    missing = [s for s in scopes if s not in audited.priors]
    items = [item for s in scopes if s not in missing for item in audited.items(sources, s, page_cache, now)]
    provider = make_provider(judge, environ={judge.effective_api_key_env: "dry-run: never sent"})
    if scripted:  # the demo's verdicts are cached under the scripted judge's model name
        from claims_pipeline.judge.model import SCRIPTED_MODEL

        judge = judge.model_copy(update={"model": SCRIPTED_MODEL})
        provider = make_provider(judge, environ={judge.effective_api_key_env: "dry-run: never sent"})
    verdict_cache = VerdictCache(home.judge_cache) if home.judge_cache.is_file() else None  # read, never created
    try:
        run = run_judge(items, provider, judge, verdict_cache, dry_run=True)
    finally:
        if verdict_cache is not None:
            verdict_cache.close()
    first = [p for p in run.prompts if p.kind == "verdict"]
    return DryRunPlan(
        scopes=scopes, scopes_not_audited=missing, claims=len(items), would_send=len(first), would_reuse=run.cached,
        would_ask_direction_b=run.est_b_requests, requests=len(run.prompts), unreadable=run.unreadable,
        provider=judge.provider, model=judge.effective_model, max_claims_per_run=judge.max_claims_per_run,
        est_input_tokens=run.est_input_tokens, est_output_tokens=run.est_output_tokens,
        est_cost_usd=run.est_cost_usd, price_known=run.price_known, stopped_by=run.stopped_by,
        prompts=[DryRunPrompt(p.id, p.kind, p.system, p.user, p.page_cut, p.est_input_tokens) for p in run.prompts])
