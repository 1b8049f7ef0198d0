"""Priors, per scope: does the cited page still carry the claim's figure?"""


from typing import Any

import dagster as dg

from claims_pipeline.defs.metadata import CLAIM_LIMIT, WHERE_LIMIT, Link, counts, md_table, prose, where
from claims_pipeline.defs.resources import ClaimsConfig, PageCacheResource
from claims_pipeline.defs.scoped import SCOPE_ASSET_ARGS, SCOPES_GROUP, scoped_output
from claims_pipeline.steps.scope_values import priors_by_scope


@dg.asset(group_name=SCOPES_GROUP, code_version="1", kinds={"python"}, **SCOPE_ASSET_ARGS)
def priors(context: dg.AssetExecutionContext, claims_config: ClaimsConfig, page_cache: PageCacheResource,
           claims: dict[str, Any], fetched_pages: dict[str, Any]) -> dg.Output:
    """Per claim: TOKENS_PRESENT / WEAK_MATCH / TOKENS_ABSENT / SOURCE_BINARY / PDF_NO_TEXT / SOURCE_UNAVAILABLE,
    with the matched and missing figures and page excerpts. A tripwire for a reviewer, not a verdict."""
    with page_cache.open() as cache:
        result = priors_by_scope(claims_config.load(), claims, fetched_pages, cache)

    def metadata_of(scope: str) -> dict[str, Any]:
        rows = result.claim_rows(scope)  # the claims as stored (JSON dicts), not rebuilt as records
        absent = [(c, p) for c, p in rows if p["prior"] == "TOKENS_ABSENT"]
        return {
            "claims": len(rows),
            "by_prior": dg.MetadataValue.json(counts(p["prior"] for _, p in rows)),
            "tokens_absent": len(absent),
            "tokens_absent_claims": md_table(
                ["where", "claim", "missing", "url"],
                ([where(c.get("file", ""), int(c["line_no"])), prose(c["claim_text"]),
                  ", ".join(p["missing_tokens"][:6]), Link(c["source_url"])] for c, p in absent),
                limits=[WHERE_LIMIT, CLAIM_LIMIT, 40], cut_note=True),
        }

    return scoped_output(context, result.values, metadata_of)
