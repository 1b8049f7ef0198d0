"""The outcome of fetching one URL: what the cache stores and priors read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FetchStatus(StrEnum):
    OK = "OK"
    NOT_MODIFIED = "NOT_MODIFIED"  # 304 on a conditional re-fetch: the cached text still stands
    DEAD = "DEAD"  # 404 / 410 / other final 4xx
    BINARY = "BINARY"  # a content type we do not read (image, zip, octet-stream)
    PDF_NO_TEXT = "PDF_NO_TEXT"  # a PDF without a text layer (scanned)
    PDF_ERROR = "PDF_ERROR"  # encrypted, corrupt or over a cap
    UNREADABLE = "UNREADABLE"  # a JS-only shell or a thin body: page not readable, not "figure absent"
    BLOCKED = "BLOCKED"  # a bot wall / challenge
    EXCLUDED = "EXCLUDED"  # host in excluded_hosts
    ROBOTS = "ROBOTS"  # robots.txt disallows
    REFUSED = "REFUSED"  # the SSRF guard refused the address
    TOO_LARGE = "TOO_LARGE"  # body (or decompressed body) over its cap
    UNAVAILABLE = "UNAVAILABLE"  # timeouts, resets, 5xx after retries, breaker open, run budget spent


# The statuses of a page whose text was read (a 304 keeps the text read before): the ones priors can match against.
READABLE_STATUSES: frozenset[str] = frozenset({FetchStatus.OK, FetchStatus.NOT_MODIFIED})


@dataclass(slots=True)
class FetchResult:
    url: str  # the normalised URL asked for
    status: FetchStatus
    http_status: int | None = None
    final_url: str | None = None  # after redirects
    content_type: str = ""
    content_kind: str = ""  # html | pdf:pdftotext | pdf:pypdf | text | binary | ""
    raw: bytes | None = None  # body bytes as downloaded (decoded transfer encoding), None if not downloaded
    text: str | None = None  # extracted text (OK only)
    etag: str | None = None
    last_modified: str | None = None
    note: str = ""
    fetched_at: str = ""  # ISO-8601 UTC
    elapsed_s: float = 0.0
    attempts: int = 0
