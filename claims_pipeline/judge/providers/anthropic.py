"""provider: anthropic — the official SDK's AsyncAnthropic, Messages API, with Citations.

The page text goes as a plain-text document with citations enabled; spans the model cites come back as
char_location citations (verbatim text of the document plus offsets). The answer JSON is the concatenation of
the text blocks (a cited span is a block of its own). Structured output is not used: the API does not allow it
together with citations.
"""

from __future__ import annotations

import anthropic
from anthropic.types import DocumentBlockParam

from claims_pipeline.judge.prompt import Prompt
from claims_pipeline.judge.providers.base import ProviderAnswer, ProviderError, short_error


class AnthropicJudge:
    name = "anthropic"
    configured = True

    def __init__(self, *, model: str, api_key: str, base_url: str | None, timeout_s: float, max_retries: int):
        self.model = model
        self._key = api_key
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )

    async def ask(self, prompt: Prompt, *, max_output_tokens: int) -> ProviderAnswer:
        document: DocumentBlockParam = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": prompt.page},
            "title": "page text",
            "citations": {"enabled": True},
        }
        try:
            resp = await self._client.messages.create(
                model=self.model,
                max_tokens=max_output_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": [document, {"type": "text", "text": prompt.user_text(page_inline=False)}]}],
            )
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise ProviderError("auth", short_error(exc, self._key), status=exc.status_code) from None
        except anthropic.APITimeoutError as exc:
            raise ProviderError("timeout", short_error(exc, self._key)) from None
        except anthropic.APIStatusError as exc:
            raise ProviderError("status", short_error(exc, self._key), status=exc.status_code) from None
        except anthropic.APIError as exc:  # connection errors, undecodable responses
            raise ProviderError("connection", short_error(exc, self._key)) from None
        parts: list[str] = []
        spans: list[dict] = []
        for block in resp.content or []:
            if block.type != "text":
                continue
            parts.append(block.text or "")
            for c in getattr(block, "citations", None) or []:
                if getattr(c, "type", None) == "char_location":
                    spans.append({"start": c.start_char_index, "end": c.end_char_index, "text": c.cited_text})
        usage = resp.usage
        return ProviderAnswer(
            text="".join(parts),
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            stop_reason=resp.stop_reason,
            truncated=resp.stop_reason == "max_tokens",
            cited_spans=spans,
        )

    async def aclose(self) -> None:
        await self._client.close()
