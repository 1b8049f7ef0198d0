"""The check on the priors of each scope: claims whose figure is not on the cited page (TOKENS_ABSENT). It covers
every scope, from the metadata of each scope's latest materialization (defs/scope_state.py)."""

import dagster as dg

from claims_pipeline.defs.priors.assets import TOKENS_ABSENT_KEY, priors
from claims_pipeline.defs.scope_state import count, latest_by_scope, scope_result


@dg.asset_check(asset=priors, description=(
    "Fails when any scope has claims whose figure is not on the cited page (TOKENS_ABSENT), and names those "
    "scopes. A tripwire for review, not a verdict. Covers every scope, not only this run's."))
def tokens_absent_by_scope(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    latest = latest_by_scope(context.instance, priors.key)
    return scope_result({s: count(m, TOKENS_ABSENT_KEY) for s, m in latest.items()}, "TOKENS_ABSENT",
                        checked=len(latest))
