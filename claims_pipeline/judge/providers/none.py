"""provider: none (the default): no judge, no verdicts."""

from __future__ import annotations

from claims_pipeline.judge.prompt import Prompt
from claims_pipeline.judge.providers.base import ProviderAnswer, ProviderError

NO_JUDGE_MESSAGE = (
    "no judge configured: set judge.provider (anthropic or openai-compatible), judge.model and "
    "judge.api_key_env (the name of the environment variable holding the key) in the config file; "
    "judge.base_url for a local or compatible server"
)


class NoJudge:
    name = "none"
    model = ""
    configured = False

    async def ask(self, prompt: Prompt, *, max_output_tokens: int) -> ProviderAnswer:
        raise ProviderError("config", NO_JUDGE_MESSAGE)

    async def aclose(self) -> None:
        return None
