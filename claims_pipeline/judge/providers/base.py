"""What every judge provider gives the runner, and the lenient parsing of a model's answer (hostile input)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from claims_pipeline.judge.model import Direction, DirectionBDraft, DraftVerdict
from claims_pipeline.judge.prompt import Prompt

MAX_FIELD_CHARS = 4000  # a longer string field of an answer is cut: the report shows one line, not a dump
MAX_ANSWER_CHARS = 200_000  # an answer longer than this is not parsed at all


@dataclass
class ProviderAnswer:
    text: str  # the answer text as received (JSON expected)
    input_tokens: int
    output_tokens: int
    stop_reason: str | None = None
    truncated: bool = False  # the answer hit the output-token limit
    cited_spans: list[dict[str, Any]] = field(default_factory=list)  # Anthropic citations: start, end, text


class ProviderError(Exception):
    """A request that failed after the SDK's own retries. `kind`: timeout | connection | status | auth |
    config. The message never carries the API key (see redact)."""

    def __init__(self, kind: str, message: str, *, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


class JudgeProvider(Protocol):
    name: str
    model: str
    configured: bool

    async def ask(self, prompt: Prompt, *, max_output_tokens: int) -> ProviderAnswer: ...

    async def aclose(self) -> None: ...


def redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    return text


def short_error(exc: BaseException, secret: str | None, limit: int = 300) -> str:
    msg = " ".join(str(exc).split())
    return redact(msg, secret)[:limit] or type(exc).__name__


_FENCE_RE = re.compile(r"```(?:json)?\s*", re.IGNORECASE)
_CONFIDENCE_WORDS = {"HIGH": 0.9, "MEDIUM": 0.6, "LOW": 0.3}


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        raise ValueError("a text field holds an object or a list")
    return str(v)[:MAX_FIELD_CHARS]


def _confidence(v: Any) -> float:
    if isinstance(v, str):
        word = v.strip().upper()
        if word in _CONFIDENCE_WORDS:
            return _CONFIDENCE_WORDS[word]
        v = word.rstrip("%")
        num = float(v) / (100 if word.endswith("%") else 1)
    elif isinstance(v, bool) or v is None:
        raise ValueError("confidence is not a number")
    else:
        num = float(v)
    if math.isnan(num):
        raise ValueError("confidence is not a number")
    return min(1.0, max(0.0, num))


def _direction(v: Any) -> Direction:
    """A direction as reported; anything but a clear passed/failed (missing, empty, garbled) is incomplete."""
    if isinstance(v, str):  # "passed" or "failed: reason"
        head, _, rest = v.partition(":")
        return Direction(result=head, line=_text(rest.strip()))
    if not isinstance(v, dict):
        return Direction(result="incomplete")
    line = v.get("line")
    return Direction(result=v.get("result") if isinstance(v.get("result"), str) else "incomplete",
                     line=line[:MAX_FIELD_CHARS] if isinstance(line, str) else "")


def _first_object(text: str) -> dict[str, Any]:
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError(f"answer of {len(text)} characters")
    body = _FENCE_RE.sub("", text)
    start = body.find("{")
    if start < 0:
        raise ValueError("no JSON object in the answer")
    try:
        obj, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(obj, dict):
        raise ValueError("the answer is not a JSON object")
    return obj


def parse_direction_b(text: str) -> DirectionBDraft:
    """The direction-B answer, leniently: refuted is read only from a JSON boolean or the words true/false
    (anything else leaves it None: incomplete). Raises ValueError when no JSON object can be read."""
    obj = _first_object(text)
    said = obj.get("refuted")
    if isinstance(said, str) and said.strip().lower() in ("true", "false"):
        said = said.strip().lower() == "true"
    quote, says, line = (v if isinstance(v, str) else "" for v in (obj.get("quote"), obj.get("source_says"), obj.get("line")))
    return DirectionBDraft(refuted=said if isinstance(said, bool) else None, quote=quote[:MAX_FIELD_CHARS],
                           source_says=says[:MAX_FIELD_CHARS], line=line[:MAX_FIELD_CHARS])


def parse_answer(text: str) -> DraftVerdict:
    """The first JSON object in `text` as a DraftVerdict, leniently (code fences and prose around it are
    skipped, HIGH/MEDIUM/LOW read as confidences). Raises ValueError with a one-line reason when unusable."""
    obj = _first_object(text)
    line_no = obj.get("line_no")
    try:
        line_no = int(line_no) if line_no is not None and not isinstance(line_no, bool) else None
    except (TypeError, ValueError):
        line_no = None
    return DraftVerdict(
        id=_text(obj.get("id")),
        scope=_text(obj.get("scope")),
        line_no=line_no,
        source_url=_text(obj.get("source_url")),
        verdict=_text(obj.get("verdict")).strip().upper() or "INDETERMINATE",
        claimed=_text(obj.get("claimed")),
        source_says=_text(obj.get("source_says")),
        quote=_text(obj.get("quote")),
        confidence=_confidence(obj.get("confidence", 0)),
        note=_text(obj.get("note")),
        direction_a=_direction(obj.get("direction_a", {})),
        direction_b=_direction(obj.get("direction_b", {})),
        verification_class=_text(obj.get("verification_class")).strip().lower() or "flagged-judgment-call",
    )
