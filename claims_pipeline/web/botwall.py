"""Bot-wall detection without false alarms: ``cf-ray`` alone is just Cloudflare; ``cf-mitigated`` or a
challenge <title> is a wall (most Cloudflare-served pages are ordinary pages, docs/decisions/0002)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_TITLE_RE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
# What may follow the phrase in a challenge title: its own punctuation, then at most a short site name after a
# separator ("Attention Required! | Cloudflare"). Not ":" — that starts a real page's subtitle.
_AFTER_PHRASE_RE = re.compile(r"[.!…\s]*(?:[|\-–—·]\s*(?P<site>[^|\-–—·:]{1,40}))?", re.DOTALL)
_SITE_MAX_WORDS = 4


def page_title(body: bytes) -> str:
    m = _TITLE_RE.search(body[:8192])
    return " ".join(m.group(1).decode("utf-8", "replace").split()) if m else ""


def _is_challenge(title: str, phrase: str) -> bool:
    if not title.lower().startswith(phrase.lower()):
        return False
    m = _AFTER_PHRASE_RE.fullmatch(title[len(phrase):])
    return m is not None and len((m.group("site") or "").split()) <= _SITE_MAX_WORDS


def challenge_title(body: bytes, titles: Iterable[str]) -> str | None:
    """The page title when it is one of the configured challenge titles (case-insensitive): the phrase, its
    punctuation, at most a short site name after a separator. A real page titled "One more step: confirm your
    2025 levy" is no wall (a substring match would make it BLOCKED)."""
    title = page_title(body)
    return title if title and any(_is_challenge(title, t.strip()) for t in titles) else None


def mitigated(headers: Mapping[str, str]) -> str | None:
    """Cloudflare's explicit 'this response is a challenge' header value, if present."""
    value = headers.get("cf-mitigated")
    return value if value is not None else None
