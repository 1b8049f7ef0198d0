"""Primary-source gating: which cited hosts count as primary."""

from __future__ import annotations

from collections.abc import Iterable

from claims_pipeline.urls import is_gov_host


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


def source_tier(host: str, allowlist: PrimaryHosts) -> str | None:
    """'primary-gov', 'primary-allowlist', or None (secondary)."""
    host = host.lower()
    if is_gov_host(host):
        return "primary-gov"
    if host in allowlist:
        return "primary-allowlist"
    return None
