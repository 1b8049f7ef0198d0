"""Why a cited page could not be read, in a word a person recognises ("DNS", "HTTP 404", "robots.txt"), and the
count of unreadable pages by that reason: what `audit` prints at its end and what a notification says.

A page reads when its fetch is OK or NOT_MODIFIED (the cached text stands); every other status is a page nothing
can be said about (never "figure absent"). The reason comes from the status, and for UNAVAILABLE from the fetch
note, which names the transport failure (a circuit-breaker note quotes its last failure too)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

READABLE = frozenset({"OK", "NOT_MODIFIED"})

_BY_STATUS = {
    "DEAD": "dead link",
    "BINARY": "not a text document",
    "PDF_NO_TEXT": "scanned PDF",
    "PDF_ERROR": "broken PDF",
    "UNREADABLE": "JavaScript-only or empty page",
    "BLOCKED": "bot wall",
    "EXCLUDED": "excluded host",
    "ROBOTS": "robots.txt",
    "REFUSED": "address refused by the safety guard",
    "TOO_LARGE": "too large",
}
# UNAVAILABLE, by what its note says (first match wins; lower-cased)
_BY_NOTE = (
    ("dns lookup failed", "DNS"),
    ("run budget", "run time budget spent"),
    ("redirect", "redirects"),
    ("timeout", "timeout"),
    ("deadline", "timeout"),
    ("connecterror", "no connection"),
    ("connection refused", "no connection"),
    ("reset", "connection reset"),
    ("closed", "connection reset"),
    ("proxy", "proxy"),
)


def reason_of(status: str, http_status: Any = None, note: str = "") -> str | None:
    """Why a page with this fetch outcome is unreadable; None when it reads."""
    status = str(status or "")
    if status in READABLE:
        return None
    code = _int(http_status)
    if status == "DEAD":
        return f"HTTP {code}" if code else _BY_STATUS["DEAD"]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    text = (note or "").lower()
    if text.startswith("circuit open"):  # nothing was sent: the breaker's reason, with the failure that opened it
        head, _, last = (note or "").partition(" (last: ")
        cause = reason_of("UNAVAILABLE", None, last)
        return f"{head} (last: {cause})"
    for needle, reason in _BY_NOTE:
        if needle in text:
            return reason
    if code and code >= 400:
        return f"HTTP {code}"
    return "unavailable"


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@dataclass
class UnreadableCount:
    """Cited pages, how many were unreadable, and by which reason (most first)."""

    pages: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    urls: dict[str, str] = field(default_factory=dict)  # unreadable url -> reason

    @property
    def unreadable(self) -> int:
        return sum(self.by_reason.values())

    @property
    def none_read(self) -> bool:
        return self.pages > 0 and self.unreadable == self.pages

    def line(self) -> str:
        """'5 of 5 pages unreadable: DNS 5' (or '0 of 12 pages unreadable')."""
        head = f"{self.unreadable} of {self.pages} page{'s' if self.pages != 1 else ''} unreadable"
        if not self.by_reason:
            return head
        return head + ": " + ", ".join(f"{reason} {n}" for reason, n in _most_first(self.by_reason))


def _most_first(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def count_unreadable(rows: Iterable[dict[str, Any]]) -> UnreadableCount:
    """rows: one per cited page, with fetch_status, http_status and note (the pages table's columns)."""
    out = UnreadableCount()
    for row in rows:
        out.pages += 1
        reason = reason_of(row.get("fetch_status", ""), row.get("http_status"), str(row.get("note") or ""))
        if reason is not None:
            out.by_reason[reason] += 1
            out.urls[str(row.get("url", ""))] = reason
    return out


def report_unreadable(report_dir: Path, urls: Iterable[str] | None = None) -> UnreadableCount | None:
    """The unreadable pages of a written report (its pages.parquet), optionally only `urls`; None when the
    report has no pages table."""
    import pandas as pd

    path = report_dir / "pages.parquet"
    if not path.is_file():
        return None
    pages = pd.read_parquet(path, columns=["url", "fetch_status", "http_status", "note"])
    if urls is not None:
        pages = pages[pages["url"].isin(set(urls))]
    rows = pages.astype(object).where(pages.notna(), None).to_dict("records")
    return count_unreadable({str(k): v for k, v in r.items()} for r in rows)
