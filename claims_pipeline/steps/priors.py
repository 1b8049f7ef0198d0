"""The priors step, per scope: does the cited page still carry each claim's figure? (priors/build.py)"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from claims_pipeline.common import stopping
from claims_pipeline.priors.build import PriorRules
from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.pages.fetched import ScopePages, with_text
from claims_pipeline.steps.stored import StoredStep
from claims_pipeline.store.cache import PageCache

log = logging.getLogger(__name__)


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


def _scope_priors(rules: PriorRules, claims: ScopeClaims, pages: ScopePages, cache: PageCache) -> ScopePriors:
    from claims_pipeline.priors import build_prior

    with_texts = {u: with_text(p, cache) for u, p in pages.pages.items()}
    return ScopePriors([{"id": c.id, **build_prior(c, with_texts.get(c.source_url), rules).to_dict()}
                        for c in claims.records()])


def _local_blobs(cache: PageCache) -> bool:
    """Forked workers read page texts from the inherited cache: only a local blob store is safe to share (an
    object store's client and its connections are not)."""
    from claims_pipeline.store.blobs import BlobStore

    return isinstance(getattr(cache, "blobs", None), BlobStore)


def priors_by_scope(rules: PriorRules, claims: dict[str, ScopeClaims], fetched_pages: dict[str, ScopePages],
                    cache: PageCache) -> PriorsOfScopes:
    """Per claim: does the cited page still carry the figure? A big batch is computed by a fork pool
    (`priors.workers`, priors/pool.py); the values are the serial ones, in the same order."""
    from claims_pipeline.priors.gc_passes import fewer_gc_passes
    from claims_pipeline.priors.pool import map_scopes, pool_size

    def one_scope(scope: str) -> ScopePriors:
        stopping.check()  # a stop ends the priors at the next scope (in a forked worker it is never set)
        return _scope_priors(rules, claims[scope], fetched_pages.get(scope, ScopePages({})), cache)

    scopes = list(claims)
    workers = pool_size(rules.priors.workers, len(scopes), sum(len(v.claims) for v in claims.values()))
    with fewer_gc_passes():  # the forked workers inherit it
        if workers > 1 and _local_blobs(cache):
            try:
                return PriorsOfScopes(dict(zip(scopes, map_scopes(one_scope, scopes, workers), strict=True)), claims)
            except Exception as exc:  # a worker killed, a result that cannot be pickled: the serial loop gives the same
                log.warning("priors pool of %d failed (%r); computing serially", workers, exc)
        return PriorsOfScopes({scope: one_scope(scope) for scope in scopes}, claims)
