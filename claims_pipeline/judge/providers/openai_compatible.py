"""provider: openai-compatible — the official SDK's AsyncOpenAI with a configurable base_url (OpenAI, vLLM,
Ollama, llama.cpp's server). Chat Completions with a JSON-schema response_format; a server that rejects
response_format (400/422) is asked again without it, and from then on in plain JSON (the prompt asks for it)."""

from __future__ import annotations

from typing import Any

import openai

from claims_pipeline.judge.cost import estimate_tokens
from claims_pipeline.judge.prompt import ANSWER_SCHEMA, DIRECTION_B_SCHEMA, Prompt
from claims_pipeline.judge.providers.base import ProviderAnswer, ProviderError, short_error

RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "claim_verdict", "schema": ANSWER_SCHEMA, "strict": True}}
DIRECTION_B_FORMAT = {"type": "json_schema",
                      "json_schema": {"name": "direction_b", "schema": DIRECTION_B_SCHEMA, "strict": True}}


class OpenAICompatibleJudge:
    name = "openai-compatible"
    configured = True

    def __init__(self, *, model: str, api_key: str, base_url: str | None, timeout_s: float, max_retries: int):
        self.model = model
        self._key = api_key
        self.structured: bool | None = None  # None: not yet known; False once the server rejected the schema
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries)

    async def _create(self, prompt: Prompt, max_output_tokens: int, structured: bool):
        kwargs: dict[str, Any] = {}
        if structured:
            kwargs["response_format"] = DIRECTION_B_FORMAT if prompt.kind == "direction_b" else RESPONSE_FORMAT
        return await self._client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user_text()}],
            max_tokens=max_output_tokens,
            temperature=0,
            **kwargs,
        )

    async def ask(self, prompt: Prompt, *, max_output_tokens: int) -> ProviderAnswer:
        try:
            try:
                resp = await self._create(prompt, max_output_tokens, self.structured is not False)
                if self.structured is None:
                    self.structured = True
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                if self.structured is not None:
                    raise
                self.structured = False  # this server has no JSON-schema output: plain JSON from now on
                resp = await self._create(prompt, max_output_tokens, False)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ProviderError("auth", short_error(exc, self._key), status=exc.status_code) from None
        except openai.APITimeoutError as exc:
            raise ProviderError("timeout", short_error(exc, self._key)) from None
        except openai.APIStatusError as exc:
            raise ProviderError("status", short_error(exc, self._key), status=exc.status_code) from None
        except openai.APIError as exc:
            raise ProviderError("connection", short_error(exc, self._key)) from None
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "") if choice is not None and choice.message is not None else ""
        usage = resp.usage
        # Some local servers send no usage: the estimate stands in (the cap must still count something).
        in_tok = int(getattr(usage, "prompt_tokens", 0) or 0) or estimate_tokens(prompt.system + prompt.user_text())
        out_tok = int(getattr(usage, "completion_tokens", 0) or 0) or estimate_tokens(text)
        finish = choice.finish_reason if choice is not None else None
        return ProviderAnswer(text=text, input_tokens=in_tok, output_tokens=out_tok, stop_reason=finish,
                              truncated=finish == "length")

    async def aclose(self) -> None:
        await self._client.close()
