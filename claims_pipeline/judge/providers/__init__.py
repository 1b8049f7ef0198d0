"""Judge providers and the factory that builds one from the `judge:` settings.

API keys come from the environment only: the settings name the variable (judge.api_key_env), never the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from claims_pipeline.config.settings import ConfigError, JudgeSettings
from claims_pipeline.judge.providers.base import JudgeProvider, ProviderAnswer, ProviderError, parse_answer
from claims_pipeline.judge.providers.none import NO_JUDGE_MESSAGE, NoJudge

# A local openai-compatible server (vLLM, Ollama, llama.cpp) needs no key, but the SDK wants a non-empty one.
LOCAL_PLACEHOLDER_KEY = "no-key"

__all__ = [
    "JudgeProvider", "ProviderAnswer", "ProviderError", "parse_answer", "NO_JUDGE_MESSAGE", "NoJudge",
    "make_provider",
]


def make_provider(judge: JudgeSettings, *, environ: Mapping[str, str] | None = None) -> JudgeProvider:
    """The provider named by judge.provider. Raises ConfigError when the key's variable is unset (naming the
    variable, never a value). An openai-compatible provider with a base_url may run without a key."""
    env = os.environ if environ is None else environ
    if judge.provider == "none":
        return NoJudge()
    var = judge.effective_api_key_env
    key = env.get(var, "")
    if not key:
        if not judge.needs_api_key:
            key = LOCAL_PLACEHOLDER_KEY
        else:
            raise ConfigError(f"judge.api_key_env: the environment variable {var} is not set (judge.provider: "
                              f"{judge.provider} needs an API key)")
    common: dict[str, Any] = dict(model=judge.effective_model, api_key=key, base_url=judge.base_url,
                  timeout_s=judge.request_timeout_s, max_retries=judge.max_retries)
    if judge.provider == "anthropic":
        from claims_pipeline.judge.providers.anthropic import AnthropicJudge
        from claims_pipeline.judge.runner import claim_deadline_s

        # a Retry-After is waited out only when an answer can still come within the claim's deadline (and, as
        # the OpenAI SDK has it, never over a minute); longer, the 429 is told at once
        cap = min(60.0, max(0.0, claim_deadline_s(judge) / 2 - judge.request_timeout_s - 2.0))
        return AnthropicJudge(**common, retry_after_cap_s=cap)
    from claims_pipeline.judge.providers.openai_compatible import OpenAICompatibleJudge

    return OpenAICompatibleJudge(**common)
