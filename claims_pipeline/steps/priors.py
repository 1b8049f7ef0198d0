"""The priors step, per scope: does the cited page still carry each claim's figure? (priors/build.py)"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from claims_pipeline.common import stopping
from claims_pipeline.priors.build import PriorRules
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages
from claims_pipeline.steps.stored import StoredStep
from claims_pipeline.store.blobs import TextBlobs
from claims_pipeline.store.cache import PageCache

log = logging.getLogger(__name__)

MIN_CLAIMS = 2_000  # below this a pool does not pay for its start-up and the results' pickling
CHUNKS_PER_WORKER = 16


@dataclass(frozen=True)
class ScopePriors:
    """One row per claim of the scope, in the claims' order: {"id": claim id, **Prior.to_dict()}.

    Kept in their stored form, as the claims are (steps/corpus.py ScopeClaims): the audit reads them as they are."""

    rows: list[dict[str, Any]]

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {row["id"]: row for row in self.rows}

    def to_json(self) -> list[dict[str, Any]]:
        return self.rows

    @classmethod
    def from_json(cls, data: Any) -> ScopePriors:
        return cls(list(data))


_str, _int, _strs = pa.string(), pa.int64(), pa.list_(pa.string())
HIT_FORM = pa.struct([
    ("value", _str), ("type", _str), ("found", pa.bool_()), ("strong", pa.bool_()), ("matched_text", _str),
    ("position", _int), ("proximity_chars", _int), ("near_words", _strs), ("score", pa.float64()),
    ("occurrences", _int), ("excerpt_index", _int), ("excerpt_start", _int), ("excerpt_end", _int)])
# a row: the claim's id, then Prior.to_dict() (priors/build.py), field by field in its order
PRIORS = StoredStep("priors", ScopePriors, pa.list_(pa.struct([
    ("id", _str), ("prior", _str), ("matched_tokens", _strs), ("strong_matched", _strs), ("missing_tokens", _strs),
    ("excerpts", _strs), ("fetch_note", _str), ("hits", pa.list_(HIT_FORM)), ("context_words", _strs)])))


@dataclass
class PriorsOfScopes:
    values: dict[str, ScopePriors]
    claims: dict[str, ScopeClaims]  # the claims the priors were computed from

    def claim_rows(self, scope: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(claim as stored, prior) of one scope, in order: what the asset's metadata shows, without rebuilding
        every claim as a ClaimRecord (a serial second of the 100k audit's priors step per 10,000 claims)."""
        return list(zip(self.claims[scope].claims, self.values[scope].rows, strict=True))


def _scope_priors(rules: PriorRules, claims: ScopeClaims, pages: ScopePages, blobs: TextBlobs) -> ScopePriors:
    from claims_pipeline.priors import build_prior

    with_texts = {u: replace(p, text=blobs.get_text(p.text_hash)) if p.text_hash else p
                  for u, p in pages.pages.items()}
    return ScopePriors([{"id": c.id, **build_prior(c, with_texts.get(c.source_url), rules).to_dict()}
                        for c in claims.records()])


ScopeWork = tuple[ScopeClaims, ScopePages]


def priors_of_chunk(chunk: Sequence[ScopeWork], shared: tuple[PriorRules, TextBlobs]) -> list[ScopePriors]:
    """The priors of a chunk of scopes, in order (one pool chunk, or the whole batch). A stop ends them at the
    next scope (in a worker process too: the pool passes the stop on)."""
    from claims_pipeline.priors.gc_passes import fewer_gc_passes

    rules, blobs = shared
    out = []
    with fewer_gc_passes():
        for claims, pages in chunk:
            stopping.check()
            out.append(_scope_priors(rules, claims, pages, blobs))
    return out


def _local_blobs(cache: PageCache) -> bool:
    """Worker processes get the blob store pickled: only a local one (a folder) is known to travel (an object
    store's client and its connections may not)."""
    from claims_pipeline.store.blobs import BlobStore

    return isinstance(getattr(cache, "blobs", None), BlobStore)


def pool_size(setting: int, scopes: int, claims: int) -> int:
    """Processes to use: serial for one scope or when asked; auto only for a big batch."""
    from claims_pipeline.common.work_pool import pool_size as sized

    return 1 if scopes < 2 else sized(setting, claims >= MIN_CLAIMS, scopes)


def priors_by_scope(rules: PriorRules, claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages],
                    cache: PageCache) -> PriorsOfScopes:
    """Per claim: does the cited page still carry the figure? A big batch is computed by the common pool
    (`priors.workers`, common/work_pool.py); the values are the serial ones, in the same order."""
    from claims_pipeline.common.work_pool import chunked, map_chunks
    from claims_pipeline.priors.gc_passes import fewer_gc_passes

    scopes = list(claims)
    work: list[ScopeWork] = [(claims[s], fetched_pages.get(s, ScopePages({}))) for s in scopes]
    shared = (rules, cache.blobs)
    workers = pool_size(rules.priors.workers, len(scopes), sum(len(v.claims) for v in claims.values()))
    with fewer_gc_passes():
        if workers > 1 and _local_blobs(cache):
            try:
                parts = map_chunks(priors_of_chunk, chunked(work, workers * CHUNKS_PER_WORKER), shared, workers,
                                   "priors pool")
                values = [v for part in parts for v in part]
                return PriorsOfScopes(dict(zip(scopes, values, strict=True)), claims)
            except Exception as exc:  # a worker killed, a result that cannot be pickled: the serial loop gives the same
                log.warning("priors pool of %d failed (%r); computing serially", workers, exc)
        return PriorsOfScopes(dict(zip(scopes, priors_of_chunk(work, shared), strict=True)), claims)
