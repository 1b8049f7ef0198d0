"""Source tiers: which cited hosts are official sources, which are the project's own pages, and which are
secondary. Every cited figure is looked for whatever its tier; the tier orders the worklist, caps the verdict and
groups the report (and extraction.primary_only keeps official sources only, for those who want that)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

import yaml

from claims_pipeline.common.urls import is_gov_host

# The one documented list of official hosts shipped with the package (national and regional government,
# legislation, courts, regulators, statistics offices, audit courts, central banks, public agencies, EU and
# international institutions). Users add to it from their settings (extraction.primary_allowlist, _file).
OFFICIAL_SOURCES_FILE = Path(__file__).with_name("official_sources.yaml")

OFFICIAL_TIERS = ("primary-gov", "primary-allowlist")  # the two ways a host is official: its name, or the list
OWN_TIER = "own"  # a page of the knowledge base's own site (extraction.own_hosts)
SECONDARY_TIER = "secondary"


class PrimaryHosts:
    """The allowlist: exact hosts, plus '.suffix' entries that match any subdomain (".go.jp")."""

    def __init__(self, entries: Iterable[str]) -> None:
        entries = {e.strip().lower().rstrip(".") for e in entries if e.strip()}
        # 'www.boj.or.jp' names the site boj.or.jp: hosts are compared with their www. dropped too
        self.exact = frozenset(e.removeprefix("www.") for e in entries if not e.startswith("."))
        self.suffixes = tuple(sorted(e for e in entries if e.startswith(".")))

    def __contains__(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        bare = host[4:] if host.startswith("www.") else host
        return bare in self.exact or any(host.endswith(s) or "." + host == s for s in self.suffixes)


@functools.lru_cache(maxsize=1)
def builtin_official_hosts() -> frozenset[str]:
    """Every entry of official_sources.yaml (its headings only group them)."""
    data = yaml.safe_load(OFFICIAL_SOURCES_FILE.read_text(encoding="utf-8")) or {}
    return frozenset(str(e).strip().lower() for entries in data.values() for e in (entries or ()) if str(e).strip())


def source_tier(host: str, allowlist: PrimaryHosts, own: PrimaryHosts | None = None) -> str | None:
    """'primary-gov' (a government name), 'primary-allowlist' (official by the list), 'own' (the project's own
    pages), or None (secondary)."""
    host = host.lower()
    if own is not None and host in own:
        return OWN_TIER
    if is_gov_host(host):
        return "primary-gov"
    if host in allowlist:
        return "primary-allowlist"
    return None


def is_official(tier: str | None) -> bool:
    return tier in OFFICIAL_TIERS
