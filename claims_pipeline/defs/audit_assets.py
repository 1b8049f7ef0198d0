"""Cross-scope assets: the audit tables (headline numbers + parquet), the report, and the LLM worklist."""


import json
from pathlib import Path
from typing import Any

import dagster as dg

from claims_pipeline.defs.audit_tables_io import audit_lock, load_audit, tables_dir, write_tables
from claims_pipeline.defs.metadata import Link, md_table, prose, where
from claims_pipeline.defs.records_io import claims_from_json, page_from_json
from claims_pipeline.defs.resources import ClaimsConfig, PageCacheResource
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME
from claims_pipeline.store.files import locked, write_text_atomically
from claims_pipeline.store.recent_changes import (
    last_audit_file, load_reported, previous_audit_run, save_reported, with_diffs_since_report, with_report,
)
from claims_pipeline.urls import normalize_url


def absent_rows(priors_df: Any) -> list[list[Any]]:
    from claims_pipeline.priors import TOKENS_ABSENT

    df = priors_df[priors_df["prior"] == TOKENS_ABSENT]
    return [[r.scope, where(r.file, r.line_no), prose(r.claim), ", ".join(json.loads(r.missing)[:6]), Link(r.url)]
            for r in df.itertuples()]


def stale_rows(priors_df: Any) -> list[list[Any]]:
    df = priors_df[priors_df["stale_changed"]]
    return [[r.scope, where(r.file, r.line_no), prose(r.claim), r.last_verified or "never", str(r.changed_at)[:10], Link(r.url)]
            for r in df.itertuples()]


ABSENT_HEADERS = ["scope", "where", "claim", "missing", "url"]
STALE_HEADERS = ["scope", "where", "claim", "verified", "changed", "url"]


# eager: after the corpus sensor refreshes some scopes, the audit follows once none of them is in progress
@dg.asset(group_name="audit", code_version="1", kinds={"pandas", "parquet"}, automation_condition=dg.AutomationCondition.eager())
def audit_tables(
    context: dg.AssetExecutionContext,
    claims_config: ClaimsConfig,
    page_cache: PageCacheResource,
    claims: dict[str, Any],
    fetched_pages: dict[str, Any],
    priors: dict[str, Any],
) -> dg.MaterializeResult:
    """Every scope's claims, pages and priors as parquet tables, with the headline numbers (total, by prior,
    TOKENS_ABSENT, CONTENT_CHANGED, stale_changed, flagged). Checked by a blocking check before the report."""
    from claims_pipeline.audit import build_audit, combine_scopes
    from claims_pipeline.priors import Prior

    settings = claims_config.load()
    claims_by_scope = {scope: claims_from_json(claims[scope]["claims"]) for scope in sorted(claims)}
    all_claims = [c for scope_claims in claims_by_scope.values() for c in scope_claims]
    cited = sorted({c.source_url for c in all_claims})
    keys = {u: normalize_url(u) for u in cited}
    by_scope = {scope: {u: page_from_json(p) for u, p in pages.items()} for scope, pages in fetched_pages.items()}
    stored_priors = {row["id"]: Prior.from_dict(row) for scope in priors.values() for row in scope}
    with page_cache.open(settings) as cache:
        identity = cache.identity()
        known = cache.states(sorted(set(keys.values())))
        current = {u: known[k] for u, k in keys.items() if k in known}
        reported = load_reported(settings.home_dir, identity)
        pages, prior_of, reread = combine_scopes(claims_by_scope, by_scope, current, stored_priors, settings,
                                                 reported, keys)
        pages = with_diffs_since_report(pages, keys, reported, cache)  # a page changed twice: both in its diff
    if reread:
        context.log.info(f"{reread} claims read again on a newer fetch of their page by another scope")
    audit = build_audit(all_claims, pages, prior_of, run_at=claims_config.now())
    partitions = context.instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME)
    audit.scopes_missing = sorted(set(partitions) - set(claims))  # the IO manager left them out (never materialized)
    audit.scopes = sorted(claims)
    audit.covered_changes = {keys[u]: p.change_fetch_id for u, p in current.items() if p.change_fetch_id is not None}
    audit.shown_changes = sorted(keys[u] for u, p in pages.items() if p.content_changed and u in current)
    audit.cache_identity = identity
    paths = write_tables(audit.to_tables(), tables_dir(settings.home_dir))
    h = audit.headline
    return dg.MaterializeResult(
        metadata={
            "run_at": audit.run_at,  # which audit's tables these are: the report checks it (audit_report)
            "scopes": len(claims),
            "scopes_missing": dg.MetadataValue.json(audit.scopes_missing),
            "claims": h["total"],
            "flagged": h["flagged"],
            "tokens_absent": h["tokens_absent"],
            "content_changed": h["content_changed"],
            "stale_changed": h["stale_changed"],
            "by_prior": dg.MetadataValue.json(h["by_prior"]),
            "headline": dg.MetadataValue.json(h),
            "tables": dg.MetadataValue.path(str(paths["priors"].parent)),
            "stale_changed_claims": md_table(STALE_HEADERS, stale_rows(audit.priors)),
            "tokens_absent_claims": md_table(ABSENT_HEADERS, absent_rows(audit.priors)),
        }
    )


