"""Shared pieces of the judge engine's tests: claims on a small page, settings pointing at a scripted server."""

from __future__ import annotations

from claims_pipeline.config.settings import JudgeSettings
from claims_pipeline.judge.model import JudgeItem
from claims_pipeline.judge.providers import make_provider

PAGE = (
    "Antigua and Barbuda Inland Revenue\n"
    "Property transfer\n"
    "Stamp duty on the transfer of land is 7.5% payable by the vendor.\n"
    "The purchaser pays 2.5% of the market value.\n"
    "Non-citizens need a licence under CAP. 293.\n"
)
KEY = "sk-test-5f1c2a9e8d7b"
ENV = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY}


def item(n: int, *, prior: str = "TOKENS_PRESENT", raw: str = "7.5%", claim: str | None = None,
         page: str = PAGE, page_hash: str = "hash-1", stale_changed: bool = False, tier: str = "primary-gov") -> JudgeItem:
    number = float(raw.rstrip("%")) if raw.endswith("%") else None
    return JudgeItem(
        id=f"ag:{n}:0000{n:04d}", scope="ag", file="ag/playbook.md", line_no=n,
        source_url="https://ird.gov.ag/property", claim_text=claim or f"Stamp duty on land transfer, vendor pays {raw} (claim {chr(64 + n)})",
        line_text=f"- Stamp duty: vendor pays **{raw}** ([IRD](https://ird.gov.ag/property))",
        values=[{"type": "pct", "raw": raw, "number": number}], source_tier=tier, prior=prior,
        stale_changed=stale_changed, page_text=page, page_text_hash=page_hash,
    )


def settings_for(srv, provider: str = "anthropic", **kw) -> JudgeSettings:
    base = srv.anthropic_url if provider == "anthropic" else srv.openai_url
    defaults = dict(provider=provider, base_url=base, request_timeout_s=5.0, max_retries=2, concurrency=4)
    return JudgeSettings(**{**defaults, **kw})


def provider_for(js: JudgeSettings):
    return make_provider(js, environ=ENV)
