"""`claims-pipeline audit [--scope X]`: materialize the audit assets in-process against the Dagster instance. The
report's headline numbers are the result (stdout; --json: one JSON document); stderr says where the reports are
(report.md, report.html)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claims_pipeline.commands import options
from claims_pipeline.common.text_safety import terminal_escaped

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings
    from claims_pipeline.web.unreadable import UnreadableCount

OPTIONS = [options.SCOPE, options.NOW, options.JSON]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """audit takes the shared options only; what --scope chooses here is said in its description."""
    parser.description = (f"{parser.description}. With --scope, only those scopes' cited pages are re-read; the "
                          "report still covers every scope.")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from claims_pipeline.commands.inputs import check_clock

    check_clock(args.now)
    return audit(settings, scope=args.scope, clock=args.now or "", as_json=args.json)


def unusable_channels(settings: Settings) -> list[str]:
    """A warning per notification channel that cannot be formed (a ${VARIABLE} of its URL not set), said when the
    audit starts: otherwise it shows only when a month has news to send. Names the channel and the variable,
    never a value."""
    if not settings.notify.configured:
        return []
    from claims_pipeline.notify.channels import channels

    return [f"warning: notification {ch.label}: {ch.problem}: this audit's news cannot reach it (set it in the "
            "environment of the command)" for ch in channels(settings.notify) if ch.problem]


def audit(settings: Settings, *, scope: str | None = None, clock: str = "", fixture_web: bool = True,
          quiet: bool = False, trigger: str = "cli", name: str = "", as_json: bool = False) -> int:
    """Exit code 0 (done), 1 (a run or a blocking check failed). Raises InputError (exit 2 in cli.main) for a
    missing corpus directory, a corpus without markdown files or a --scope that matches nothing. trigger and
    name tag the runs (`demo` and its step for the demo's). The runs take `settings` as they are."""
    from claims_pipeline.commands.inputs import InputError, checked_corpus, chosen_scopes, corpus_origin
    from claims_pipeline.corpus.scopes import nothing_read_message, walk_corpus
    from claims_pipeline.orchestration.instance import open_instance
    from claims_pipeline.orchestration.runner import resources_for, run_audit, run_failures
    from claims_pipeline.steps.pages.progress import FetchProgressDisplay, installed, no_progress

    corpus = checked_corpus(settings, corpus_origin(settings.source_file))
    walk = walk_corpus(corpus)
    if not walk.files:
        raise InputError(nothing_read_message(corpus, walk))
    all_scopes = list(walk.scopes)
    chosen = chosen_scopes(all_scopes, scope)
    if not quiet:
        for line in unusable_channels(settings):
            print(terminal_escaped(line), file=sys.stderr)
    instance = open_instance(settings.home_dir)
    resources = resources_for(settings, fixture_web=fixture_web, clock=clock)
    before = latest_signature(settings.reports_dir)
    # on a terminal, the cited pages' fetch is drawn as it goes (not during the demo's quiet audits)
    display = contextlib.nullcontext(no_progress) if quiet else FetchProgressDisplay(label="re-reading cited pages")
    with display as show, installed(show):
        results = run_audit(instance, resources, all_scopes, chosen, trigger=trigger, name=name)
    failures = run_failures(results)
    ok = not failures and all(r.success for r in results)
    # a failed step the report does not need (the citation linter) still leaves this run's report; a failed
    # report step leaves none, even when another audit of this home wrote one meanwhile
    report_failed = any(f.startswith("audit_report:") for f in failures)
    fresh = latest_signature(settings.reports_dir) != before and not report_failed
    summary = latest_summary(settings.reports_dir)
    unread = unread_pages(Path(summary["dir"]), chosen) if fresh and summary else None
    if not quiet:
        print(f"[audit] DAGSTER_HOME={instance.root_directory} · runs {', '.join(r.run_id[:8] for r in results)}", file=sys.stderr)
        if fresh and summary:
            counts = summary["headline"]
            pages = f"; {unread.line()}" if unread is not None else ""
            print(f"audit done → {summary['report']}  (flagged {counts.get('flagged', '?')}: TOKENS_ABSENT "
                  f"{counts.get('tokens_absent', 0)}, stale_changed {counts.get('stale_changed', 0)}{pages})",
                  file=sys.stderr)
            if summary["html"]:
                print(f"report for people → {summary['html']}", file=sys.stderr)
        elif summary:  # LATEST still names an earlier run's report: say so, never pass it off as this run's
            print(f"audit failed: no new report; the newest is an earlier run's → {summary['report']}", file=sys.stderr)
        output = options.Result(as_json)
        output.document(summary["headline"] if fresh and summary else {})
        if fresh and summary:
            output.line(headline_line(summary["headline"]))
        if fresh and summary and summary["headline"].get("total") == 0:
            from claims_pipeline.corpus.explain import no_claim_message

            print(terminal_escaped(f"claims-pipeline: {no_claim_message(corpus, len(walk.files))}"), file=sys.stderr)
    for f in failures:
        print(f"claims-pipeline: {f}", file=sys.stderr)
    said = notification_line(results, settings, failures, ok)
    if said and not quiet:
        print(terminal_escaped(said), file=sys.stderr)
    if unread is not None and unread.none_read and ok:
        # a report of nothing read says nothing about any figure: not a success
        print(f"claims-pipeline: no cited page could be read ({unread.line()}); is the network reachable from "
              "here? (claims-pipeline fetch URL says why one page does not read)", file=sys.stderr)
        return 1
    return 0 if ok else 1


def headline_line(headline: dict) -> str:
    """The report's headline numbers for a person, in one line."""
    return (f"claims {headline.get('total', 0)} · flagged {headline.get('flagged', 0)} · TOKENS_ABSENT "
            f"{headline.get('tokens_absent', 0)} · CONTENT_CHANGED {headline.get('content_changed', 0)} · "
            f"stale_changed {headline.get('stale_changed', 0)}")


def unread_pages(report_dir: Path, scopes: list[str] | None) -> UnreadableCount | None:
    """The report's cited pages that could not be read, by reason: those of `scopes` (all when None)."""
    from claims_pipeline.web.unreadable import report_unreadable

    urls = None
    if scopes is not None:
        import pandas as pd

        try:
            claims = pd.read_parquet(report_dir / "claims.parquet", columns=["scope", "source_url"])
        except (OSError, ValueError, KeyError):
            return None
        urls = set(claims.loc[claims["scope"].isin(scopes), "source_url"])
    return report_unreadable(report_dir, urls)


def notification_line(results: list, settings: Any, failures: list[str], ok: bool) -> str | None:
    """What the runs' notification step did (read from its metadata); after a failed run, the failure notice
    (the deployment's run-failure sensor does not see the CLI's in-process runs)."""
    if not settings.notify.configured:
        return None
    if not ok:
        from claims_pipeline.notify import Reach, notify_failure

        failed = next((r for r in results if not r.success), results[-1] if results else None)
        job = failed.job_def.name if failed is not None else "audit"
        run_id = failed.run_id if failed is not None else ""
        return notify_failure(settings.notify, settings.home_dir, job=job, run_id=run_id,
                              reach=Reach.of(settings.fetch, settings.notify, settings.deployment),
                              error=failures[0] if failures else "run failed").line()
    from claims_pipeline.orchestration.runner import notification_summary

    return notification_summary(results, "audit_notification")


def latest_signature(reports_dir: Path) -> tuple[str, int] | None:
    """What reports/LATEST says and when it was written: it moves exactly when a report is written."""
    latest = reports_dir / "LATEST"
    try:
        return latest.read_text(encoding="utf-8"), latest.stat().st_mtime_ns
    except OSError:
        return None


def latest_summary(reports_dir: Path) -> dict | None:
    """Where the newest report is, and the headline numbers that report shows (its own report.json)."""
    from claims_pipeline.config.home import latest_report_dir

    out_dir = latest_report_dir(reports_dir / "LATEST", reports_dir.parent)  # relative to the home, or absolute
    if out_dir is None:
        return None
    try:
        headline = json.loads((out_dir / "report.json").read_text(encoding="utf-8")).get("headline") or {}
    except (OSError, ValueError):
        headline = {}
    html = out_dir / "report.html"
    return {"report": str(out_dir / "report.md"), "html": str(html) if html.is_file() else None, "dir": str(out_dir), "headline": headline}
