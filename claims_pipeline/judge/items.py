"""JudgeItem from the pipeline's records: a claim, its page's state and its prior (pure; the assets call it)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from claims_pipeline.judge.model import ItemValue, JudgeItem
from claims_pipeline.priors.build import CARRIER_TYPES


def _values(claim: Any) -> list[ItemValue]:
    """Salient figures, the carriers (pct, money, statute: what the prior decides on) first, in line order;
    the first is the carrying figure. A claim without salient values offers all of them."""
    values = [v for v in claim.values if v.salient] or list(claim.values)
    ordered = [v for v in values if v.type in CARRIER_TYPES] + [v for v in values if v.type not in CARRIER_TYPES]
    return [ItemValue(type=v.type, raw=v.raw, number=v.number) for v in ordered]


def judge_item(claim: Any, page: Any | None, prior: Any, *, stale_changed: bool = False,
               line_text: str = "") -> JudgeItem:
    """claim: a corpus ClaimRecord; page: its PageState (None when never fetched); prior: a Prior or its name."""
    text = (page.text or "") if page is not None else ""
    text_hash = (page.text_hash if page is not None else None) or (
        hashlib.sha256(text.encode("utf-8")).hexdigest() if text else "")
    return JudgeItem(
        id=claim.id, scope=claim.scope, file=claim.file, line_no=claim.line_no, source_url=claim.source_url,
        claim_text=claim.claim_text, line_text=line_text or claim.claim_text, values=_values(claim),
        source_tier=claim.source_tier, prior=getattr(prior, "prior", prior) or "SOURCE_UNAVAILABLE",
        stale_changed=bool(stale_changed), page_text=text, page_text_hash=text_hash,
        last_verified=claim.last_verified,
    )


def corpus_line(corpus_dir: Path, file: str, line_no: int) -> str:
    """The whole corpus line (1-based), without its line ending; "" when the file or line is gone."""
    try:
        with open(Path(corpus_dir) / file, encoding="utf-8", errors="replace", newline="") as fh:
            for n, line in enumerate(fh, 1):
                if n == line_no:
                    return line.rstrip("\r\n")
    except OSError:
        return ""
    return ""
