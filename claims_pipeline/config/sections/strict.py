"""The base of every settings section (unknown keys, infinities and NaN refused; frozen) and the value checks the
sections share: what a later step would reject, rejected at load time.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class _Strict(BaseModel):
    # allow_inf_nan=False: `.inf` or `1e400` seconds would make a wait that never ends (a fetch of a URL that never
    # answers would never return); every number is finite, and durations, sizes, rates and counts have upper bounds
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# ---- value checks shared by the models: what a later step would reject, rejected at load time ------------------
# A ValueError raised here becomes "<file>: <dotted.key>: <message>" (see loading._format_errors); the message
# names the offending entry of a list or mapping.

_NOT_IN_HOST_RE = re.compile(r"[\s/:@?#\[\]*]")  # scheme, path, port, credentials, spaces, wildcards


def _host_problem(name: str) -> str | None:
    """Why `name` cannot be a host name or an address literal (None when it can). URLs are compared by their
    lower-cased host without port, so a scheme, path or port makes an entry that never matches anything."""
    if not name:
        return "empty host name"
    if "://" in name or "/" in name:
        return "a host name, not a URL"
    try:
        ipaddress.ip_address(name.strip("[]"))
        return None
    except ValueError:
        pass
    if re.search(r"\s", name):
        return "a host name cannot contain spaces"
    if ":" in name:
        return "a host name without a port"
    if "*" in name:
        return "no '*' wildcard here"
    if _NOT_IN_HOST_RE.search(name):
        return "not a host name"
    return None


def _check_hosts(entries: list[str], normalise: Callable[[str], str], what: str) -> list[str]:
    for entry in entries:
        problem = _host_problem(normalise(entry))
        if problem is not None:
            raise ValueError(f"{entry!r}: {problem} ({what})")
    return entries


def _nonblank(entries: list[str], what: str) -> list[str]:
    for entry in entries:
        if not entry.strip():
            raise ValueError(f"an empty entry would match {what}")
    return entries


def _folder_or_absent(v: Path | None) -> Path | None:
    """A folder the pipeline creates when missing: an existing file there would fail at the first write."""
    if v is not None and v.exists() and not v.is_dir():
        raise ValueError(f"not a folder: {v}")
    return v


def split_address_target(value: str) -> tuple[str, str | None]:
    """(address, port text or None) of an address-map target: 'ip:port', '[ipv6]:port' or a bare address; the
    address is '' when the brackets do not close."""
    target = value.strip()
    if target.startswith("["):  # [v6]:port or [v6]
        addr, closed, rest = target[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            addr = ""
        return addr, (rest[1:] if rest else None)
    if target.count(":") == 1:  # ip:port
        addr, port_text = target.split(":")
        return addr, port_text
    return target, None  # a bare address (v4, or v6 without brackets)


def _check_address_target(key: str, value: str) -> None:
    """Stricter than web.transport.parse_address_map, so every value accepted here parses there."""
    addr, port_text = split_address_target(value)
    try:
        ipaddress.ip_address(addr)
        if port_text is not None and not (port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{key!r}: {value!r} is not 'ip:port', '[ipv6]:port' or an IP address (a port is 1-65535; "
            "names are not resolved here)"
        ) from None


def _check_networks(v: list[str]) -> list[str]:
    for entry in v:  # as web.ssrf.AddressGuard.from_lists reads them
        try:
            ipaddress.ip_network(entry.strip(), strict=False)
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or CIDR range (e.g. 127.0.0.1/32)") from None
    return v


# the name of an environment variable: judge.api_key_env, notify.urls_env, a ${NAME} in a notify URL
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
