"""The verdict step (optional): a model judges each flagged claim against its page, and code checks every answer
(quote or abstain) before it ships; the verdict report goes next to the audit report."""

from typing import Any

import dagster as dg

from claims_pipeline.defs.groups import VERDICTS_GROUP
from claims_pipeline.defs.metadata import counts, home_entry, home_path
from claims_pipeline.defs.partitions import scope_partitions
from claims_pipeline.defs.resources import ClaimsConfig, JudgeResource, PageCacheResource
from claims_pipeline.defs.scoped import scoped_output
from claims_pipeline.steps.changes import ScopeChanges
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import ScopePriors
from claims_pipeline.steps.verdicts import ScopeVerdicts


class VerdictsConfig(dg.Config):
    max_claims: int = 0  # like `verify --max-claims N`: 0 = judge.max_claims_per_run


@dg.asset(group_name=VERDICTS_GROUP, code_version="1", kinds={"python"}, partitions_def=scope_partitions,
          backfill_policy=dg.BackfillPolicy.single_run())
def verdicts(context: dg.AssetExecutionContext, config: VerdictsConfig, claims_config: ClaimsConfig,
             page_cache: PageCacheResource, judge: JudgeResource, claims: dict[str, ScopeClaims],
             fetched_pages: dict[str, ScopePages], priors: dict[str, ScopePriors],
             page_changes: dict[str, ScopeChanges]) -> dg.Output[dict[str, ScopeVerdicts]]:
    """Per claim: MATCH / MISMATCH / STALE / PARTIAL / NOT_FOUND / SOURCE_UNAVAILABLE / INDETERMINATE, asked both
    ways and checked by code; a verdict that claims the figure without a verbatim quote carrying it never
    ships. Cached by (claim, page text, model, prompt version): an unchanged input costs nothing."""
    from claims_pipeline.judge.providers import NO_JUDGE_MESSAGE
    from claims_pipeline.steps.verdicts import AuditedScopes, VerdictSources, judge_scopes, limited, not_judged

    now, scopes = claims_config.now(), list(context.partition_keys)
    if not judge.provider().configured:
        context.log.info(NO_JUDGE_MESSAGE)
        out = {s: not_judged(NO_JUDGE_MESSAGE, now) for s in scopes}
    else:
        audited = AuditedScopes(claims, fetched_pages, priors, page_changes)
        sources = VerdictSources(claims_config.home_dir, claims_config.corpus, claims_config.sampling)
        with page_cache.open() as cache:
            out = judge_scopes(sources, scopes, audited, limited(judge.settings(), config.max_claims),
                               judge.provider, cache, now, scripted=judge.scripted)

    def metadata_of(scope: str) -> dict[str, Any]:
        run = out[scope].run
        if not run.judged:
            return {"judged": False, "reason": run.reason}
        return {
            "verdicts": len(out[scope].verdicts),
            "by_verdict": dg.MetadataValue.json(counts(v.verdict for v in out[scope].verdicts)),
            "requests_sent": run.requests_sent, "cached": run.cached,
            "direction_b_asks": run.b_requests_sent, "direction_b_cached": run.b_cached,
            "input_tokens": run.input_tokens, "output_tokens": run.output_tokens,
            "cost_usd": dg.MetadataValue.float(run.cost_usd),
            "stopped_by": ", ".join(run.stopped_by) or "(not stopped)", "model": run.model,
            "judge": "scripted demo judge (the project's figure readers, not a model)" if run.scripted else run.provider,
        }

    return scoped_output(context, out, metadata_of)


@dg.asset_check(asset=verdicts, blocking=True, description=(
    "Recounts the stored verdicts another way (by verdict, class, check, tokens, cost) and compares with the "
    "counts the report will print; a mismatch is an engine bug, not a model mistake: the run stops before the "
    "verdict report."))
def verdict_counts_recount(context: dg.AssetCheckExecutionContext, claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    from claims_pipeline.steps.verdicts import VERDICTS, recount_problems

    home = claims_config.home_dir
    problems: list[str] = []
    for scope in context.instance.get_dynamic_partitions(scope_partitions.name):
        stored = VERDICTS.read(home, scope)
        if stored is not None:
            problems += [f"{scope}: {p}" for p in recount_problems(stored)]
    return dg.AssetCheckResult(passed=not problems, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"mismatches": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "_(none)_")})


@dg.asset(group_name=VERDICTS_GROUP, code_version="1", kinds={"html", "markdown"})
def verdict_report(context: dg.AssetExecutionContext, claims_config: ClaimsConfig,
                   verdicts: dict[str, ScopeVerdicts]) -> dg.MaterializeResult[None]:
    """verdicts.md / .html / .json and corrections.patch (suggestions a human may apply with `git apply`; never
    applied here) next to the newest audit report, and a verdict section in its report.html."""
    from claims_pipeline.judge.report import verification_line
    from claims_pipeline.report.ui_summary import verdicts_markdown
    from claims_pipeline.steps.verdicts import publish_verdict_report

    home = claims_config.home_dir
    published = publish_verdict_report(home, claims_config.corpus, verdicts)
    run = published.run
    if not run.judged:
        return dg.MaterializeResult(metadata={"judged": False, "reason": run.reason,
                                              **home_entry(home), "report": home_path(published.files["verdicts.md"], home)})
    c = published.counts
    return dg.MaterializeResult(metadata={
        "verdicts": len(published.verdicts),
        "by_verdict": dg.MetadataValue.json(c.get("by_verdict", {})),
        # what to act on first, with the page's words; then the other verdicts that are not a MATCH
        "mismatch_and_stale": dg.MetadataValue.md(verdicts_markdown(published.verdicts, ("MISMATCH", "STALE"))),
        "other_flagged_verdicts": dg.MetadataValue.md(verdicts_markdown(
            published.verdicts, ("NOT_FOUND", "INDETERMINATE", "PARTIAL", "SOURCE_UNAVAILABLE"))),
        "verification": verification_line(c),
        "cost_usd": dg.MetadataValue.float(run.cost_usd),
        "input_tokens": run.input_tokens, "output_tokens": run.output_tokens,
        "corrections_suggested": "corrections.patch" in published.files,
        **home_entry(home),
        "report_dir": home_path(published.out_dir, home),
        **{name.replace(".", "_"): home_path(p, home) for name, p in sorted(published.files.items())},
        "appended_to_report_html": published.appended_to_report,
    })
