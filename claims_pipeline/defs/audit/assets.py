"""The cross-scope audit: every scope's claims, pages and priors as checked tables → the report."""


import dagster as dg

from claims_pipeline.defs.audit.ui import audit_metadata, report_metadata
from claims_pipeline.defs.groups import AUDIT_GROUP
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME
from claims_pipeline.defs.resources import ClaimsConfig, PageCacheResource
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import ScopePriors


# eager: after the corpus sensor refreshes some scopes, the audit follows once none of them is in progress
@dg.asset(group_name=AUDIT_GROUP, code_version="1", kinds={"pandas", "parquet"},
          automation_condition=dg.AutomationCondition.eager())
def audit_tables(context: dg.AssetExecutionContext, claims_config: ClaimsConfig, page_cache: PageCacheResource,
                 claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages],
                 priors: dict[str, ScopePriors]) -> dg.MaterializeResult[None]:
    """Every scope's claims, pages and priors as parquet tables, with the headline numbers (total, by prior,
    TOKENS_ABSENT, CONTENT_CHANGED, stale_changed, flagged) and each scope's findings. Checked by a blocking
    check before the report. Which scopes to look at: the by_scope table below, and the result line of each
    failed (warning) check on the Checks tab, e.g. "xa: 1 stale_changed"."""
    from claims_pipeline.steps.audit.cross_scope import audit_scopes

    home = claims_config.home_dir
    with page_cache.open() as cache:
        done = audit_scopes(home, claims_config.prior_rules, claims, fetched_pages, priors, cache, claims_config.now(),
                            list(context.instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME)))
    if done.reread:
        context.log.info(f"{done.reread} claims read again on a newer fetch of their page by another scope")
    return dg.MaterializeResult(metadata=audit_metadata(done.audit, done.tables["priors"].parent, home))


# The report follows the tables (eager), but never tables whose blocking check failed: within one run the
# check blocks the report's step; a run started by the automation sensor after a run that materialized only
# audit_tables would otherwise write the report from tables known to be wrong.
REPORT_CONDITION = dg.AutomationCondition.eager() & dg.AutomationCondition.all_deps_blocking_checks_passed()


@dg.asset(group_name=AUDIT_GROUP, code_version="1", kinds={"html", "markdown"}, deps=[audit_tables],
          automation_condition=REPORT_CONDITION)
def audit_report(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.MaterializeResult[None]:
    """report.md, report.html and report.json from the checked tables, with the headline numbers and the
    flagged claims here too; reports/LATEST names the newest."""
    from claims_pipeline.steps.audit.publish import TablesReplaced, publish_report

    home = claims_config.home_dir
    try:
        published = publish_report(home, claims_config.reports_dir,
                                   own_tables_run_at=tables_written_by_this_run(context))
    except TablesReplaced as exc:
        raise dg.Failure(description=str(exc)) from None
    return dg.MaterializeResult(metadata=report_metadata(published, home))


def tables_written_by_this_run(context: dg.AssetExecutionContext) -> str | None:
    """run_at of the tables this run's audit_tables step wrote; None when this run did not write them (the
    report of tables an earlier run wrote and checked, as the automation sensor runs it)."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=audit_tables.key), limit=20, ascending=False).records
    for record in records:
        if record.run_id == context.run_id:
            value = record.asset_materialization.metadata.get("run_at") if record.asset_materialization else None
            return str(value.value) if value is not None else None
    return None
