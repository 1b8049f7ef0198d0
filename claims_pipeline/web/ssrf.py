"""SSRF guard: decide, after DNS resolution, whether the fetcher may connect to an address.

The check runs inside the connection step (see ``transport``), so it covers every redirect hop and every
new connection, and it sees the address actually dialled — not the name in the URL. Refused by default:
loopback, private, link-local, multicast, reserved, unspecified, CGNAT and the cloud metadata addresses.
A host in ``allow_hosts`` (exact name, or the address literal) or an address inside ``allow_networks``
passes; tests and the demo allow the fixture web's 127.0.0.1 that way.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


class AddressRefused(Exception):
    """Raised instead of connecting: the note names the host and the refused address."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        self.host, self.address, self.reason = host, address, reason
        super().__init__(f"refused address {address} ({reason}) for host {host}")


def forbidden_reason(address: IPAddress) -> str | None:
    """Why an address is off limits for outbound fetches, or None when it is a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return forbidden_reason(address.ipv4_mapped)  # ::ffff:127.0.0.1 is loopback in disguise
    if address in _METADATA:
        return "cloud metadata"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("CGNAT", isinstance(address, ipaddress.IPv4Address) and address in _CGNAT),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
    )
    for name, hit in checks:
        if hit:
            return name
    if not address.is_global:  # anything else the registry does not call global (e.g. documentation nets)
        return "not globally routable"
    return None


@dataclass(frozen=True)
class AddressGuard:
    allow_hosts: frozenset[str]
    allow_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    @classmethod
    def from_lists(cls, allow_hosts: Iterable[str], allow_networks: Iterable[str]) -> AddressGuard:
        nets = tuple(ipaddress.ip_network(n.strip(), strict=False) for n in allow_networks)
        return cls(frozenset(h.strip().lower().strip("[]") for h in allow_hosts), nets)

    def check(self, host: str, address: str) -> None:
        """Raise AddressRefused unless connecting to ``address`` (resolved from ``host``) is allowed."""
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
        if host.lower().strip("[]") in self.allow_hosts or str(ip) in self.allow_hosts:
            return
        if any(ip.version == net.version and ip in net for net in self.allow_networks):
            return
        reason = forbidden_reason(ip)
        if reason is not None:
            raise AddressRefused(host, str(ip), reason)
