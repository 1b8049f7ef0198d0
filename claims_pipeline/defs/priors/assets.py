"""Priors, per scope: does the cited page still carry the claim's figure?"""


from typing import Any

import dagster as dg

from claims_pipeline.defs.metadata import CLAIM_LIMIT, WHERE_LIMIT, counts, md_table
from claims_pipeline.defs.resources import ClaimsConfig, PageCacheResource
from claims_pipeline.defs.scoped import scope_asset, scoped_output
from claims_pipeline.report.md_tables import Link, prose, where
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.priors import ScopePriors, priors_by_scope

TOKENS_ABSENT_KEY = "tokens_absent"  # metadata key the tokens_absent_by_scope check reads back (defs/priors/checks.py)


@scope_asset(kinds={"python"})
def priors(context: dg.AssetExecutionContext, claims_config: ClaimsConfig, page_cache: PageCacheResource,
           claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages]) -> dg.Output[dict[str, ScopePriors]]:
    """Per claim: TOKENS_PRESENT / WEAK_MATCH / TOKENS_ABSENT / SOURCE_BINARY / PDF_NO_TEXT / SOURCE_UNAVAILABLE,
    with the matched and missing figures and page excerpts. A tripwire for a reviewer, not a verdict."""
    with page_cache.open() as cache:
        result = priors_by_scope(claims_config.prior_rules, claims, fetched_pages, cache)

    def metadata_of(scope: str) -> dict[str, Any]:
        rows = result.claim_rows(scope)  # the claims as stored (JSON dicts), not rebuilt as records
        absent = [(c, p) for c, p in rows if p["prior"] == "TOKENS_ABSENT"]
        return {
            "claims": len(rows),
            "by_prior": dg.MetadataValue.json(counts(p["prior"] for _, p in rows)),
            TOKENS_ABSENT_KEY: len(absent),
            "tokens_absent_claims": md_table(
                ["where", "claim", "missing", "url"],
                ([where(c.get("file", ""), int(c["line_no"])), prose(c["claim_text"]),
                  ", ".join(p["missing_tokens"][:6]), Link(c["source_url"])] for c, p in absent),
                limits=[WHERE_LIMIT, CLAIM_LIMIT, 40], cut_note=True),
        }

    return scoped_output(context, result.values, metadata_of)
