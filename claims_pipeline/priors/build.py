"""build_prior: does the cited page still carry the claim's figures? A tripwire, not a verdict.

Decision rule (documented, tested):
- Carriers are the salient pct, money and statute values. When a claim has carriers, only they decide:
  every carrier has a strong hit → TOKENS_PRESENT; some carrier has a hit (strong or weak) → WEAK_MATCH;
  no carrier has any hit → TOKENS_ABSENT, even when a date or year of the claim is on the page (dates support
  a figure, they do not carry it).
- A claim with no carrier is decided by its supporting values together: its dates, durations, measures, counts,
  index values, ranks, ratios, decades and salient years (docs/decisions/0004). Every one has a strong hit (a
  date: same day, or same month when the claim gives no day; the others: priors/kinds.py) → TOKENS_PRESENT; some
  hit → WEAK_MATCH; none → TOKENS_ABSENT. These kinds are not carriers: a page can write them in forms no reader
  takes ("a month" for "30 days"), so beside a pct, money or statute figure they never turn a present figure into
  an absent one; alone, a weak hit (the bare number on the page) is enough to keep them from TOKENS_ABSENT.
- Nothing at all found and the host is a known JS-rendered host or the text is thinner than
  fetch.min_text_chars → SOURCE_UNAVAILABLE "indeterminate" (page not readable, not a missing figure).
- A claim with no salient value has nothing to check: WEAK_MATCH with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from claims_pipeline.config.settings import FetchSettings, PriorSettings
from claims_pipeline.corpus.records import ClaimRecord, Value
from claims_pipeline.priors.context import context_words
from claims_pipeline.priors.matching import Occurrence, find_occurrences
from claims_pipeline.priors.page_index import PageIndex, page_index
from claims_pipeline.store.records import PageState
from claims_pipeline.web.records import READABLE_STATUSES

TOKENS_PRESENT = "TOKENS_PRESENT"
WEAK_MATCH = "WEAK_MATCH"
TOKENS_ABSENT = "TOKENS_ABSENT"
SOURCE_BINARY = "SOURCE_BINARY"
PDF_NO_TEXT = "PDF_NO_TEXT"
SOURCE_UNAVAILABLE = "SOURCE_UNAVAILABLE"
PRIOR_KINDS = (TOKENS_PRESENT, WEAK_MATCH, TOKENS_ABSENT, SOURCE_BINARY, PDF_NO_TEXT, SOURCE_UNAVAILABLE)

CARRIER_TYPES = ("pct", "money", "number", "statute")
SUPPORTING_TYPES = ("date", "duration", "measure", "count", "index", "rank", "ratio", "decade", "year")


@dataclass(frozen=True)
class PriorRules:
    """What a prior reads of the settings: the priors section (excerpts; its workers size the step's pool) and
    the fetch section's two signs of a page not readable as text (a known JS-rendered host, a body thinner than
    min_text_chars). Derived once at an entry point (PriorRules.of), not the whole Settings."""

    priors: PriorSettings
    js_spa_hosts: tuple[str, ...]
    min_text_chars: int

    @classmethod
    def of(cls, priors: PriorSettings, fetch: FetchSettings) -> PriorRules:
        return cls(priors, tuple(fetch.js_spa_hosts), fetch.min_text_chars)


@dataclass(slots=True)
class Hit:
    """The best place one salient value was found (or not) on the page."""

    value: str  # the claim's raw figure
    type: str
    found: bool
    strong: bool = False
    matched_text: str | None = None
    position: int | None = None  # char offset in the page text
    proximity_chars: int | None = None  # distance to the nearest context word (None: none on the page)
    near_words: list[str] = field(default_factory=list)  # context words within half an excerpt window
    score: float = 0.0
    occurrences: int = 0
    excerpt_index: int | None = None  # which excerpt shows it, and where inside that excerpt
    excerpt_start: int | None = None
    excerpt_end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        # written out, in field order (test_priors checks it against the fields): dataclasses.asdict deep-copies
        # recursively and a loop over the fields with getattr is slower still, once a claim (benchmarks/README.md)
        return {"value": self.value, "type": self.type, "found": self.found, "strong": self.strong,
                "matched_text": self.matched_text, "position": self.position, "proximity_chars": self.proximity_chars,
                "near_words": list(self.near_words), "score": self.score, "occurrences": self.occurrences,
                "excerpt_index": self.excerpt_index, "excerpt_start": self.excerpt_start, "excerpt_end": self.excerpt_end}


@dataclass(slots=True)
class Prior:
    prior: str
    matched_tokens: list[str] = field(default_factory=list)
    strong_matched: list[str] = field(default_factory=list)
    missing_tokens: list[str] = field(default_factory=list)
    excerpts: list[str] = field(default_factory=list)
    fetch_note: str = ""
    hits: list[Hit] = field(default_factory=list)
    context_words: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "prior": self.prior,
            "matched_tokens": list(self.matched_tokens),
            "strong_matched": list(self.strong_matched),
            "missing_tokens": list(self.missing_tokens),
            "excerpts": list(self.excerpts),
            "fetch_note": self.fetch_note,
            "hits": [h.to_dict() for h in self.hits],
            "context_words": list(self.context_words),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prior:
        return cls(
            prior=d["prior"],
            matched_tokens=list(d.get("matched_tokens", [])),
            strong_matched=list(d.get("strong_matched", [])),
            missing_tokens=list(d.get("missing_tokens", [])),
            excerpts=list(d.get("excerpts", [])),
            fetch_note=d.get("fetch_note", ""),
            hits=[Hit(**h) for h in d.get("hits", [])],
            context_words=list(d.get("context_words", [])),
        )


def _raws(values: tuple[Value, ...]) -> list[str]:
    return list(dict.fromkeys(v.raw.strip() for v in values))


def build_prior(claim: ClaimRecord, page: PageState | None, rules: PriorRules) -> Prior:
    salient = claim.salient_values
    if page is None:
        return Prior(SOURCE_UNAVAILABLE, missing_tokens=_raws(salient), fetch_note="not fetched")
    status = str(page.fetch_status)
    if status == "BINARY":
        return Prior(SOURCE_BINARY, missing_tokens=_raws(salient), fetch_note=page.note or "binary content")
    if status == "PDF_NO_TEXT":
        return Prior(PDF_NO_TEXT, missing_tokens=_raws(salient), fetch_note=page.note or "PDF has no text layer")
    if status == "UNREADABLE":
        note = "page not readable, not a missing figure" + (f" ({page.note})" if page.note else "")
        return Prior(SOURCE_UNAVAILABLE, missing_tokens=_raws(salient), fetch_note=note)
    if status not in READABLE_STATUSES:
        return Prior(SOURCE_UNAVAILABLE, missing_tokens=_raws(salient), fetch_note=page.note or status)
    if page.text is None:  # its text blob went missing or was damaged after the fetch: unknown, not "absent"
        return Prior(SOURCE_UNAVAILABLE, missing_tokens=_raws(salient),
                     fetch_note="cached text blob missing or damaged" + (f" ({page.note})" if page.note else ""))
    return match_text(claim, page.text, rules, text_hash=page.text_hash, host=claim.source_host)


def _is_js_host(host: str, js_hosts: tuple[str, ...]) -> bool:
    host = host.lower()
    return any(host == h or host.endswith("." + h) for h in (x.lower() for x in js_hosts))


def match_text(
    claim: ClaimRecord, text: str, rules: PriorRules, *, text_hash: str | None = None, host: str = ""
) -> Prior:
    """The prior of a claim against a readable page text (the OK branch of build_prior)."""
    salient = claim.salient_values
    index = page_index(text, text_hash)
    ctx = context_words(claim.claim_text)
    window = rules.priors.excerpt_window_chars
    hits = [_best_hit(v, find_occurrences(v, index), index, ctx, window) for v in salient]
    excerpts = _excerpts(hits, index.text, window, rules.priors.max_excerpts_per_claim)

    matched = [h.value for h in hits if h.found]
    strong = [h.value for h in hits if h.strong]
    missing = [h.value for h in hits if not h.found]
    prior = _decide(salient, hits)
    note = ""
    if not salient:
        note = "no salient figure to check"
    elif not matched and (_is_js_host(host, rules.js_spa_hosts) or len(text.strip()) < rules.min_text_chars):
        why = "known JS-rendered host" if _is_js_host(host, rules.js_spa_hosts) else (
            f"thin body <{rules.min_text_chars} chars"
        )
        prior = SOURCE_UNAVAILABLE
        note = f"indeterminate ({why}) — page not readable, not a missing figure"
    return Prior(
        prior,
        matched_tokens=list(dict.fromkeys(matched)),
        strong_matched=list(dict.fromkeys(strong)),
        missing_tokens=list(dict.fromkeys(missing)),
        excerpts=excerpts,
        fetch_note=note,
        hits=hits,
        context_words=ctx,
    )


def _decide(salient: tuple[Value, ...], hits: list[Hit]) -> str:
    if not salient:
        return WEAK_MATCH
    carriers = [h for h in hits if h.type in CARRIER_TYPES]
    deciding = carriers if carriers else [h for h in hits if h.type in SUPPORTING_TYPES] or hits
    if all(h.strong for h in deciding):
        return TOKENS_PRESENT
    if any(h.found for h in deciding):
        return WEAK_MATCH
    return TOKENS_ABSENT


def _best_hit(value: Value, occurrences: list[Occurrence], index: PageIndex, ctx: list[str], window: int) -> Hit:
    hit = Hit(value=value.raw.strip(), type=value.type, found=bool(occurrences), occurrences=len(occurrences))
    best: tuple[float, Occurrence, int | None, list[str]] | None = None
    half = window // 2
    for occ in occurrences:
        centre = (occ.start + occ.end) // 2
        nearest: int | None = None
        near: list[str] = []
        for word in ctx:
            d = index.nearest_word(word, centre)
            if d is None:
                continue
            nearest = d if nearest is None or d < nearest else nearest
            if d <= half:
                near.append(word)
        closeness = 0.0 if nearest is None else 1.0 / (1.0 + nearest / 100.0)
        score = (1.0 if occ.strong else 0.4) + 0.5 * len(near) / max(1, len(ctx)) + 0.1 * closeness
        if best is None or score > best[0]:
            best = (score, occ, nearest, near)
    if best is not None:
        score, occ, nearest, near = best
        hit.strong = occ.strong
        hit.matched_text = index.text[occ.start : occ.end]
        hit.position = occ.start
        hit.proximity_chars = nearest
        hit.near_words = near
        hit.score = round(score, 4)
    return hit


def _squash(s: str) -> str:
    """Every whitespace run as one space (re.sub(r"\\s+", " ", s)), for less CPU: str.split() splits on
    the same characters as \\s (both are str.isspace) and join puts one space between; the ends are put back.
    An excerpt and each of its hits' places are squashed, ~4 a claim."""
    body = " ".join(s.split())
    if not body:
        return " " if s else ""
    return (" " if s[0].isspace() else "") + body + (" " if s[-1].isspace() else "")


