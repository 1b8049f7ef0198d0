"""SSRF guard: checked after DNS and on every hop. Only loopback is ever dialled by these tests: non-allowed
loopback (127.0.0.2, [::1]) and a stub resolver answering private/metadata addresses, behind a dialling
backend that itself refuses anything but loopback — so even a broken guard connects nowhere else."""

from __future__ import annotations

import asyncio
import ipaddress

import httpcore
import pytest

from claims_pipeline.web.fetcher import Fetcher
from claims_pipeline.web.records import FetchStatus
from claims_pipeline.web.ssrf import AddressGuard, AddressRefused, forbidden_reason
from claims_pipeline.web.transport import lookup_address_map, parse_address_map


class LoopbackOnlyBackend(httpcore.AsyncNetworkBackend):
    """Records every dial; refuses (without any packet) anything that is not loopback."""

    def __init__(self) -> None:
        self.dialled: list[str] = []
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.dialled.append(host)
        if not ipaddress.ip_address(host).is_loopback:
            raise httpcore.ConnectError(f"test backend: will not dial {host}")
        return await self._real.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                            socket_options=socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


def run(settings, urls, resolver=None):
    backend = LoopbackOnlyBackend()

    async def go():
        async with Fetcher(settings.fetch, settings.pdf, resolver=resolver, inner_backend=backend) as f:
            return {r.url: r async for r in f.fetch_many(urls)}

    return asyncio.run(go()), backend.dialled


@pytest.mark.parametrize("address,reason", [
    ("127.0.0.1", "loopback"), ("127.0.0.2", "loopback"), ("::1", "loopback"), ("10.0.0.1", "private"),
    ("172.16.5.4", "private"), ("192.168.1.1", "private"), ("169.254.169.254", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"), ("169.254.1.1", "link-local"), ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"), ("ff02::1", "multicast"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("100.64.1.1", "CGNAT"), ("240.0.0.1", "reserved"), ("::ffff:127.0.0.1", "loopback"), ("fc00::1", "private"),
])
def test_forbidden_reasons(address, reason):
    assert forbidden_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::6810:85e5"])
def test_public_addresses_pass(address):
    assert forbidden_reason(ipaddress.ip_address(address)) is None


# IPv6 transition addresses that embed a forbidden IPv4 address: 6to4 (2002:AABB:CCDD::/48), Teredo
# (2001:0::/32, server in bits 32-63, client XOR-ed in the last 32 bits) and the NAT64 well-known prefix.
_EMBEDDED = [
    ("2002:a9fe:a9fe::1", "cloud metadata, 6to4 of 169.254.169.254"),
    ("2002:7f00:1::1", "loopback, 6to4 of 127.0.0.1"),
    ("2002:0a00:0001::1", "private, 6to4 of 10.0.0.1"),
    ("2002:c0a8:0101:5::9", "private, 6to4 of 192.168.1.1"),
    ("2002:6440:0007::1", "CGNAT, 6to4 of 100.64.0.7"),
    ("2002::1", "unspecified, 6to4 of 0.0.0.0"),
    ("2001:0:4136:e378:8000:63bf:5601:5656", "link-local, Teredo client of 169.254.169.169"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback, Teredo client of 127.0.0.1"),
    ("2001:0:a00:1:8000:63bf:f7f7:f7f7", "private, Teredo server of 10.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata, NAT64 of 169.254.169.254"),
    ("64:ff9b::7f00:1", "loopback, NAT64 of 127.0.0.1"),
    ("64:ff9b::10.0.0.1", "private, NAT64 of 10.0.0.1"),
]


@pytest.mark.parametrize("address,reason", _EMBEDDED)
def test_forbidden_ipv4_inside_ipv6_transition_addresses(address, reason):
    assert forbidden_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", [
    "2001:0:808:808:8000:63bf:f7f7:f7f7",  # Teredo with public server and client: 2001::/23 is not global
    "64:ff9b::808:808",  # NAT64 of a public address: the well-known prefix stays refused as before
    "64:ff9b:1::a9fe:a9fe",  # local-use NAT64 prefix (RFC 8215)
    "::127.0.0.2",  # IPv4-compatible (deprecated)
])
def test_other_transition_addresses_stay_refused(address):
    assert forbidden_reason(ipaddress.ip_address(address)) is not None


def test_guard_allow_lists():
    guard = AddressGuard.from_lists(["intranet.example"], ["127.0.0.1/32", "fd12::/16"])
    guard.check("x", "127.0.0.1")
    guard.check("x", "fd12::5")
    guard.check("intranet.example", "10.1.1.1")
    with pytest.raises(AddressRefused, match=r"refused address 127.0.0.2 \(loopback\) for host x"):
        guard.check("x", "127.0.0.2")


