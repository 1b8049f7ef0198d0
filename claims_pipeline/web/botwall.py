"""Bot-wall detection without false alarms: ``cf-ray`` alone is just Cloudflare; ``cf-mitigated`` or a
challenge <title> is a wall (the original flagged every Cloudflare page, §12)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_TITLE_RE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def page_title(body: bytes) -> str:
    m = _TITLE_RE.search(body[:8192])
    return " ".join(m.group(1).decode("utf-8", "replace").split()) if m else ""


def challenge_title(body: bytes, titles: Iterable[str]) -> str | None:
    """The page title when it contains one of the configured challenge titles (case-insensitive)."""
    title = page_title(body)
    low = title.lower()
    return title if title and any(t.lower() in low for t in titles) else None


def mitigated(headers: Mapping[str, str]) -> str | None:
    """Cloudflare's explicit 'this response is a challenge' header value, if present."""
    value = headers.get("cf-mitigated")
    return value if value is not None else None
