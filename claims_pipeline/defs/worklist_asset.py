"""The cost-bounded LLM worklist: a fetch-free sample of claims (reference §5), their pages fetched with the
cache's TTL, priors, written as the original's worklist JSON (plus our added fields)."""


from dataclasses import replace
from typing import Any

import dagster as dg

from claims_pipeline.defs.fetch_runs import fetch_run_id
from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource, PageCacheResource


class WorklistConfig(dg.Config):
    sample: int = 0  # 0 = sampling.default_sample from the settings
    scope: str = ""  # like the CLI's --scope: equal to X or ending in /X
    section: str = ""
    include_secondary: bool = False
    seed: int = -1  # -1 = sampling.seed from the settings
    out: str = ""  # default <home>/worklist.json


@dg.asset(group_name="audit", code_version="1", deps=["corpus_documents"], kinds={"json"})
def worklist(
    context: dg.AssetExecutionContext,
    config: WorklistConfig,
    claims_config: ClaimsConfig,
    fetcher: FetcherResource,
    page_cache: PageCacheResource,
) -> dg.MaterializeResult:
    """The cost-bounded sample of claims for the LLM verdict layer (quote-or-abstain): the highest-priority
    claims (stale-marked, never verified, oldest stamp, statute or money figures), their pages fetched only when
    older than cache.ttl_days, each with its prior and page excerpts. Written to worklist.json."""
    from pathlib import Path

    from claims_pipeline.commands.inputs import corpus_missing_message, corpus_origin, no_scope_message
    from claims_pipeline.defs.audit_tables_io import audit_lock
    from claims_pipeline.corpus.extract import extract_corpus
    from claims_pipeline.corpus.scopes import resolve_scope_filter
    from claims_pipeline.pages import refresh_pages
    from claims_pipeline.priors import build_prior
    from claims_pipeline.sampling import build_worklist, select_sample, worklist_json
    from claims_pipeline.store.files import locked, write_text_atomically
    from claims_pipeline.store.recent_changes import load_reported, previous_audit_run, shown_in_last_report, unreported
    from claims_pipeline.urls import normalize_url

    settings = fetcher.settings()
    now = claims_config.now()
    # A missing corpus or an unmatched scope fails the run: it must not overwrite the last worklist with 0 items.
    missing = corpus_missing_message(settings, corpus_origin(Path(claims_config.config_path) if claims_config.config_path else None))
    if missing:
        raise dg.Failure(missing)
    scopes = None
    if config.scope:
        from claims_pipeline.corpus.extract import list_scopes

        all_scopes = list(list_scopes(settings))
        scopes = resolve_scope_filter(all_scopes, config.scope)
        if not scopes:
            raise dg.Failure(no_scope_message(config.scope, all_scopes))
    extraction = extract_corpus(settings, scopes=scopes, section=config.section or None, include_secondary=config.include_secondary)
    for w in extraction.warnings:
        context.log.warning(str(w))
    n = config.sample or settings.sampling.default_sample
    seed = settings.sampling.seed if config.seed < 0 else config.seed
    with page_cache.open(settings) as cache:
        # fetch-free: which cited pages the cache already knows changed (claims verified before that come first)
        cited = sorted({c.source_url for c in extraction.claims})
        known = cache.states([normalize_url(u) for u in cited], with_text=False)
        changed_at_of = {u: s.changed_at for u in cited if (s := known.get(normalize_url(u))) and s.changed_at}
    sample = select_sample(extraction.claims, n, seed, now, settings.sampling.priority_weights, changed_at_of)
    urls = sorted({c.source_url for c in sample})
    with page_cache.open(settings) as cache:
        # only the sample's pages, and only those older than cache.ttl_days: the cost bound of the worklist
        fetched = refresh_pages(settings, urls, cache=cache, force=False, now=now, run_id=fetch_run_id(context.run)) if urls else {}
        identity = cache.identity()
    # a page change no report showed yet, or the one the latest report showed: the worklist is built to act on it
    with locked(audit_lock(settings.home_dir), shared=True):  # the two as one report left them
        reported = load_reported(settings.home_dir, identity)
        last_report = previous_audit_run(settings.home_dir)
    pages = {}
    for u in urls:
        if (k := normalize_url(u)) in fetched:
            p = fetched[k]
            flag = unreported(p, k, reported) or shown_in_last_report(p, k, reported, last_report)
            pages[u] = p if flag == p.content_changed else replace(p, content_changed=flag)
    prior_of = {c.id: build_prior(c, pages.get(c.source_url), settings) for c in sample}
    doc = build_worklist(sample, pages, prior_of, generated_at=now)
    out = Path(config.out) if config.out else settings.home_dir / "worklist.json"
    write_text_atomically(out, worklist_json(doc))
    stats: dict[str, Any] = doc.get("stats", {})
    return dg.MaterializeResult(
        metadata={"path": dg.MetadataValue.path(str(out)), "items": len(doc.get("items", [])), "stats": dg.MetadataValue.json(stats)}
    )
