"""The cost-bounded worklist: fetch-free sampling of claims (the reference scoring, docs/decisions/0001) and the
worklist JSON (its schema).

The age and "never verified" terms use ``last_verified``: the inline stamp's date, else the file's ``Last
verified`` footer (docs/decisions/0002), so a claim in a file with a footer ages from it rather than scoring
+50. Only an inline stamp carries a stale marker (+100).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import UTC, date, datetime
from typing import Any

from claims_pipeline.common.text_safety import json_escaped
from claims_pipeline.config.settings import SamplingWeights
from claims_pipeline.corpus.records import ClaimRecord
from claims_pipeline.corpus.tiers import SECONDARY_TIER, is_official
from claims_pipeline.priors import SOURCE_UNAVAILABLE, TOKENS_ABSENT, Prior
from claims_pipeline.report.audit import is_stale_changed
from claims_pipeline.store.records import PageState

UNPARSEABLE_AGE_DAYS = 9999  # an unreadable date sorts as very old (the reference scoring)
WORKLIST_VERSION = 1
DIFF_EXCERPT_LINES = 12


def _as_date(now: datetime | date) -> date:
    if isinstance(now, datetime):
        return (now.astimezone(UTC) if now.tzinfo else now).date()
    return now


def selection_score(claim: ClaimRecord, weights: SamplingWeights, rng: random.Random, now: datetime | date,
                    changed_at: str | None = None) -> float:
    """Higher = review sooner. Stale marker +100; never verified +50, else +8 per 30 days of age;
    a statute or money value +10; the page cache already knows the cited page changed after the claim was
    last verified (changed_at, no fetch) +150; an official source +40, a secondary one +20 (the project's own
    pages +0); plus a random tie-break in [0, 1)."""
    s = 0.0
    if changed_at and is_stale_changed(claim.last_verified, changed_at, True):
        s += weights.changed_after_verified
    if claim.inline_stamp is not None and claim.inline_stamp.is_stale:
        s += weights.stale_marker
    if not claim.last_verified:
        s += weights.never_verified
    else:
        try:
            age = max(0, (_as_date(now) - date.fromisoformat(claim.last_verified[:10])).days)
        except ValueError:
            age = UNPARSEABLE_AGE_DAYS
        s += (age / 30.0) * weights.stamp_age_per_30d
    if any(v.type in ("statute", "money") for v in claim.values):
        s += weights.salient_statute_or_money
    s += weights.official_source if is_official(claim.source_tier) else \
        weights.secondary_source if claim.source_tier == SECONDARY_TIER else 0.0
    return s + rng.random()


def select_sample(
    claims: list[ClaimRecord],
    n: int,
    seed: int,
    now: datetime | date,
    weights: SamplingWeights | None = None,
    changed_at_of: dict[str, str] | None = None,
) -> list[ClaimRecord]:
    """The n highest-scoring claims; deterministic for the same claims, seed, day and cache. changed_at_of maps a
    cited URL to its latest confirmed change the cache knows of (no fetch: the selection stays fetch-free)."""
    rng = random.Random(seed)
    w = weights or SamplingWeights()
    known = changed_at_of or {}
    scored = [(selection_score(c, w, rng, now, known.get(c.source_url)), i, c) for i, c in enumerate(claims)]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [c for _, _, c in scored[: max(0, n)]]


def _diff_excerpt(diff: str | None) -> str | None:
    if not diff:
        return None
    lines = diff.splitlines()
    cut = lines[:DIFF_EXCERPT_LINES]
    return "\n".join(cut) + (f"\n… ({len(lines) - len(cut)} more lines)" if len(lines) > len(cut) else "")


def worklist_item(claim: ClaimRecord, page: PageState | None, prior: Prior | None) -> dict[str, Any]:
    item = claim.to_dict()
    for v in item["values"]:
        v.setdefault("norm", v["raw"])  # the reference worklist schema carries a normalised form
    prior = prior or Prior(SOURCE_UNAVAILABLE, missing_tokens=[v.raw for v in claim.salient_values], fetch_note="not fetched")
    changed = bool(page.content_changed) if page else False
    item.update(
        {
            "fetch_status": str(page.fetch_status) if page else "UNAVAILABLE",
            "http_status": page.http_status if page else None,
            "content_hash": (page.text_hash or "") if page else "",
            "fetched_at": page.fetched_at if page else "",
            "content_kind": page.content_kind if page else "",
            "content_changed": changed,
            "prev_fetched_at": (page.changed_at or "") if page and changed else "",
            "prior": prior.prior,
            "matched_tokens": prior.matched_tokens,
            "strong_matched": prior.strong_matched,
            "missing_tokens": prior.missing_tokens,
            "excerpts": prior.excerpts,
            "fetch_note": prior.fetch_note or (page.note if page else "not fetched"),
            # added fields
            "hits": [h.to_dict() for h in prior.hits],
            "context_words": prior.context_words,
            "changed_at": page.changed_at if page else None,
            "stale_changed": is_stale_changed(claim.last_verified, page.changed_at if page else None, changed),
            "diff_excerpt": _diff_excerpt(page.diff) if page else None,
        }
    )
    return item


def build_worklist(
    claims: list[ClaimRecord],
    pages: dict[str, PageState],
    priors: dict[str, Prior],
    *,
    generated_at: datetime,
) -> dict[str, Any]:
    """The worklist JSON: {version, generated_at, stats, items}, items in the given (sampled) order."""
    items = [worklist_item(c, pages.get(c.source_url), priors.get(c.id)) for c in claims]
    by_prior = Counter(i["prior"] for i in items)
    by_scope = Counter(i["scope"] for i in items)
    absent = [i for i in items if i["prior"] == TOKENS_ABSENT]
    return {
        "version": WORKLIST_VERSION,
        "generated_at": generated_at.isoformat(),
        "stats": {
            "total": len(items),
            "by_prior": dict(sorted(by_prior.items())),
            "by_scope_top": dict(by_scope.most_common(15)),
            "tokens_absent_count": len(absent),
            "tokens_absent": [
                {"id": i["id"], "claim": i["claim_text"][:120], "url": i["source_url"], "missing": i["missing_tokens"][:6]}
                for i in absent[:40]
            ],
            "stale_changed_count": sum(1 for i in items if i["stale_changed"]),
        },
        "items": items,
    }


def worklist_json(doc: dict[str, Any]) -> str:
    """The worklist file's text. Page excerpts inside keep their characters, but control and bidi characters are
    written as \\u escapes: the same data, nothing a terminal showing the file obeys."""
    return json_escaped(json.dumps(doc, ensure_ascii=False, indent=2))
