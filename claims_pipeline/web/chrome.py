"""Which elements are a page's chrome (navigation, banners, cookie notices), shared by the HTML readers.

header/footer are the page's banner only outside sectioning content (the HTML spec maps them to the banner /
contentinfo roles only when not inside article, aside, main, nav or section: there they hold bylines, dates
and notes, which carry figures). A cookie notice is named so by its id or class, token by token.
"""

from __future__ import annotations

import re
from typing import Any

CHROME_TAGS = frozenset({"nav", "aside"})
PAGE_LEVEL_CHROME_TAGS = frozenset({"header", "footer"})
CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "menubar", "menu"})
SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
COOKIE_TAGS = frozenset({"div", "section", "aside", "dialog", "form"})
# A cookie notice holding one of these is a wrapper around the page, not a notice: never dropped.
BANNER_KEEPERS = ("main", "table")
FOOTNOTE_RE = re.compile(r"foot-?notes?|end-?notes?|doc-(?:end|foot)notes?|references", re.IGNORECASE)

# An id/class token names a cookie notice when one of its words is a consent word and every other word is
# banner vocabulary ("cookie-law-info-bar", "CybotCookiebotDialog"), or one is an unmistakable banner word
# ("cookie-policy-banner"); "gdpr-fines", "consent-rules", "no-cookie-needed", "consentement" are content.
_CONSENT_WORDS = frozenset({"cookie", "cookies", "consent", "gdpr", "onetrust", "cookiebot", "cookieconsent",
                            "cookienotice", "cookiebanner", "cookielaw"})
_BANNER_WORDS = frozenset({"banner", "bar", "notice", "notification", "popup", "modal", "dialog", "overlay",
                           "alert", "prompt", "layer", "popin", "bandeau", "sdk"})
_BANNER_VOCABULARY = _BANNER_WORDS | _CONSENT_WORDS | frozenset({
    "law", "info", "message", "msg", "warning", "box", "wrapper", "wrap", "container", "inner", "outer",
    "content", "accept", "settings", "preferences", "manager", "window", "cc", "cmp", "js", "top", "bottom",
    "fixed", "hidden", "show", "visible", "active", "open", "is", "has", "bg", "backdrop", "text", "panel",
    "pop", "up", "eu", "cybot", "ot", "wp", "area", "holder", "block", "section", "widget", "plugin",
})
_WORD_SPLIT_RE = re.compile(r"[-_.:]+|(?<=[a-z])(?=[A-Z])")


def _names_cookie_notice(token: str) -> bool:
    words = [w.lower() for w in _WORD_SPLIT_RE.split(token) if w and not w.isdigit()]
    if not any(w in _CONSENT_WORDS for w in words):
        return False
    return all(w in _BANNER_VOCABULARY for w in words) or any(w in _BANNER_WORDS for w in words)


def is_cookie_notice(ident: str) -> bool:
    """Whether an element's "id class…" text names a cookie/consent notice (whole tokens, not substrings)."""
    return any(_names_cookie_notice(t) for t in ident.split())


def chrome_kind(get: Any, name: str, in_section: bool) -> str | None:
    """"chrome" (drop), "notice" (a cookie notice: drop unless it holds BANNER_KEEPERS) or None (read it).

    `get` reads an attribute; `in_section`: sectioning content encloses the element. Footnotes never drop."""
    role = get("role")
    kind = "chrome" if name in CHROME_TAGS or (role is not None and role.lower() in CHROME_ROLES) else None
    if kind is None and name in PAGE_LEVEL_CHROME_TAGS and not in_section:
        kind = "chrome"
    if kind is None and name in COOKIE_TAGS and is_cookie_notice((get("id") or "") + " " + (get("class") or "")):
        kind = "notice"
    if kind is not None and FOOTNOTE_RE.search(" ".join((get("id") or "", get("class") or "", role or ""))):
        return None
    return kind
