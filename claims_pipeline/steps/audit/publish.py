"""Publishing a report: render the checked audit tables into reports/<time>/, then move LATEST, last-run.txt
and the ledger of shown changes, all under the home's audit lock.

The tables, the report folder, last-run.txt and the ledger move together: another audit of this home (a CLI
run beside a Dagster run) waits until this one has written all of them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claims_pipeline.common import stopping
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.steps.audit.tables import load_audit
from claims_pipeline.store.files import locked, write_text_atomically


class TablesReplaced(RuntimeError):
    """Another audit of this home replaced the tables after this run wrote (and checked) its own."""


@dataclass
class PublishedReport:
    audit: Any
    out_dir: Path
    files: dict[str, Path]
    previous_run: str | None


def publish_report(home_dir: Path, reports_dir: Path, *, own_tables_run_at: str | None) -> PublishedReport:
    """Write the report of the tables in <home>/audit/tables.

    own_tables_run_at: run_at of the tables this run wrote, or None when it wrote none (the report of tables an
    earlier run wrote and checked, as the automation sensor runs it). When the tables found are another
    audit's, nothing is written: that audit's run reports them after its own checks."""
    from claims_pipeline.report import write_reports
    from claims_pipeline.report.history import audit_history, point_of, record
    from claims_pipeline.store.recent_changes import load_reported, previous_audit_run, save_reported, with_report

    home = HomeLayout(home_dir)
    stopping.check()
    with locked(home.audit_lock):
        audit = load_audit(home.tables_dir)
        if own_tables_run_at is not None and own_tables_run_at != audit.run_at:
            raise TablesReplaced(
                f"the audit tables were replaced by another audit of this home (run at {audit.run_at}) after this "
                f"run wrote its own (run at {own_tables_run_at}); that audit's run writes its report, after its own "
                "checks. Nothing was written.")
        out_dir = report_dir_for(reports_dir, audit.run_at)
        previous = previous_audit_run(home_dir)
        if previous == audit.run_at:  # the report of the same audit rendered again: it keeps the run before it
            previous = _report_field(out_dir, "previous_run")
        point = point_of(audit.run_at, audit.headline)
        files = write_reports(audit, out_dir, previous_run=previous, tables_dir=home.tables_dir,
                              history=audit_history(reports_dir, point))
        # stopped while the files were written: LATEST, last-run.txt, the ledger and the history stay on the previous report
        stopping.check()
        record(reports_dir, point)  # the next report's chart has this audit
        write_text_atomically(home.last_run_file, audit.run_at + "\n")
        # what this report showed is reported: the next one shows only changes it did not (store/recent_changes.py)
        save_reported(home_dir, with_report(load_reported(home_dir, audit.cache_identity), audit.covered_changes,
                                            set(audit.shown_changes), audit.run_at))
        write_text_atomically(reports_dir / "LATEST", home.latest_entry(out_dir) + "\n")  # relative to the home
    return PublishedReport(audit, out_dir, files, previous)


def report_dir_for(reports_dir: Path, run_at: str) -> Path:
    """reports/<run time to the second>; another audit of the same second gets -2, -3… (it overwrote the first
    one's report), while the same audit rendered again keeps its folder."""
    stamp = run_at[:19].replace(":", "").replace("-", "")
    for n in range(1, 1000):
        candidate = reports_dir / (stamp if n == 1 else f"{stamp}-{n}")
        if not candidate.exists() or _report_field(candidate, "run_at") in (run_at, None):
            return candidate
    raise RuntimeError(f"{reports_dir}: 999 reports for the second {stamp}")


def _report_field(report_dir: Path, name: str) -> str | None:
    try:
        value = json.loads((report_dir / "report.json").read_text(encoding="utf-8")).get(name)
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
