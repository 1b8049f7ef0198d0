"""SSRF guard: decide, after DNS resolution, whether the fetcher may connect to an address.

The check runs inside the connection step (see ``transport``), so it covers every redirect hop and every
new connection, and it sees the address actually dialled — not the name in the URL. Refused by default:
loopback, private, link-local, multicast, reserved, unspecified, CGNAT and the cloud metadata addresses, also
when an IPv6 address carries one of them as an embedded IPv4 address (::ffff:a.b.c.d, 6to4 2002::/16, Teredo
2001::/32, NAT64 64:ff9b::/96).
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
_NAT64_WKP = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix


class AddressRefused(Exception):
    """Raised instead of connecting: the note names the host and the refused address."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        self.host, self.address, self.reason = host, address, reason
        super().__init__(f"refused address {address} ({reason}) for host {host}")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries by a transition mechanism (6to4, Teredo, NAT64 well-known)."""
    out: list[tuple[str, ipaddress.IPv4Address]] = []
    if address.sixtofour is not None:  # 2002:AABB:CCDD::/48 routes to AA.BB.CC.DD
        out.append(("6to4", address.sixtofour))
    if address.teredo is not None:  # 2001:0::/32 carries the Teredo server and the (obfuscated) client
        server, client = address.teredo
        out += [("Teredo server", server), ("Teredo client", client)]
    if address in _NAT64_WKP:  # 64:ff9b::a.b.c.d, translated by a NAT64 gateway to a.b.c.d
        out.append(("NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)))
    return out


def forbidden_reason(address: IPAddress) -> str | None:
    """Why an address is off limits for outbound fetches, or None when it is a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return forbidden_reason(address.ipv4_mapped)  # ::ffff:127.0.0.1 is loopback in disguise
        for mechanism, inner in _embedded_ipv4(address):  # 2002:7f00:1::1 is 127.0.0.1 in disguise too
            reason = forbidden_reason(inner)
            if reason is not None:
                return f"{reason}, {mechanism} of {inner}"
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
