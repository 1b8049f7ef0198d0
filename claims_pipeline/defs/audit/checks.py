"""Checks on the audit. The blocking one guards the numbers a reviewer reads; the WARN ones are findings, named
by scope in their result so the lineage shows where to look; corpus_untouched proves the corpus was not edited."""


from collections import Counter
from collections.abc import Iterator

import dagster as dg

from claims_pipeline.defs.audit import assets
from claims_pipeline.defs.audit.ui import (
    ABSENT_HEADERS,
    CHANGED_HEADERS,
    CLAIM_LIMITS,
    STALE_HEADERS,
    absent_rows,
    changed_page_rows,
    stale_rows,
)
from claims_pipeline.defs.metadata import md_list, md_table, some_scopes, top_scopes
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.steps.audit.tables import read_audit, read_priors


@dg.asset_check(asset=assets.audit_tables, blocking=True, description=(
    "Recomputes the headline numbers (totals, by-prior counts, flagged = distinct claims in TOKENS_ABSENT ∪ "
    "CONTENT_CHANGED) from the stored tables and compares them with the audit's own count. A mismatch is an "
    "engine bug, not a finding: the run stops before the report is written."))
def recount_matches_headline(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    from claims_pipeline.report.audit import headline_mismatches, headline_numbers

    audit = read_audit(claims_config.home_dir)
    recomputed = headline_numbers(audit.claims, audit.pages, audit.priors)
    problems = headline_mismatches(audit.headline, recomputed)
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "stored": dg.MetadataValue.json(audit.headline),
            "recomputed": dg.MetadataValue.json(recomputed),
            "mismatches": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "_(none)_"),
        },
    )


@dg.asset_check(asset=assets.audit_tables, description="Claims whose figure is not on the cited page (TOKENS_ABSENT): a tripwire for review.")
def no_tokens_absent(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    return review_warning(absent_rows(read_priors(claims_config.home_dir)), ABSENT_HEADERS, "TOKENS_ABSENT")


@dg.asset_check(asset=assets.audit_tables, description="Claims whose cited page changed after they were last verified (stale_changed): re-verify first.")
def no_stale_changed(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    return review_warning(stale_rows(read_priors(claims_config.home_dir)), STALE_HEADERS, "stale_changed")


@dg.asset_check(asset=assets.audit_tables, description="Cited pages whose text changed since the last report showed them (CONTENT_CHANGED): read the diff in the report.")
def no_cited_page_changed(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    return review_warning(changed_page_rows(read_priors(claims_config.home_dir)), CHANGED_HEADERS, "changed page(s)")


# The three review checks read the priors table only (one of the audit's four tables), not the whole audit.
def review_warning(rows: list[list[object]], headers: list[str], what: str) -> dg.AssetCheckResult:
    """A WARN result listing what to look at; its description names the scopes ("xa: 2 stale_changed"), so the
    lineage and the catalog show where without opening the check."""
    by_scope = Counter(str(r[0]) for r in rows)
    description = some_scopes(dict(by_scope), what) if rows else f"no {what} in any scope"
    return dg.AssetCheckResult(
        passed=not rows,
        severity=dg.AssetCheckSeverity.WARN,
        description=description,
        metadata={"count": len(rows), "scopes": dg.MetadataValue.json(top_scopes(dict(by_scope))), "scopes_count": len(by_scope),
                  "claims": md_table(headers, rows, full="the report (report.md, report.html) and priors.parquet",
                                     limits=CLAIM_LIMITS, cut_note=True)},
    )


_UNTOUCHED = ("Every corpus file is byte-identical to what corpus_documents hashed: the pipeline never edits the "
              "corpus and never re-stamps a date. (If you edited the corpus meanwhile, rematerialize its scope.)")


# One check, run after each report: the audit report's, and the verdict report's (the verdict step, which writes
# corrections.patch, runs after the audit report's check and must be proven not to have touched the corpus either).
@dg.multi_asset_check(can_subset=True, specs=[
    dg.AssetCheckSpec("corpus_untouched", asset=assets.audit_report, description=_UNTOUCHED),
    dg.AssetCheckSpec("corpus_untouched", asset="verdict_report", description=_UNTOUCHED),
])
def corpus_untouched(context: dg.AssetCheckExecutionContext, claims_config: ClaimsConfig) -> Iterator[dg.AssetCheckResult]:
    from claims_pipeline.steps.corpus import corpus_drift

    drift = corpus_drift(claims_config.corpus, claims_config.home_dir,
                         context.instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    for key in sorted(context.selected_asset_check_keys, key=lambda k: k.asset_key.to_user_string()):
        yield dg.AssetCheckResult(asset_key=key.asset_key, check_name=key.name, passed=not drift,
                                  severity=dg.AssetCheckSeverity.ERROR, metadata={"changed_files": md_list(drift)})
