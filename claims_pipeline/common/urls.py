"""URL normalisation shared by extraction, fetching and the page store.

Only changes that never alter which resource a server returns: scheme and host are lower-cased, the default
port is dropped, an empty path becomes "/", and the fragment (never sent to the server) is removed. Path,
query and their case are kept as written, because servers may treat them as case-sensitive.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


@functools.lru_cache(maxsize=65536)  # a run normalises each URL at several steps (unique_urls, fetch_many, the cache)
def normalize_url(url: str) -> str:
    """Return the canonical form of an http(s) URL (see module doc); other strings come back stripped."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # e.g. an invalid port number: leave the text alone rather than guess
        return url
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return url.split("#", 1)[0]
    host = parts.hostname.lower().rstrip(".")
    if ":" in host:  # IPv6 literal needs its brackets back
        host = f"[{host}]"
    userinfo = ""
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "") + "@"
    netloc = userinfo + host + (f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else "")
    path = parts.path or "/"
    return urlunsplit((scheme, netloc, path, parts.query, ""))


@functools.lru_cache(maxsize=4096)  # the fetcher asks it of the same URL at every step of a request
def url_host(url: str) -> str:
    """Lower-cased host of a URL without port or credentials ("" when there is none)."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def domain_of_pattern(entry: str) -> str:
    """The domain a configured host pattern names: '*.x', '.x', 'X' and 'x.' all mean x (and its subdomains)."""
    return entry.lower().strip().lstrip("*").lstrip(".").rstrip(".")


# A government host: gov / gouv / gob, alone or under a two-letter country code ("tax.gov.xx", "impots.gouv.fr",
# "gov.uk"). Not three letters after it: anyone can register "irs.gov.com" or "tax.gob.net" (docs/decisions/0002).
# One rule for primary-source gating and for the politeness floor.
GOV_SUFFIX_RE = re.compile(r"(?:^|\.)(?:gov|gouv|gob)(?:\.[a-z]{2})?$")


def is_gov_host(host: str) -> bool:
    return GOV_SUFFIX_RE.search(host.lower().rstrip(".")) is not None
