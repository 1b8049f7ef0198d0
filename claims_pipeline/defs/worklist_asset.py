"""The cost-bounded LLM worklist: a fetch-free sample of claims (reference §5), their pages fetched with the
cache's TTL, priors, written as the original's worklist JSON (plus our added fields)."""


import json
from typing import Any

import dagster as dg

from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource, PageCacheResource


class WorklistConfig(dg.Config):
    sample: int = 0  # 0 = sampling.default_sample from the settings
    scope: str = ""  # like the CLI's --scope: equal to X or ending in /X
    section: str = ""
    include_secondary: bool = False
    seed: int = -1  # -1 = sampling.seed from the settings
    out: str = ""  # default <home>/worklist.json


@dg.asset(group_name="audit", code_version="1", deps=["corpus_documents"])
def worklist(
    context: dg.AssetExecutionContext,
    config: WorklistConfig,
    claims_config: ClaimsConfig,
    fetcher: FetcherResource,
    page_cache: PageCacheResource,
) -> dg.MaterializeResult:
    from pathlib import Path

    from claims_pipeline.sampling import write_worklist_for

    settings = fetcher.settings()
    with page_cache.open(settings) as cache:
        doc = write_worklist_for(
            settings,
            cache=cache,
            n=config.sample or settings.sampling.default_sample,
            seed=settings.sampling.seed if config.seed < 0 else config.seed,
            scope=config.scope or None,
            section=config.section or None,
            include_secondary=config.include_secondary,
            now=claims_config.now(),
        )
    out = Path(config.out) if config.out else settings.home_dir / "worklist.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    stats: dict[str, Any] = doc.get("stats", {})
    return dg.MaterializeResult(
        metadata={"path": dg.MetadataValue.path(str(out)), "items": len(doc.get("items", [])), "stats": dg.MetadataValue.json(stats)}
    )
