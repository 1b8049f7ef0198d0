"""The cost-bounded LLM worklist: a fetch-free sample of claims, only the sample's pages fetched (within the
cache's TTL), each claim with its prior and page excerpts, written as worklist JSON.

Called by the worklist asset (defs/worklist) that `claims-pipeline worklist` materializes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claims_pipeline.config.corpus_source import CorpusSource
    from claims_pipeline.config.settings import SamplingSettings
    from claims_pipeline.priors.build import PriorRules
    from claims_pipeline.store.cache import PageCache
    from claims_pipeline.store.records import PageState


class WorklistInputError(ValueError):
    """A missing corpus or a scope that matches nothing: the last worklist must not be replaced by an empty one."""


@dataclass(frozen=True)
class WorklistOptions:
    sample: int = 0  # 0 = sampling.default_sample
    scope: str = ""  # equal to X or ending in /X
    section: str = ""
    include_secondary: bool = False
    seed: int = -1  # -1 = sampling.seed
    out: str = ""  # default <home>/worklist.json


@dataclass(frozen=True)
class WorklistSources:
    """What a worklist reads, picked from the settings at its entry point: the corpus, the sampling section, the
    prior rules and the home (the reported page changes, the default output). The sample's pages come from the
    page cache the entry point opens and its fetch of the given URLs (the fetch settings stay there)."""

    corpus: CorpusSource
    sampling: SamplingSettings
    priors: PriorRules
    home: Path
    open_cache: Callable[[], PageCache]
    fetch: Callable[[PageCache, list[str]], dict[str, PageState]]  # {normalised URL: state}, within cache.ttl_days


@dataclass
class Worklist:
    doc: dict[str, Any]
    path: Path
    warnings: list[str]


def make_worklist(sources: WorklistSources, options: WorklistOptions, now: datetime, *, corpus_origin: str) -> Worklist:
    from claims_pipeline.common.urls import normalize_url
    from claims_pipeline.config.home import HomeLayout
    from claims_pipeline.corpus.extract import extract_corpus
    from claims_pipeline.corpus.scopes import no_scope_message, nothing_read_message, resolve_scope_filter, walk_corpus
    from claims_pipeline.priors import build_prior
    from claims_pipeline.steps.audit.tables import audit_lock
    from claims_pipeline.steps.worklist.sampling import build_worklist, select_sample, worklist_json
    from claims_pipeline.store.files import locked, write_text_atomically
    from claims_pipeline.store.recent_changes import load_reported, previous_audit_run, shown_in_last_report, unreported

    corpus, sampling = sources.corpus, sources.sampling
    if not corpus.root.is_dir():
        raise WorklistInputError(f"corpus directory not found: {corpus.root} ({corpus_origin})")
    walk = walk_corpus(corpus)
    if not walk.files:  # an empty worklist would replace the last one: say why nothing was read instead
        raise WorklistInputError(nothing_read_message(corpus, walk))
    scopes = None
    if options.scope:
        all_scopes = list(walk.scopes)
        scopes = resolve_scope_filter(all_scopes, options.scope)
        if not scopes:
            raise WorklistInputError(no_scope_message(options.scope, all_scopes))
    extraction = extract_corpus(corpus, scopes=scopes, section=options.section or None,
                                include_secondary=options.include_secondary)
    n = options.sample or sampling.default_sample
    seed = sampling.seed if options.seed < 0 else options.seed
    cache = sources.open_cache()
    try:
        # fetch-free: which cited pages the cache already knows changed (claims verified before that come first)
        cited = sorted({c.source_url for c in extraction.claims})
        known = cache.states([normalize_url(u) for u in cited], with_text=False)
        changed_at_of = {u: s.changed_at for u in cited if (s := known.get(normalize_url(u))) and s.changed_at}
        sample = select_sample(extraction.claims, n, seed, now, sampling.priority_weights, changed_at_of)
        urls = sorted({c.source_url for c in sample})
        # only the sample's pages, and only those older than cache.ttl_days: the cost bound of the worklist
        fetched = sources.fetch(cache, urls) if urls else {}
        identity = cache.identity()
    finally:
        cache.close()
    home = sources.home
    # a page change no report showed yet, or the one the latest report showed: the worklist is built to act on it
    with locked(audit_lock(home), shared=True):  # the two as one report left them
        reported = load_reported(home, identity)
        last_report = previous_audit_run(home)
    pages = {}
    for u in urls:
        if (k := normalize_url(u)) in fetched:
            p = fetched[k]
            flag = unreported(p, k, reported) or shown_in_last_report(p, k, reported, last_report)
            pages[u] = p if flag == p.content_changed else replace(p, content_changed=flag)
    prior_of = {c.id: build_prior(c, pages.get(c.source_url), sources.priors) for c in sample}
    doc = build_worklist(sample, pages, prior_of, generated_at=now)
    out = Path(options.out) if options.out else HomeLayout(home).worklist_file
    write_text_atomically(out, worklist_json(doc))
    return Worklist(doc, out, [str(w) for w in extraction.warnings])
