"""The `fetch` and `pdf` sections: how cited pages are fetched (politeness, retries, breaker, robots.txt, the
address guard) and how a PDF is read.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Annotated, Literal

from pydantic import Field, field_validator

from claims_pipeline.common.urls import domain_of_pattern
from claims_pipeline.config.sections.strict import (
    _check_address_target,
    _check_hosts,
    _check_networks,
    _host_problem,
    _nonblank,
    _Strict,
)


class HostPolicy(_Strict):
    concurrency: int = Field(ge=1, le=64)
    interval_ms: int = Field(ge=0, le=600_000)


class FetchSettings(_Strict):
    user_agent: str = "claims-pipeline/{version} (+https://github.com/claims-pipeline/claims_pipeline)"
    concurrency: int = Field(64, ge=1, le=1024)
    req_per_sec: float = Field(10.0, gt=0, le=10_000)
    default_host: HostPolicy = HostPolicy(concurrency=2, interval_ms=500)
    gov_host: HostPolicy = HostPolicy(concurrency=1, interval_ms=1000)
    per_host_overrides: dict[str, HostPolicy] = Field(
        default_factory=lambda: {
            "eur-lex.europa.eu": HostPolicy(concurrency=1, interval_ms=10_000),
            "legifrance.gouv.fr": HostPolicy(concurrency=1, interval_ms=2_000),
        }
    )
    excluded_hosts: list[str] = Field(default_factory=lambda: ["linkedin.com"])
    connect_timeout_s: float = Field(10.0, gt=0, le=600)
    request_timeout_s: float = Field(15.0, gt=0, le=600, description="Whole-response deadline per attempt.")
    max_retries: int = Field(3, ge=1, le=10, description="Attempts per URL, the first included.")
    retry_backoff_s: list[float] = Field(default_factory=lambda: [1.0, 2.0, 4.0])
    retry_jitter_pct: float = Field(25.0, ge=0, le=100)
    retry_after_cap_s: float = Field(60.0, ge=0, le=3600)
    max_redirects: int = Field(5, ge=0, le=20)
    max_html_bytes: int = Field(5_000_000, ge=1024, le=1_000_000_000)
    max_pdf_bytes: int = Field(12_000_000, ge=1024, le=1_000_000_000)
    run_budget_s: float = Field(3600.0, gt=0, le=604_800, description="Wall-time bound for one fetch run (at most a week).")
    breaker_failures: int = Field(3, ge=1, le=1000, description="Consecutive timeouts/connection failures that open a host's breaker.")
    breaker_urls: int = Field(
        3, ge=1, le=1000,
        description="Distinct URLs of a host among those failures before its breaker opens: one page's retries "
        "never close a whole host.")
    breaker_open_s: float = Field(
        900.0, ge=0, le=86_400,
        description="How long a breaker a run opened keeps the host closed for later runs (shared through the page "
        "cache); after it, the next run sends one probe: a response closes the breaker, a failure opens it for "
        "another window. Runs that meet an open breaker do not extend it; a change of the host's route "
        "(address_map, allow_networks, allow_hosts) closes it at once.")
    host_lease_s: float = Field(
        30.0, ge=0, le=3600,
        description="Politeness shared across processes and machines through the page cache's database: a process "
        "fetching from a host holds that host for this long, renewing while it has work for it, so a killed process "
        "holds its hosts at most this long. Never shorter than twice (request_timeout_s + twice the host's "
        "interval + 0.5 s). 0 = each process keeps its own politeness (then run one fetch at a time).",
    )
    verify_tls: bool = True
    event_loop: Literal["auto", "uvloop", "asyncio"] = Field(
        "auto", description="auto = uvloop when installed (it is a dependency on Linux and macOS), else asyncio's.")
    robots_enabled: bool = True
    robots_timeout_s: float = Field(10.0, gt=0, le=600)
    robots_cache_hours: float = Field(
        24.0, ge=0, le=8760,
        description="robots.txt kept in the page cache is reused without a request while younger than this "
        "(RFC 9309 §2.4: generally not over 24 h); older, it is re-validated conditionally (304 keeps it). "
        "0 = never reused without asking the server.",
    )
    robots_unreachable: Literal["disallow", "allow"] = Field(
        "disallow",
        description="When robots.txt cannot be had (5xx, 429, a timeout or a reset) and no copy is stored: "
        "'disallow' fetches nothing from that origin this run (RFC 9309 §2.3.1.4); 'allow' fetches as if there "
        "were no robots.txt.",
    )
    min_text_chars: int = Field(200, ge=0, le=1_000_000)
    js_spa_hosts: list[str] = Field(default_factory=lambda: ["elegislation.gov.hk"])
    binary_content_prefixes: list[str] = Field(
        default_factory=lambda: ["application/octet-stream", "application/zip", "image/", "audio/", "video/"]
    )
    blocked_status_codes: list[Annotated[int, Field(ge=100, le=999)]] = Field(
        default_factory=lambda: [403, 429, 503, 999], description="HTTP statuses (three digits).")
    challenge_titles: list[str] = Field(default_factory=lambda: ["Just a moment", "Attention Required", "One more step"])
    allow_hosts: list[str] = Field(
        default_factory=list, description="Hosts allowed past the SSRF guard (exact names)."
    )
    allow_networks: list[str] = Field(
        default_factory=list, description="Addresses or CIDR ranges allowed past the SSRF guard."
    )
    address_map: dict[str, str] = Field(
        default_factory=dict,
        description="host -> 'ip:port', like curl --resolve; '*.suffix' keys match subdomains.",
    )

    @field_validator("retry_backoff_s")
    @classmethod
    def _backoff_nonempty(cls, v: list[float]) -> list[float]:
        if not v or any(not math.isfinite(x) or x < 0 for x in v):
            raise ValueError("needs at least one non-negative, finite number of seconds")
        if len(v) > 20 or max(v) > 3600:
            raise ValueError("at most 20 waits of at most 3600 seconds each")
        return v

    @field_validator("user_agent")
    @classmethod
    def _user_agent_sendable(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty (its first word is the robots.txt product token)")
        if v != v.strip():
            raise ValueError("must not start or end with spaces (not a valid HTTP header value)")
        bad = next((c for c in v if not (" " <= c <= "~" or c == "\t")), None)
        if bad is not None:
            raise ValueError(f"only printable ASCII can be sent in an HTTP header, not {bad!r}")
        return v

    @field_validator("robots_cache_hours")
    @classmethod
    def _robots_hours_fit(cls, v: float) -> float:
        try:
            timedelta(hours=v)
        except OverflowError:
            raise ValueError("too large a number of hours") from None
        return v

    @field_validator("event_loop")
    @classmethod
    def _uvloop_installed(cls, v: str) -> str:
        if v == "uvloop":
            try:
                import uvloop  # noqa: F401
            except ImportError:
                raise ValueError("'uvloop' but uvloop is not installed (pip install uvloop), or use 'auto'") from None
        return v

    @field_validator("excluded_hosts", "js_spa_hosts")
    @classmethod
    def _domain_lists(cls, v: list[str]) -> list[str]:
        return _check_hosts(v, domain_of_pattern, "a domain; it matches its subdomains too")

    @field_validator("per_host_overrides")
    @classmethod
    def _override_hosts(cls, v: dict[str, HostPolicy]) -> dict[str, HostPolicy]:
        _check_hosts(list(v), domain_of_pattern, "a domain; it matches its subdomains too")
        return v

    @field_validator("allow_hosts")
    @classmethod
    def _allow_hosts_exact(cls, v: list[str]) -> list[str]:
        return _check_hosts(v, lambda e: e.strip().lower().strip("[]"), "an exact host name or address")

    @field_validator("allow_networks")
    @classmethod
    def _networks_parse(cls, v: list[str]) -> list[str]:
        return _check_networks(v)

    @field_validator("address_map")
    @classmethod
    def _address_map_parses(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            host = key.removeprefix("*.")
            problem = _host_problem(host)
            if problem is not None:
                raise ValueError(f"{key!r}: {problem} (a key is a host, or '*.suffix' for its subdomains)")
            _check_address_target(key, value)
        return v

    @field_validator("binary_content_prefixes")
    @classmethod
    def _prefixes_nonblank(cls, v: list[str]) -> list[str]:
        return _nonblank(v, "every content type (every page would read as BINARY)")

    @field_validator("challenge_titles")
    @classmethod
    def _titles_nonblank(cls, v: list[str]) -> list[str]:
        return _nonblank(v, "every page title (every titled page would read as BLOCKED)")


class PdfSettings(_Strict):
    enabled: bool = True
    max_pages: int = Field(300, ge=0, le=100_000, description="0 = every page.")
    timeout_s: float = Field(60.0, gt=0, le=3600)
    max_text_chars: int = Field(5_000_000, ge=1000, le=1_000_000_000)

    @field_validator("timeout_s")
    @classmethod
    def _timeout_finite(cls, v: float) -> float:
        if not math.isfinite(v) or v >= 2**63:  # it becomes the extractor's CPU limit (prlimit --cpu)
            raise ValueError("must be a finite number of seconds")
        return v
