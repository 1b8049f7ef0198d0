"""`claims-pipeline audit [--scope X]`: materialize the audit assets in-process against the Dagster instance,
then print where the reports are (report.md, report.html) and the headline numbers (JSON on stdout)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", metavar="X", help="re-fetch only scopes equal to X or ending in /X, then refresh the audit")
    parser.add_argument("--now", metavar="ISO", help="pin the clock (fetch times, audit date), e.g. 2026-06-01T00:00:00Z")


def run(args: argparse.Namespace) -> int:
    from claims_pipeline.commands.inputs import check_clock
    from claims_pipeline.settings import find_config_file

    check_clock(args.now)
    config = find_config_file(args.config)
    return audit(str(config) if config else "", scope=args.scope, clock=args.now or "")


def audit(config_path: str, *, scope: str | None = None, clock: str = "", fixture_web: str = "auto", quiet: bool = False) -> int:
    """Exit code 0 (done), 1 (a run or a blocking check failed). Raises InputError (exit 2 in cli.main) for a
    missing corpus directory, a corpus without markdown files or a --scope that matches nothing."""
    from claims_pipeline.commands.inputs import InputError, check_corpus_dir, chosen_scopes, corpus_origin
    from claims_pipeline.corpus.extract import list_scopes
    from claims_pipeline.orchestration.instance import open_instance
    from claims_pipeline.orchestration.runner import resources_for, run_audit, run_failures
    from claims_pipeline.progress import FetchProgressDisplay, installed, no_progress
    from claims_pipeline.settings import load_settings

    settings = load_settings(Path(config_path) if config_path else None)
    check_corpus_dir(settings, corpus_origin(Path(config_path) if config_path else None))
    all_scopes = list(list_scopes(settings))
    if not all_scopes:
        raise InputError(f"no markdown files under {settings.corpus_dir} / {settings.extraction.scope_dirs}")
    chosen = chosen_scopes(all_scopes, scope)
    instance = open_instance(settings)
    resources = resources_for(config_path, fixture_web=fixture_web, clock=clock)
    before = latest_signature(settings.reports_dir)
    # on a terminal, the cited pages' fetch is drawn as it goes (not during the demo's quiet audits)
    display = contextlib.nullcontext(no_progress) if quiet else FetchProgressDisplay(label="re-reading cited pages")
    with display as show, installed(show):
        results = run_audit(instance, resources, all_scopes, chosen)
    failures = run_failures(results)
    ok = not failures and all(r.success for r in results)
    # a failed step the report does not need (the citation linter) still leaves this run's report; a failed
    # report step leaves none, even when another audit of this home wrote one meanwhile
    report_failed = any(f.startswith("audit_report:") for f in failures)
    fresh = latest_signature(settings.reports_dir) != before and not report_failed
    summary = latest_summary(settings.reports_dir)
    if not quiet:
        print(f"[audit] DAGSTER_HOME={instance.root_directory} · runs {', '.join(r.run_id[:8] for r in results)}", file=sys.stderr)
        if fresh and summary:
            print(f"audit done → {summary['report']}  (flagged {summary['headline'].get('flagged', '?')})", file=sys.stderr)
            if summary["html"]:
                print(f"report for people → {summary['html']}", file=sys.stderr)
        elif summary:  # LATEST still names an earlier run's report: say so, never pass it off as this run's
            print(f"audit failed: no new report; the newest is an earlier run's → {summary['report']}", file=sys.stderr)
        print(json.dumps(summary["headline"] if fresh and summary else {}, indent=2))
    for f in failures:
        print(f"claims-pipeline: {f}", file=sys.stderr)
    return 0 if ok else 1


def latest_signature(reports_dir: Path) -> tuple[str, int] | None:
    """What reports/LATEST says and when it was written: it moves exactly when a report is written."""
    latest = reports_dir / "LATEST"
    try:
        return latest.read_text(encoding="utf-8"), latest.stat().st_mtime_ns
    except OSError:
        return None


def latest_summary(reports_dir: Path) -> dict | None:
    """Where the newest report is, and the headline numbers that report shows (its own report.json)."""
    from claims_pipeline.home import latest_report_dir

    out_dir = latest_report_dir(reports_dir / "LATEST", reports_dir.parent)  # relative to the home, or absolute
    if out_dir is None:
        return None
    try:
        headline = json.loads((out_dir / "report.json").read_text(encoding="utf-8")).get("headline") or {}
    except (OSError, ValueError):
        headline = {}
    html = out_dir / "report.html"
    return {"report": str(out_dir / "report.md"), "html": str(html) if html.is_file() else None, "dir": str(out_dir), "headline": headline}
