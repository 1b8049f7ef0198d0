"""JudgeItem from the pipeline's records: a claim, its page's state and its prior (pure; the assets call it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from claims_pipeline.corpus.reading import DEFAULT_MAX_FILE_BYTES, read_regular, with_newlines
from claims_pipeline.judge.model import ItemValue, JudgeItem
from claims_pipeline.priors.build import CARRIER_TYPES
from claims_pipeline.store.blobs import text_hash


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
    page_hash = (page.text_hash if page is not None else None) or (text_hash(text) if text else "")
    return JudgeItem(
        id=claim.id, scope=claim.scope, file=claim.file, line_no=claim.line_no, source_url=claim.source_url,
        claim_text=claim.claim_text, line_text=line_text or claim.claim_text, values=_values(claim),
        source_tier=claim.source_tier, prior=getattr(prior, "prior", prior) or "SOURCE_UNAVAILABLE",
        stale_changed=bool(stale_changed), page_text=text, page_text_hash=page_hash,
        last_verified=claim.last_verified,
    )


def corpus_lines(corpus_dir: Path, file: str, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 follow_links_out: bool = False) -> list[str]:
    """The file's lines as the extraction numbered them (CRLF, CR and LF end a line), [] when it cannot be read.
    Read as the corpus walker reads: a regular file of at most max_bytes (a FIFO or /dev/zero swapped in since
    the audit is not waited on), and not through a link leaving corpus_dir unless follow_links_out."""
    path = Path(corpus_dir) / file
    root = os.path.realpath(corpus_dir)
    real = os.path.realpath(path)
    if not file or not (follow_links_out or real.startswith(root.rstrip(os.sep) + os.sep)):
        return []
    try:
        data = read_regular(path, max_bytes)
    except OSError:
        return []
    return with_newlines(data.decode("utf-8-sig", "replace")).split("\n")


def corpus_line(corpus_dir: Path, file: str, line_no: int, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES,
                follow_links_out: bool = False, lines: list[str] | None = None) -> str:
    """The whole corpus line (1-based), without its line ending; "" when the file or line is gone (or the file
    cannot be read as corpus_lines reads it). lines: the file's corpus_lines, already read."""
    if lines is None:
        lines = corpus_lines(corpus_dir, file, max_bytes=max_bytes, follow_links_out=follow_links_out)
    return lines[line_no - 1] if 1 <= line_no <= len(lines) else ""