def _excerpts(hits: list[Hit], text: str, window: int, max_n: int) -> list[str]:
    """Excerpts centred on the best hits (strongest first); a hit inside an earlier excerpt reuses it."""
    spans: list[tuple[int, int]] = []
    out: list[str] = []
    for hit in sorted((h for h in hits if h.found), key=lambda h: -h.score):
        assert hit.position is not None and hit.matched_text is not None
        start, end = hit.position, hit.position + len(hit.matched_text)
        for i, (lo, hi) in enumerate(spans):
            if lo <= start and end <= hi:
                _place(hit, i, text, lo, start, end)
                break
        else:
            if len(out) >= max_n:
                continue
            centre = (start + end) // 2
            lo = max(0, centre - window // 2)
            hi = min(len(text), lo + window)
            lo = max(0, min(lo, hi - window))
            for s_lo, s_hi in spans:  # trim away from earlier excerpts so no text is shown twice
                if lo < s_hi and s_lo < hi:
                    if start >= s_hi:
                        lo = max(lo, s_hi)
                    elif end <= s_lo:
                        hi = min(hi, s_lo)
            spans.append((lo, hi))
            out.append(_render(text, lo, hi))
            _place(hit, len(out) - 1, text, lo, start, end)
    return out


def _render(text: str, lo: int, hi: int) -> str:
    body = _squash(text[lo:hi])
    return ("…" if lo > 0 else "") + body + ("…" if hi < len(text) else "")


def _place(hit: Hit, i: int, text: str, lo: int, start: int, end: int) -> None:
    prefix = ("…" if lo > 0 else "") + _squash(text[lo:start])
    hit.excerpt_index = i
    hit.excerpt_start = len(prefix)
    hit.excerpt_end = len(prefix) + len(_squash(text[start:end]))
