"""What an HTTP answer means for a fetch, decided from its status, headers and the body read (no I/O here):
a final status, a retry, a redirect, or a body to read within a cap. web/fetcher.py does the I/O and applies these.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message
from email.utils import parsedate_to_datetime
from typing import TypedDict
from urllib.parse import urljoin, urlsplit

from claims_pipeline.common.urls import normalize_url, url_host
from claims_pipeline.config.settings import FetchSettings, PdfSettings
from claims_pipeline.web import botwall, stub
from claims_pipeline.web.charset import charset_from_content_type
from claims_pipeline.web.politeness import host_matches
from claims_pipeline.web.records import FetchResult, FetchStatus

_REDIRECTS = {301, 302, 303, 307, 308}
# 4xx answers that do not say the page is gone: reported as what they are, not DEAD
_NOT_DEAD = {
    401: (FetchStatus.BLOCKED, "login required: the page is behind authentication"),
    407: (FetchStatus.UNAVAILABLE, "proxy authentication required: a proxy on this machine's path refused, not the site"),
    451: (FetchStatus.BLOCKED, "unavailable for legal reasons (blocked in this region or by order)"),
}


@dataclass
class _Retry:
    """An attempt that may succeed if repeated (5xx, 429, timeouts, resets)."""

    note: str
    http_status: int | None = None
    retry_after: float | None = None


class _Common(TypedDict):
    """The fields every result of one response carries."""

    http_status: int
    final_url: str
    etag: str | None
    last_modified: str | None
    content_type: str


@dataclass(frozen=True, slots=True)
class _Settled:
    """A response whose outcome is known without reading (more of) its body."""

    status: FetchStatus
    note: str
    content_kind: str = ""
    raw: bytes | None = None  # what was read of the body, kept when it shows why (a bot wall's page)


@dataclass(frozen=True, slots=True)
class _ReadBody:
    """A 2xx answer whose body is to be read, up to cap bytes."""

    cap: int
    is_pdf: bool
    sniff: bool  # a binary type that may hide a PDF: its head is read first, the rest only when it is one


@dataclass
class _Downloaded:
    """A 2xx body read within the host slot, to be turned into text after the slot is released."""

    raw: bytes
    common: _Common
    named_pdf: bool = False  # Content-Disposition named it *.pdf: read as a PDF whatever its type says


class _Redirect(Exception):
    def __init__(self, location: str, status: int, sets_cookie: bool = False, refresh: bool = False) -> None:
        self.location, self.status, self.sets_cookie = location, status, sets_cookie
        self.refresh = refresh  # a <meta http-equiv="refresh"> stub, not a 3xx


def conditional_headers(validator: tuple[str | None, str | None] | None) -> dict[str, str]:
    """The headers that make a request conditional on the stored copy's (etag, last_modified): a 304 then means
    the copy still stands."""
    etag, last_modified = validator or (None, None)
    headers: dict[str, str] = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers

def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None when absent/invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _is_pdf(content_type: str, url: str, disposition: str | None) -> bool:
    """Declared a PDF by its type, its URL path or its Content-Disposition filename (download scripts)."""
    if content_type.startswith("application/pdf") or urlsplit(url).path.lower().endswith(".pdf"):
        return True
    if not disposition:
        return False
    msg = Message()
    msg["content-disposition"] = disposition
    return (msg.get_filename() or "").strip().lower().endswith(".pdf")


_CHARSET_LABEL_RE = re.compile(r"[A-Za-z0-9._:-]{1,40}")


def _content_type(header: str) -> str:
    """The media type, lower-cased, with the header's charset when it names one ("text/html; charset=iso-8859-2").
    The charset is what a page that declares its encoding only in the HTTP header is decoded with, on this
    fetch and when the stored bytes are read again; with the media type alone such a page came out garbled
    ("nieruchomo¶ci" for "nieruchomości")."""
    media = header.split(";", 1)[0].strip().lower()
    charset = charset_from_content_type(header)
    if media and charset and _CHARSET_LABEL_RE.fullmatch(charset):
        return f"{media}; charset={charset}"
    return media


def _may_hide_pdf(content_type: str) -> bool:
    """Binary types under which servers send PDFs (octet-stream, x-download …); never image/audio/video."""
    return not content_type.startswith(("image/", "audio/", "video/"))


def _retryable(status: int) -> bool:
    return status == 429 or 500 <= status < 600  # 999 (LinkedIn's refusal) is no server error: not retried


def _answer_without_body(status: int, h: Mapping[str, str], current: str, peek: bytes, retry_after: float | None,
                         f: FetchSettings) -> _Settled | _Retry | _ReadBody:
    """What a response that is neither a redirect nor a 304 means, from its status and headers (h: names
    lower-cased) and, for an error or walled answer, the head of its body (peek; else b"")."""
    wall_header = botwall.mitigated(h)
    if status >= 400 or wall_header is not None:
        title = botwall.challenge_title(peek, f.challenge_titles)
        if wall_header is not None or title is not None:
            # a bot wall ends the URL at once, on any status: asked again, it answers the same
            what = f"cf-mitigated={wall_header}" if wall_header is not None else f"challenge title {title!r}"
            return _Settled(FetchStatus.BLOCKED, f"http {status} bot wall: {what}", raw=peek)
    if status >= 400:
        return _error_answer(status, h, peek, retry_after, f)
    if not 200 <= status < 300:
        return _Settled(FetchStatus.UNAVAILABLE, f"unexpected http {status}")
    # An empty or partial body is never the page's text: stored, two in a row would "confirm" a change.
    if status == 206:  # we never send Range
        return _Settled(FetchStatus.UNAVAILABLE, "http 206 partial content not requested")
    if status in (204, 205) or h.get("content-length", "").strip() == "0":
        return _Settled(FetchStatus.UNAVAILABLE, f"http {status}: empty body")
    return _body_plan(h, current, f)


def _error_answer(status: int, h: Mapping[str, str], peek: bytes, retry_after: float | None,
                  f: FetchSettings) -> _Settled | _Retry:
    """A 4xx or 5xx that is no bot wall."""
    if _retryable(status):
        note = f"http {status}" + (f" Retry-After {h.get('retry-after')}" if retry_after is not None else "")
        return _Retry(note, http_status=status, retry_after=retry_after)
    if status in f.blocked_status_codes:
        return _Settled(FetchStatus.BLOCKED, f"http {status}: access refused (no challenge marker)", raw=peek)
    if status in _NOT_DEAD:  # the page exists; something stands between us and it
        st, why = _NOT_DEAD[status]
        return _Settled(st, f"http {status}: {why}")
    return _Settled(FetchStatus.DEAD, f"http {status}")


def _body_plan(h: Mapping[str, str], current: str, f: FetchSettings) -> _Settled | _ReadBody:
    """Whether a 2xx body is read, and within which cap, from its type and declared length."""
    ctype = _content_type(h.get("content-type", ""))
    is_pdf = _is_pdf(ctype, current, h.get("content-disposition"))
    sniff = False  # a binary type that may hide a PDF: read its head, and the rest only when it is one
    if not is_pdf and any(ctype.startswith(p) for p in f.binary_content_prefixes):
        sniff = _may_hide_pdf(ctype)
        if not sniff:
            return _Settled(FetchStatus.BINARY, f"binary content type {ctype}: not downloaded", content_kind="binary")
    cap = f.max_pdf_bytes if is_pdf or sniff else f.max_html_bytes
    declared = h.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap and "content-encoding" not in h:
        if sniff:  # unknown whether it is a PDF, and too large to read if it were
            return _Settled(FetchStatus.BINARY, f"binary content type {ctype}, Content-Length {declared}: not downloaded",
                            content_kind="binary")
        return _Settled(FetchStatus.TOO_LARGE, f"Content-Length {declared} over the {cap}-byte cap; not downloaded")
    return _ReadBody(cap, is_pdf=is_pdf, sniff=sniff)


def _answer_of_body(raw: bytes, status: int, plan: _ReadBody, ctype: str, current: str,
                    f: FetchSettings) -> _Settled | bool:
    """What a 2xx body read whole means: a result, or the page to read as text (True: read as a PDF because
    Content-Disposition alone named it one, on a generic or binary type; a text/* body with a .pdf name stays
    text)."""
    if not raw.strip():
        return _Settled(FetchStatus.UNAVAILABLE, f"http {status}: empty body")
    if not (plan.is_pdf or plan.sniff):
        title = botwall.challenge_title(raw, f.challenge_titles)
        if title is not None:
            return _Settled(FetchStatus.BLOCKED, f"http {status} bot wall: challenge title {title!r}", raw=raw)
        return False
    return not plan.sniff and not _is_pdf(ctype, current, None) and not ctype.startswith("text/")


def result_of(url: str, status: FetchStatus, **fields: object) -> FetchResult:
    """A URL's result, stamped now."""
    return FetchResult(url=url, status=status, fetched_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                       **fields)  # type: ignore[arg-type]


def retry_wait(f: FetchSettings, attempt: int, retry_after: float | None) -> float:
    """How long to wait before the next attempt: the server's Retry-After up to its cap, else the backoff
    sequence (its last value repeated) with jitter."""
    if retry_after is not None:  # the server said how long: honour it, up to the cap
        return min(retry_after, f.retry_after_cap_s)
    base = f.retry_backoff_s[min(attempt - 1, len(f.retry_backoff_s) - 1)]
    jitter = base * f.retry_jitter_pct / 100
    return max(0.0, base + random.uniform(-jitter, jitter))


def page_of_body(url: str, current: str, raw: bytes, common: _Common, f: FetchSettings, pdf: PdfSettings,
                 named_pdf: bool = False) -> FetchResult:
    """What a 2xx body read whole says once read as text: the page, or a redirect stub (raises _Redirect for a
    meta refresh), or a page that cannot be read (a script redirect, a JS-rendered host or shell). CPU work: the
    fetcher runs it off the event loop."""
    from claims_pipeline.web import text as text_mod  # T's module: HTML/PDF → text

    # a body the server named *.pdf (Content-Disposition) is read as one: junk before its %PDF- header is
    # then skipped as for a declared PDF (read by its octet-stream type, it came out BINARY)
    ctype = "application/pdf" if named_pdf else common["content_type"]
    outcome = text_mod.extract_text(raw, ctype, current, f, pdf)
    status = FetchStatus(outcome.status)
    note = outcome.note
    if named_pdf and status is FetchStatus.OK and common["content_type"]:
        note = "; ".join(filter(None, [f"served as {common['content_type']} but is a PDF", note]))
    if outcome.content_kind == "html" and status in (FetchStatus.OK, FetchStatus.UNREADABLE):
        # a redirect stub: a meta refresh is one more hop (robots, throttle, guard, redirect limit); a script
        # redirect is not run, so the stub is no page text
        target = stub.refresh_target(raw, outcome.text or "")
        if target is not None and normalize_url(urljoin(current, target)) != current:
            raise _Redirect(target, common["http_status"], refresh=True)
        target = stub.script_redirect_target(raw, outcome.text or "")
        if target is not None:
            return result_of(url, FetchStatus.UNREADABLE, **common, raw=raw, content_kind="html",
                             note=f"redirect stub: its script sends the browser to "
                                  f"{urljoin(current, target)}; not followed")
    if status == FetchStatus.OK and not outcome.content_kind.startswith("pdf"):
        host = url_host(current)
        if host_matches(host, f.js_spa_hosts):
            status, note = FetchStatus.UNREADABLE, f"host {host} in js_spa_hosts: JS-rendered page, not readable"
        elif outcome.content_kind == "html" and (
            shell := text_mod.looks_like_js_shell(raw, outcome.text or "", f.min_text_chars)
        ):
            status, note = FetchStatus.UNREADABLE, f"{shell}: page not readable, not a missing figure"
    return result_of(url, status, **common, raw=raw, text=outcome.text, content_kind=outcome.content_kind,
                     note=note or "")
