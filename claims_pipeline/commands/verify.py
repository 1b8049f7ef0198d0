"""`claims-pipeline verify [--scope X] [--max-claims N] [--dry-run]`: the verdict step on the audited scopes.

Runs the verify_scope job (the same the UI launches) in-process: the judge named by judge.provider answers,
code checks each answer, and the verdict report lands next to the newest audit report; the verdict counts are the
result (stdout; --json: one JSON document). --dry-run says what would be sent and a token and cost estimate
(--json: with the prompts), and sends nothing."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from datetime import UTC
from typing import TYPE_CHECKING

from claims_pipeline.commands import options
from claims_pipeline.common.text_safety import terminal_escaped

OPTIONS = [options.SCOPE, options.NOW, options.JSON]

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-claims", type=int, default=0, metavar="N",
                        help="send at most N claims to the judge (default judge.max_claims_per_run)")
    parser.add_argument("--dry-run", action="store_true",
                        help="say what would be sent and a token/cost estimate (--json: with the prompts); send nothing")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from claims_pipeline.commands.inputs import InputError, check_clock, checked_corpus, chosen_scopes, corpus_origin
    from claims_pipeline.corpus.scopes import list_scopes

    if args.max_claims < 0:
        raise InputError("--max-claims must be ≥ 0")
    check_clock(args.now)
    corpus = checked_corpus(settings, corpus_origin(settings.source_file))
    all_scopes = list(list_scopes(corpus))
    scopes = chosen_scopes(all_scopes, args.scope) or all_scopes
    now = _now(args.now)
    scripted = demo_judge_replaces(settings)
    if scripted:
        print(SCRIPTED_NOTICE, file=sys.stderr)
    no_judge = settings.judge.provider == "none" and not scripted
    if no_judge and not args.dry_run:  # a run that could judge nothing: what to set, before any run is made
        raise InputError(no_judge_line(settings))
    if not args.dry_run:
        not_audited_yet(settings, scopes)
    if args.dry_run:
        from claims_pipeline.steps.verdicts import VerdictSources, dry_run
        from claims_pipeline.store.cache import PageCache

        sources = VerdictSources(settings.home_dir, corpus, settings.sampling)
        with PageCache.at(settings.page_cache) as page_cache:
            plan = dry_run(sources, settings.judge, page_cache, scopes, now, max_claims=args.max_claims,
                           scripted=scripted)
        output = options.Result(args.json)
        if plan.scopes_not_audited:  # scope names come from file names
            print(terminal_escaped(f"not audited yet (run `claims-pipeline audit` first): "
                                   f"{', '.join(plan.scopes_not_audited)}"), file=sys.stderr)
        if no_judge:  # no provider, no price: the claims ready for a judge, and how to configure one
            plan = dataclasses.replace(plan, provider="none", model=None, est_cost_usd=None, price_known=False)
            output.document(plan.to_json())
            output.line(f"dry run: no judge configured; {plan.would_send} of {plan.claims} claims would be sent "
                        "once one is; nothing was sent")
            print(terminal_escaped(no_judge_line(settings)), file=sys.stderr)
            return 0
        output.document(plan.to_json())
        output.line(
            f"dry run: {plan.would_send} of {plan.claims} claims would be sent to {plan.provider} "
            f"({plan.model}), {plan.would_reuse} answers would be reused from the verdict cache, "
            f"{plan.would_ask_direction_b} direction-B asks expected: about {plan.est_input_tokens} input + "
            f"{plan.est_output_tokens} output tokens, ${plan.est_cost_usd:.4f}; nothing was sent")
        return 0
    return verify(settings, all_scopes, scopes if args.scope else None, max_claims=args.max_claims,
                  clock=args.now or "", as_json=args.json)


def no_judge_line(settings: Settings) -> str:
    """One line: no judge, and the keys that configure one, in the file this command read."""
    from claims_pipeline.judge.providers.none import NO_JUDGE_MESSAGE

    where = str(settings.source_file) if settings.source_file else "a config file (--config)"
    return (f"verify: {NO_JUDGE_MESSAGE.replace('in the config file', 'in ' + where)}; "
            'see docs/verification.md, "Setting it up"')


def not_audited_yet(settings: Settings, scopes: list[str]) -> None:
    """Verdicts are on the claims an audit stored: none of the chosen scopes audited yet is one line, exit 2
    (not Dagster's "not yet materialized")."""
    from claims_pipeline.commands.inputs import InputError
    from claims_pipeline.steps.priors import PRIORS

    # whether the values exist, not read: a damaged one is the run's to name
    if not PRIORS.has_any(settings.home_dir, scopes):
        which = "the corpus" if len(scopes) > 3 else ", ".join(scopes)
        raise InputError(f"verify: no audit of {which} yet under {settings.home_dir}: run `claims-pipeline audit` "
                         "first (the verdicts are on the claims and pages an audit stored)")


SCRIPTED_NOTICE = ("verify: the demo deployment with judge.provider none: the demo's scripted judge (a local stand-in "
                   "on 127.0.0.1, not a model) answers instead, so the demo runs with no key and no network; set "
                   "judge.provider to use a real judge")


def demo_judge_replaces(settings: Settings) -> bool:
    """Does the demo's scripted judge answer (the demo deployment, no judge configured)? A judge configured in
    the demo deployment is used as configured."""
    return settings.deployment == "demo" and settings.judge.provider == "none"


def verify(settings: Settings, all_scopes: list[str], scopes: list[str] | None, *, max_claims: int = 0, clock: str = "",
           fixture_web: bool = True, quiet: bool = False, trigger: str = "cli", name: str = "", as_json: bool = False) -> int:
    """The verdict runs on `settings` as the command read them."""
    from claims_pipeline.orchestration.instance import open_instance
    from claims_pipeline.orchestration.runner import notification_summary, resources_for, run_failures, run_verify

    instance = open_instance(settings.home_dir)
    results = run_verify(instance, resources_for(settings, clock=clock, fixture_web=fixture_web), all_scopes,
                         scopes, max_claims=max_claims, trigger=trigger, name=name)
    failures = run_failures(results)
    for f in failures:
        print(terminal_escaped(f"claims-pipeline: {f}"), file=sys.stderr)
    summary = verdict_summary(settings) if results and results[-1].success else None
    if not quiet:  # a failed run's document is {}, as audit's: --json always leaves one document on stdout
        options.Result(as_json).document(summary or {})
    if summary is not None and not quiet:
        # the reason may quote the provider's or the model's answer: Result escapes what a terminal would obey
        options.Result(as_json).line(verdict_line(summary))
        where = summary.get("report")
        if summary.get("judged") is False:
            # a run that judged nothing is no verdict report: say so, and what to set (docs/verification.md)
            print(terminal_escaped(f"verify: nothing was judged ({summary.get('reason') or 'no judge configured'}); "
                                   "see docs/verification.md, \"Setting it up\"" + (f" · note → {where}" if where else "")),
                  file=sys.stderr)
        else:
            print(terminal_escaped(f"verify done → {where}" if where else "verify done"), file=sys.stderr)
    said = notification_summary(results, "verdict_notification") if settings.notify.configured and not quiet else None
    if said:
        print(terminal_escaped(said), file=sys.stderr)
    return 0 if not failures and all(r.success for r in results) else 1


def verdict_line(summary: dict) -> str:
    """The verdicts for a person, in one line: how many of each, what the checks did, the cost."""
    if summary.get("judged") is False:
        return f"verdicts: none, nothing was judged ({summary.get('reason') or 'no judge configured'})"
    by = " · ".join(f"{k} {v}" for k, v in (summary.get("by_verdict") or {}).items() if v)
    return (f"verdicts: {summary.get('verdicts', 0)}" + (f" ({by})" if by else "")
            + (f" · {summary['verification']}" if summary.get("verification") else "")
            + f" · cost ${summary.get('cost_usd') or 0:.4f}")


def verdict_summary(settings: Settings) -> dict | None:
    """The verdict report's headline, from the verdicts.json the run's verdict_report step wrote."""
    from claims_pipeline.steps.verdicts import PublishedSummary

    published = PublishedSummary.read(settings.home_dir)
    return published.to_json() if published is not None else None


def _now(value: str | None):
    from datetime import datetime

    if not value:
        return datetime.now(UTC)
    dt = datetime.fromisoformat(value)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
