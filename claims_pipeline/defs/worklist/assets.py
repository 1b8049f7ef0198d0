"""The cost-bounded worklist of claims for the verdict step (worklist.py)."""


import dagster as dg

from claims_pipeline.defs.fetch_runs import fetch_run_id
from claims_pipeline.defs.groups import WORKLIST_GROUP
from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource


class WorklistConfig(dg.Config):
    sample: int = 0  # 0 = sampling.default_sample from the settings
    scope: str = ""  # like the CLI's --scope: equal to X or ending in /X
    section: str = ""
    include_secondary: bool = False
    seed: int = -1  # -1 = sampling.seed from the settings
    out: str = ""  # default <home>/worklist.json


@dg.asset(group_name=WORKLIST_GROUP, code_version="1", deps=["corpus_documents"], kinds={"json"})
def worklist(context: dg.AssetExecutionContext, config: WorklistConfig, claims_config: ClaimsConfig,
             fetcher: FetcherResource) -> dg.MaterializeResult[None]:
    """The highest-priority claims (stale-marked, never verified, oldest stamp, statute or money figures), their
    pages fetched only when older than cache.ttl_days, each with its prior and page excerpts."""
    from claims_pipeline.config.settings import corpus_origin
    from claims_pipeline.steps.pages.refresh import refresh_pages
    from claims_pipeline.steps.worklist.build import WorklistInputError, WorklistOptions, WorklistSources, make_worklist
    from claims_pipeline.store.cache import PageCache
    from claims_pipeline.store.records import PageState

    options = WorklistOptions(**config.model_dump())
    now, run_id = claims_config.now(), fetch_run_id(context.run)
    fetching = fetcher.fetching()  # the demo's fetcher adds its fixture routes

    def fetch(cache: PageCache, urls: list[str]) -> dict[str, PageState]:
        return refresh_pages(fetching, urls, cache=cache, force=False, now=now, run_id=run_id)

    try:
        sources = WorklistSources(claims_config.corpus, claims_config.sampling, claims_config.prior_rules,
                                  claims_config.home_dir, lambda: PageCache.at(claims_config.page_cache), fetch)
        made = make_worklist(sources, options, now, corpus_origin=corpus_origin(claims_config.config_file))
    except WorklistInputError as exc:  # fails the run: the last worklist is not replaced by an empty one
        raise dg.Failure(str(exc)) from None
    for warning in made.warnings:
        context.log.warning(warning)
    return dg.MaterializeResult(metadata={"path": dg.MetadataValue.path(str(made.path)),
                                          "items": len(made.doc.get("items", [])),
                                          "stats": dg.MetadataValue.json(made.doc.get("stats", {}))})