def test_address_map_parsing_and_wildcards():
    table = parse_address_map({"tax.gov.xa": "127.0.0.1:8765", "*.fixture": "[::1]:9", "plain": "10.0.0.1"})
    assert lookup_address_map(table, "TAX.gov.xa") == ("127.0.0.1", 8765)
    assert lookup_address_map(table, "a.b.fixture") == ("::1", 9)
    assert lookup_address_map(table, "plain") == ("10.0.0.1", None)
    assert lookup_address_map(table, "other.example") is None
    with pytest.raises(ValueError, match="not 'ip:port'"):
        parse_address_map({"x": "localhost:80"})


@pytest.mark.parametrize("answer", [["10.0.0.1"], ["169.254.169.254"], ["fd00:ec2::254"], ["100.64.0.7"],
                                    ["192.168.0.10"], ["0.0.0.0"], ["::ffff:10.0.0.1"]])
def test_stub_resolver_private_answers_are_refused_before_dialling(web, settings_for, answer):
    settings = settings_for(address_map={}, robots_enabled=False)
    url = "http://innocent-looking.example/page"
    results, dialled = run(settings, [url], resolver=lambda host: answer)
    r = results[url]
    assert r.status == FetchStatus.REFUSED
    assert str(ipaddress.ip_address(answer[0])) in r.note and "innocent-looking.example" in r.note
    assert dialled == []


@pytest.mark.parametrize("answer", [a for a, _ in _EMBEDDED])
def test_stub_resolver_transition_answers_embedding_forbidden_ipv4_are_refused_before_dialling(web, settings_for, answer):
    # 127.0.0.1/32 is allowed in these settings: the 6to4/Teredo/NAT64 forms of 127.0.0.1 must not be
    settings = settings_for(address_map={}, robots_enabled=False)
    url = "http://innocent-looking.example/page"
    results, dialled = run(settings, [url], resolver=lambda host: [answer])
    r = results[url]
    assert r.status == FetchStatus.REFUSED, r.note
    assert str(ipaddress.ip_address(answer)) in r.note and "innocent-looking.example" in r.note
    assert dialled == []


def test_only_the_allowed_address_of_a_mixed_answer_is_dialled(web, settings_for):
    settings = settings_for(address_map={}, robots_enabled=False)
    url = f"http://mixed.example:{web.port}/_/page/m"
    results, dialled = run(settings, [url], resolver=lambda host: ["10.0.0.1", "127.0.0.1"])
    assert results[url].status == FetchStatus.OK
    assert dialled == ["127.0.0.1"]


def test_public_answer_passes_the_guard(web, settings_for):
    # the guard lets a public address through; the test backend then refuses to dial it (no packet leaves)
    settings = settings_for(address_map={}, robots_enabled=False, max_retries=1)
    url = "http://public.example/page"
    results, dialled = run(settings, [url], resolver=lambda host: ["93.184.216.34"])
    assert dialled == ["93.184.216.34"]
    assert results[url].status == FetchStatus.UNAVAILABLE and "will not dial" in results[url].note


def test_address_map_to_private_address_is_refused(web, settings_for):
    settings = settings_for(address_map={"intranet.fixture": "10.0.0.1:80"})
    url = "http://intranet.fixture/admin"
    results, dialled = run(settings, [url], resolver=lambda h: [])
    assert results[url].status == FetchStatus.REFUSED and "10.0.0.1 (private)" in results[url].note
    assert dialled == []


def test_loopback_literals_not_allow_listed_are_refused(web, settings_for):
    urls = [f"http://127.0.0.2:{web.port}/_/page/a", f"http://[::1]:{web.port}/_/page/b"]
    web.clear_log()
    results, dialled = run(settings_for(), urls)
    assert [results[u].status for u in urls] == [FetchStatus.REFUSED, FetchStatus.REFUSED]
    assert "127.0.0.2 (loopback)" in results[urls[0]].note and "::1 (loopback)" in results[urls[1]].note
    assert dialled == [] and web.requests() == []


def test_every_redirect_hop_is_checked(web, settings_for):
    url = web.url("hop.fixture", "/_/redirect-refused")
    web.clear_log()
    results, dialled = run(settings_for(), [url])
    assert results[url].status == FetchStatus.REFUSED and "redirected from" in results[url].note
    assert set(dialled) == {"127.0.0.1"}
    assert {e["host"] for e in web.requests()} == {"hop.fixture"}


def test_allow_hosts_by_name(web, settings_for):
    settings = settings_for(allow_networks=[], allow_hosts=["named.fixture"], robots_enabled=False)
    ok, other = web.url("named.fixture", "/_/page/n"), web.url("unnamed.fixture", "/_/page/n")
    results, _ = run(settings, [ok, other])
    assert results[ok].status == FetchStatus.OK
    assert results[other].status == FetchStatus.REFUSED


def test_tls_is_verified_by_default():
    import ssl

    from claims_pipeline.web.transport import tls_context

    ctx = tls_context(True)
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
