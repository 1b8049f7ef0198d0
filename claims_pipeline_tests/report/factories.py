"""Builders for the shared records (ClaimRecord, Value, PageState) used by the priors/audit/report tests."""

from __future__ import annotations

import hashlib

from claims_pipeline.config.settings import Settings
from claims_pipeline.corpus.records import ClaimRecord, InlineStamp, Value
from claims_pipeline.priors import PriorRules


def rules_of(settings: Settings | None = None) -> PriorRules:
    """The prior rules of these settings (of the defaults when None), as an entry point derives them."""
    s = settings or Settings()
    return PriorRules.of(s.priors, s.fetch)


def value(type_: str, raw: str, *, number: float | None = None, salient: bool = True, needles: tuple[str, ...] = ()) -> Value:
    return Value(type=type_, raw=raw, needles=needles or (raw,), salient=salient, pos=0, end=len(raw), number=number)


def claim(
    text: str,
    values: list[Value],
    *,
    url: str = "https://www.impots.gouv.fr/dmto",
    scope: str = "fr",
    line_no: int = 1,
    last_verified: str | None = None,
    origin: str | None = None,
    stamp: InlineStamp | None = None,
    section: str = "Taxes",
    file: str | None = None,
) -> ClaimRecord:
    host = url.split("/")[2].lower() if url.count("/") >= 2 else ""
    return ClaimRecord(
        id=f"{scope}:{file + ':' if file else ''}{line_no}:{hashlib.sha1(url.encode()).hexdigest()[:8]}",
        scope=scope,
        section=section,
        line_no=line_no,
        claim_text=text,
        values=tuple(values),
        source_url=url,
        source_host=host,
        source_tier="primary-gov",
        inline_stamp=stamp,
        link_kind="markdown",
        last_verified=last_verified,
        last_verified_origin=origin or ("inline" if stamp else "file" if last_verified else "none"),
        file=file or f"countries/{scope}/playbook.md",
    )


def page(
    url: str,
    text: str | None,
    *,
    status: str = "OK",
    note: str = "",
    content_changed: bool = False,
    changed_at: str | None = None,
    diff: str | None = None,
    fetched_at: str = "2026-06-01T09:00:00+00:00",
):
    from claims_pipeline.store.records import PageState

    th = hashlib.sha256(text.encode()).hexdigest()[:16] if text else None
    return PageState(
        url=url,
        fetch_status=status,
        http_status=200 if status == "OK" else None,
        content_kind="html" if text else "",
        note=note,
        fetched_at=fetched_at,
        text_hash=th,
        raw_hash=th,
        text=text,
        content_changed=content_changed,
        changed_at=changed_at,
        stable_since=None,
        diff=diff,
    )


FILLER = (
    "This page describes the rules that apply to property transactions. It is maintained by the ministry and "
    "updated when the law changes. Read the notes below carefully before you make any decision. "
)
