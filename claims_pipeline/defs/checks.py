"""Asset checks. The blocking one guards the numbers a reviewer reads; the WARN ones surface findings."""


import json
from typing import Any

import dagster as dg

from claims_pipeline.defs.audit_assets import (
    ABSENT_HEADERS,
    STALE_HEADERS,
    absent_rows,
    audit_report,
    audit_tables,
    stale_rows,
)
from claims_pipeline.defs.audit_tables_io import read_audit
from claims_pipeline.defs.corpus_files import scope_file_hashes
from claims_pipeline.defs.metadata import md_list, md_table
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.defs.storage import scope_file


@dg.asset_check(asset=audit_tables, blocking=True, description=(
    "Recomputes the headline numbers (totals, by-prior counts, flagged = distinct claims in TOKENS_ABSENT ∪ "
    "CONTENT_CHANGED) from the stored tables and compares them with the audit's own count. A mismatch is an "
    "engine bug, not a finding: the run stops before the report is written."))
def headline_numbers_match_tables(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    from claims_pipeline.audit import headline_mismatches, headline_numbers

    audit = read_audit(claims_config.load().home_dir)
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


@dg.asset_check(asset=audit_tables, description="Claims whose figure is not on the cited page (TOKENS_ABSENT): a tripwire for review.")
def no_tokens_absent(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    audit = read_audit(claims_config.load().home_dir)
    return _review_warning(absent_rows(audit.priors), ABSENT_HEADERS)


@dg.asset_check(asset=audit_tables, description="Claims whose cited page changed after they were last verified (stale_changed): re-verify first.")
def no_stale_changed(claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    audit = read_audit(claims_config.load().home_dir)
    return _review_warning(stale_rows(audit.priors), STALE_HEADERS)


def _review_warning(rows: list, headers: list[str]) -> dg.AssetCheckResult:
    """A WARN result listing the claims a reviewer should look at (a finding, not an engine failure)."""
    return dg.AssetCheckResult(
        passed=not rows,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"count": len(rows), "claims": md_table(headers, rows)},
    )


def corpus_drift(instance: dg.DagsterInstance, claims_config: ClaimsConfig) -> list[str]:
    """Corpus files whose bytes differ from what corpus_documents recorded (or that appeared/vanished)."""
    from claims_pipeline.corpus.extract import list_scopes

    settings = claims_config.load()
    now = list_scopes(settings)
    drift: list[str] = []
    for scope in instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME):
        path = scope_file(settings.home_dir, dg.AssetKey("corpus_documents"), scope)
        if not path.is_file():
            continue
        recorded: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))["files"]
        current = scope_file_hashes(now.get(scope, []), settings.corpus_dir)
        for rel in sorted(set(recorded) | set(current)):
            if recorded.get(rel) != current.get(rel):
                what = "appeared" if rel not in recorded else "vanished" if rel not in current else "bytes differ"
                drift.append(f"{rel}: {what}")
    return drift


@dg.asset_check(asset=audit_report, description=(
    "Every corpus file is byte-identical to what corpus_documents hashed: the pipeline never edits the corpus "
    "and never re-stamps a date. (If you edited the corpus meanwhile, rematerialize its scope.)"))
def corpus_untouched(context: dg.AssetCheckExecutionContext, claims_config: ClaimsConfig) -> dg.AssetCheckResult:
    drift = corpus_drift(context.instance, claims_config)
    return dg.AssetCheckResult(
        passed=not drift,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"changed_files": md_list(drift)},
    )


ALL_CHECKS: list[Any] = [headline_numbers_match_tables, no_tokens_absent, no_stale_changed, corpus_untouched]
