"""provider: anthropic — the official SDK's AsyncAnthropic, Messages API, with Citations.

The page text goes as a plain-text document with citations enabled; spans the model cites come back as
char_location citations (verbatim text of the document plus offsets). The answer JSON is the concatenation of
the text blocks (a cited span is a block of its own). Structured output is not used: the API does not allow it
together with citations.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import anthropic
from anthropic.types import DocumentBlockParam

from claims_pipeline.judge.prompt import Prompt
from claims_pipeline.judge.providers.base import ProviderAnswer, ProviderError, short_error


class AnthropicJudge:
    name = "anthropic"
    configured = True

    def __init__(self, *, model: str, api_key: str, base_url: str | None, timeout_s: float, max_retries: int,
                 retry_after_cap_s: float = 60.0):
        self.model = model
        self._key = api_key
        # The SDK waits out any Retry-After, an hour too, and the claim's deadline then ends it as a "timeout". A
        # 429 asking for longer than the cap is not retried (the SDK obeys x-should-retry) and is said at once.
        self.retry_after_cap_s = retry_after_cap_s

        async def no_long_waits(response: Any) -> None:
            wait = retry_after_s(response.headers)
            if response.status_code == 429 and wait is not None and wait > self.retry_after_cap_s:
                response.headers["x-should-retry"] = "false"

        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries,
            http_client=anthropic.DefaultAsyncHttpxClient(event_hooks={"response": [no_long_waits]}),
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
        except anthropic.RateLimitError as exc:
            wait = retry_after_s(exc.response.headers)
            after = f", retry after {wait:.0f} s" if wait is not None else ""
            raise ProviderError("status", f"rate limited (429){after}: {short_error(exc, self._key)}",
                                status=429) from None
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


def retry_after_s(headers: Any) -> float | None:
    """The wait a response asks for, in seconds: retry-after-ms, or Retry-After as seconds or an HTTP date."""
    try:
        return float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        when = email.utils.parsedate_tz(raw)
        return None if when is None else max(0.0, email.utils.mktime_tz(when) - time.time())