# The report follows the tables (eager), but never tables whose blocking check failed: within one run the
# check blocks the report's step; a run started by the automation sensor after a run that materialized only
# audit_tables would otherwise write the report from tables known to be wrong.
REPORT_CONDITION = dg.AutomationCondition.eager() & dg.AutomationCondition.all_deps_blocking_checks_passed()


def report_dir_for(reports_dir: Path, run_at: str) -> Path:
    """reports/<run time to the second>; another audit of the same second gets -2, -3… (it overwrote the first
    one's report), while the same audit rendered again keeps its folder."""
    stamp = run_at[:19].replace(":", "").replace("-", "")
    for n in range(1, 1000):
        candidate = reports_dir / (stamp if n == 1 else f"{stamp}-{n}")
        if not candidate.exists() or _run_at_of(candidate) in (run_at, None):
            return candidate
    raise RuntimeError(f"{reports_dir}: 999 reports for the second {stamp}")


def _tables_written_by_this_run(context: dg.AssetExecutionContext) -> str | None:
    """run_at of the tables this run's audit_tables step wrote; None when this run did not write them (the
    report of tables an earlier run wrote and checked, as the automation sensor runs it)."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=audit_tables.key), limit=20, ascending=False).records
    for record in records:
        if record.run_id == context.run_id:
            value = record.asset_materialization.metadata.get("run_at") if record.asset_materialization else None
            return str(value.value) if value is not None else None
    return None


def _run_at_of(report_dir: Path) -> str | None:
    try:
        return json.loads((report_dir / "report.json").read_text(encoding="utf-8")).get("run_at")
    except (OSError, ValueError):
        return None


def _previous_run_of(report_dir: Path) -> str | None:
    try:
        return json.loads((report_dir / "report.json").read_text(encoding="utf-8")).get("previous_run")
    except (OSError, ValueError):
        return None


@dg.asset(group_name="audit", code_version="1", kinds={"html", "markdown"}, deps=[audit_tables], automation_condition=REPORT_CONDITION)
def audit_report(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.MaterializeResult:
    """report.md (the original's sections), report.json, report.html and parquet copies, from the checked tables."""
    from claims_pipeline.report import write_reports

    settings = claims_config.load()
    home = settings.home_dir
    # the tables, the report folder, last-run.txt and the ledger of shown changes move together: another audit
    # of this home (a CLI run beside a Dagster run) waits until this one has written all of them
    with locked(audit_lock(home)):
        audit = load_audit(tables_dir(home))
        own = _tables_written_by_this_run(context)
        if own is not None and own != audit.run_at:
            raise dg.Failure(
                description=f"the audit tables were replaced by another audit of this home (run at {audit.run_at}) "
                            f"after this run wrote its own (run at {own}); that audit's run writes its report, after "
                            "its own checks. Nothing was written.")
        out_dir = report_dir_for(settings.reports_dir, audit.run_at)
        previous = previous_audit_run(home)
        if previous == audit.run_at:  # the report of the same audit rendered again: it keeps the run before it
            previous = _previous_run_of(out_dir)
        written = write_reports(audit, out_dir, previous_run=previous)
        write_text_atomically(last_audit_file(home), audit.run_at + "\n")
        # what this report showed is reported: the next one shows only changes it did not (store/recent_changes.py)
        save_reported(home, with_report(load_reported(home, audit.cache_identity), audit.covered_changes,
                                        set(audit.shown_changes), audit.run_at))
        write_text_atomically(settings.reports_dir / "LATEST", str(out_dir) + "\n")
    h = audit.headline
    return dg.MaterializeResult(
        metadata={
            "report_dir": dg.MetadataValue.path(str(out_dir)),
            **{f"report_{k}": dg.MetadataValue.path(str(v)) for k, v in sorted(written.items())},
            "headline": dg.MetadataValue.json(h),
            "flagged": h["flagged"],
            "previous_run": previous or "(none)",
        }
    )
