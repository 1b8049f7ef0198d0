"""The sections of the audit's own steps: `priors` (excerpts per claim), `linter` (links) and `sampling` (the
review worklist's order).
"""

from __future__ import annotations

import math

from pydantic import Field, field_validator

from claims_pipeline.config.sections.strict import _check_hosts, _Strict


class PriorSettings(_Strict):
    excerpt_window_chars: int = Field(400, ge=40, le=100_000)
    max_excerpts_per_claim: int = Field(4, ge=1, le=1000)
    workers: int = Field(
        0, ge=0, le=64,
        description="Processes computing the priors of a big batch (process pool, by scope, safe in a Dagster run; "
        "same values as serial). 0 = auto (the CPUs, only for thousands of claims), 1 = always serial.",
    )


class LinterSettings(_Strict):
    root_url_allowlist: list[str] = Field(default_factory=list)

    @field_validator("root_url_allowlist")
    @classmethod
    def _hosts_or_root_urls(cls, v: list[str]) -> list[str]:
        from urllib.parse import urlsplit

        for entry in v:  # compared, lower-cased, with a link's host or with the whole root URL
            if "://" not in entry:
                _check_hosts([entry], lambda e: e, "a host, or a root URL such as https://www.example.org/")
                continue
            try:
                parts = urlsplit(entry)
                ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.path in ("", "/") \
                    and not parts.query and not parts.fragment and entry == entry.strip()
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"{entry!r}: not a root URL (http(s)://host/ without path, query or fragment)")
        return v


class SamplingWeights(_Strict):
    stale_marker: float = 100
    never_verified: float = 50
    stamp_age_per_30d: float = 8
    salient_statute_or_money: float = 10
    changed_after_verified: float = 150
    # the source's tier orders the review: official sources first, then secondary ones, the project's own pages last
    official_source: float = 40
    secondary_source: float = 20

    @field_validator("*")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):  # inf - inf or 0 * inf would make a score NaN, which does not sort
            raise ValueError("must be a finite number")
        return v


class SamplingSettings(_Strict):
    default_sample: int = Field(60, ge=1, le=1_000_000)
    seed: int = 1234
    priority_weights: SamplingWeights = SamplingWeights()
