"""The `judge` section: the LLM verdict step's provider, model, limits and prices.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from claims_pipeline.config.sections.strict import _ENV_NAME_RE, _Strict


class JudgePrice(_Strict):
    """USD per million tokens for one model (the cost estimate and the max_cost_usd cap read these)."""

    input_per_mtok: float = Field(ge=0, le=10_000)
    output_per_mtok: float = Field(ge=0, le=10_000)


def _default_judge_prices() -> dict[str, JudgePrice]:
    # List prices per million tokens (USD) of a few common models; a model found nowhere here is priced by
    # the longest key that prefixes its name (dated snapshots), else at 0 and flagged "price unknown".
    table = {
        "claude-haiku-4-5": (1.0, 5.0),
        "claude-sonnet-4-5": (3.0, 15.0),
        "claude-sonnet-4": (3.0, 15.0),
        "claude-opus-4-1": (15.0, 75.0),
        "claude-3-5-haiku": (0.8, 4.0),
        "gpt-4o-mini": (0.15, 0.6),
        "gpt-4o": (2.5, 10.0),
        "gpt-4.1-mini": (0.4, 1.6),
        "gpt-4.1": (2.0, 8.0),
    }
    return {name: JudgePrice(input_per_mtok=i, output_per_mtok=o) for name, (i, o) in table.items()}


class JudgeSettings(_Strict):
    """The LLM verdict step (claims_pipeline/judge). Off by default: provider "none" judges nothing."""

    provider: Literal["none", "anthropic", "openai-compatible"] = Field(
        "none", description='"anthropic" (Messages API with Citations), "openai-compatible" (OpenAI, vLLM, '
        'Ollama, llama.cpp server) or "none" (no verdicts).')
    model: str | None = Field(
        None, description="Model name; None = claude-haiku-4-5 (anthropic) or gpt-4o-mini (openai-compatible).")
    base_url: str | None = Field(
        None, description="API root (e.g. http://localhost:11434/v1 for Ollama); None = the SDK's default.")
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the API key (never the key itself); "
        "None = ANTHROPIC_API_KEY or OPENAI_API_KEY. Keys are read from the environment only.")
    concurrency: int = Field(8, ge=1, le=64, description="Requests in flight at once.")
    request_timeout_s: float = Field(60.0, gt=0, le=900, description="Deadline of one HTTP attempt.")
    max_retries: int = Field(
        2, ge=0, le=10, description="Retries by the SDK of a 429/5xx/timeout (the first attempt not counted). A "
        "429 whose Retry-After does not fit the claim's deadline (nor a minute) is not retried: the claim is "
        "INDETERMINATE at once, 'rate limited (429), retry after N s'.")
    max_claims_per_run: int = Field(
        40, ge=1, le=100_000, description="Claims sent to the provider in one run (cached answers not counted).")
    max_cost_usd: float = Field(
        2.0, ge=0, le=100_000, description="A run sends no further claim once this estimated spend would be passed.")
    max_output_tokens: int = Field(1024, ge=64, le=32_000, description="Answer length limit per claim.")
    max_page_chars: int = Field(
        40_000, ge=500, le=2_000_000,
        description="Characters of page text sent per claim; a longer page is cut to the passages around the "
        "claim's figures and words.")
    on_schedule: bool = Field(False, description="Whether the scheduled pipeline run also judges (it costs money).")
    prices: dict[str, JudgePrice] = Field(
        default_factory=_default_judge_prices, description="Model name → USD per million input/output tokens.")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_NAME_RE.fullmatch(v):
            # never echo the value: someone may have pasted the key itself here
            raise ValueError("the name of an environment variable (letters, digits, _), not a key")
        return v

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        """The whole URL, as the SDKs' HTTP client will parse it: a space, a control character, a bad port or an
        unclosed [IPv6] was accepted here and failed the verdict step later (httpx's InvalidURL)."""
        if v is None:
            return v
        if not re.fullmatch(r"https?://[^\s/?#]+(?:[/?#]\S*)?", v) or re.search(r"[\x00-\x1f\x7f-\x9f]", v):
            raise ValueError("an http:// or https:// URL, without spaces or control characters")
        import httpx

        try:
            url = httpx.URL(v)
        except (httpx.InvalidURL, ValueError) as exc:
            raise ValueError(f"an http:// or https:// URL ({exc})") from None
        if not url.host:
            raise ValueError("an http:// or https:// URL naming a host")
        if url.port is not None and not 0 < url.port < 65536:
            raise ValueError(f"an http:// or https:// URL (port {url.port} is not 1–65535)")
        return v

    @property
    def effective_model(self) -> str:
        if self.model:
            return self.model
        return "gpt-4o-mini" if self.provider == "openai-compatible" else "claude-haiku-4-5"

    @property
    def effective_api_key_env(self) -> str:
        if self.api_key_env:
            return self.api_key_env
        return "OPENAI_API_KEY" if self.provider == "openai-compatible" else "ANTHROPIC_API_KEY"

    @property
    def needs_api_key(self) -> bool:
        """Whether the provider cannot answer without the key: a local openai-compatible server (a base_url)
        runs without one."""
        return self.provider != "none" and not (self.provider == "openai-compatible" and self.base_url)
