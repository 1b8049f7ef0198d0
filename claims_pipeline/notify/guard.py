"""Where a notification may go: the fetcher's address rules (web/ssrf.py), applied to every address a channel's
send dials, redirects included.

A channel passes when the address it connects to is public, or inside what the deployment lets its fetches reach
(fetch.allow_hosts, fetch.allow_networks: the demo's and the tests' fixture web on loopback) or notify.allow_networks
(an internal chat or mail server). The cloud metadata addresses and link-local ones are refused whatever the lists
say: no chat server lives there, and a redirect or a mistyped URL aimed there would hand it the message and its
secret headers. The checks run in the send's own process (sender.py), on the address actually dialled, so every
spelling of an address (::ffff:10.0.0.5, 2130706433, 0x7f.1, a name resolving to 10.0.0.5) is judged as the
number it is."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from claims_pipeline.web.ssrf import AddressGuard, AddressRefused, forbidden_reason

if TYPE_CHECKING:
    from claims_pipeline.config.settings import FetchSettings, NotifySettings

# reasons web.ssrf gives that no allow list lifts for a notification (an embedded form says "<reason>, 6to4 of …")
ALWAYS_REFUSED = ("cloud metadata", "link-local")


@dataclass(frozen=True)
class Reach:
    """What a deployment lets its notifications reach beyond the public internet (as the settings write it)."""

    allow_hosts: tuple[str, ...] = ()
    allow_networks: tuple[str, ...] = ()
    loopback: bool = True  # False: loopback refused whatever the lists say (production: no service of this machine)

    @classmethod
    def of(cls, fetch: FetchSettings, notify: NotifySettings, deployment: str) -> Reach:
        """What the settings' sections allow: the fetches' allowances and notify.allow_networks; in production, no
        loopback (deployments.py refuses settings that allow it; this holds should a caller skip that check)."""
        return cls(tuple(fetch.allow_hosts), (*fetch.allow_networks, *notify.allow_networks),
                   loopback=deployment != "production")


class ChannelGuard:
    """Decides, for one address a send is about to dial, whether it may (raises AddressRefused if not)."""

    def __init__(self, reach: Reach) -> None:
        self._inner = AddressGuard.from_lists(reach.allow_hosts, reach.allow_networks)
        self._named = {h.strip().lower().strip("[]") for h in reach.allow_hosts}
        self._resolved_for_allowed_names: set[str] = set()
        self._refused = ALWAYS_REFUSED if reach.loopback else (*ALWAYS_REFUSED, "loopback")

    def is_allowed_name(self, host: str) -> bool:
        return host.strip().lower().strip("[]").rstrip(".") in self._named

    def note_resolved(self, addresses: Iterable[str]) -> None:
        """Addresses a name of fetch.allow_hosts resolved to: the send may dial them (the name was allowed)."""
        self._resolved_for_allowed_names.update(addresses)

    def check(self, address: str, host: str | None = None) -> None:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:10.0.0.5 is 10.0.0.5: judged, allowed and named as such
        reason = forbidden_reason(ip)
        if reason is not None and reason.startswith(self._refused):
            where = "in this deployment" if reason.startswith("loopback") else "ever"
            raise AddressRefused(host or str(ip), str(ip), f"{reason}: never a notification's destination {where}")
        if str(ip) in self._resolved_for_allowed_names:
            return
        try:
            self._inner.check(host or str(ip), str(ip))
        except AddressRefused as exc:
            raise AddressRefused(exc.host, exc.address, f"{exc.reason}; allow it with notify.allow_networks "
                                 "if this is your own chat or mail server") from None
