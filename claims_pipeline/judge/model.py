"""Records of the LLM verdict step (pure pydantic v2; no Dagster, no I/O).

`JudgeItem` is what the harness knows of one claim; `DraftVerdict` is what the model said (parsed leniently:
model answers are hostile input); `Verdict` is what ships, after the code checks (judge/answer_checks.py) have
re-checked the draft and recorded every `Downgrade`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

VERDICTS: tuple[str, ...] = (
    "MATCH", "MISMATCH", "STALE", "PARTIAL", "NOT_FOUND", "SOURCE_UNAVAILABLE", "INDETERMINATE",
)
# Verdicts that assert something about the page: they need a verbatim quote of it.
QUOTED_VERDICTS: frozenset[str] = frozenset({"MATCH", "MISMATCH", "STALE", "PARTIAL"})
CLASSES: tuple[str, ...] = (
    "confirmed", "corrected", "flagged-unsupported", "flagged-judgment-call", "flagged-no-source",
)
# The model name every verdict of the demo's scripted judge (claims_pipeline_demo) carries: the reports label
# such verdicts as the stand-in's, and they cost nothing.
SCRIPTED_MODEL = "scripted-demo-judge"
# Priors whose page holds no text a judge could read: such claims never reach a provider.
UNREADABLE_PRIORS: frozenset[str] = frozenset({"SOURCE_UNAVAILABLE", "SOURCE_BINARY", "PDF_NO_TEXT"})

VerdictName = Literal["MATCH", "MISMATCH", "STALE", "PARTIAL", "NOT_FOUND", "SOURCE_UNAVAILABLE", "INDETERMINATE"]
VerificationClass = Literal[
    "confirmed", "corrected", "flagged-unsupported", "flagged-judgment-call", "flagged-no-source",
]


class _Record(BaseModel):
    # Extra keys are ignored, not kept: a model's answer may carry anything.
    model_config = ConfigDict(extra="ignore")


class ItemValue(_Record):
    """One salient figure of a claim (the first of JudgeItem.values is the carrying figure)."""

    type: str
    raw: str
    number: float | None = None


class JudgeItem(_Record):
    id: str
    scope: str
    file: str = ""
    line_no: int
    source_url: str
    claim_text: str
    line_text: str = ""  # the whole corpus line (corrections quote it)
    values: list[ItemValue] = Field(default_factory=list)
    source_tier: str = "primary-gov"
    prior: str = "TOKENS_PRESENT"
    stale_changed: bool = False
    page_text: str = ""
    page_text_hash: str = ""
    last_verified: str | None = None

    @property
    def readable(self) -> bool:
        return self.prior not in UNREADABLE_PRIORS and bool(self.page_text.strip())


DirectionResult = Literal["pass", "fail", "flagged", "incomplete"]
_DIRECTION_WORDS = {"pass": "pass", "passed": "pass", "fail": "fail", "failed": "fail", "flagged": "flagged"}


class Direction(_Record):
    """One direction of the two-way question. pass: the claim survived it; fail: it did not (with the evidence);
    flagged: the page holds competing readings; incomplete: no usable account of it (empty, garbled, not asked)
    is never read as passed. by: who settled it (the model's own answer, code reading the page, or a second,
    independent ask framed to refute)."""

    result: DirectionResult = "incomplete"
    line: str = ""
    by: Literal["model", "code", "ask"] = "model"

    @field_validator("result", mode="before")
    @classmethod
    def _known(cls, v: object) -> str:
        return _DIRECTION_WORDS.get(str(v or "").strip().lower(), "incomplete")


class DirectionBDraft(_Record):
    """The answer to the direction-B ask (prompt.DIRECTION_B_SYSTEM), as parsed; error says why there is none."""

    refuted: bool | None = None  # None: the answer did not say (garbled, empty)
    quote: str = ""
    source_says: str = ""
    line: str = ""
    error: str = ""  # "": an answer came back; else why not (malformed, timeout, not asked: the cost cap)


class DraftVerdict(_Record):
    """The model's answer, as parsed (fields defaulted when missing; answer_checks.verify judges them)."""

    id: str = ""
    scope: str = ""
    line_no: int | None = None
    source_url: str = ""
    verdict: str = "INDETERMINATE"
    claimed: str = ""
    source_says: str = ""
    quote: str = ""
    confidence: float = 0.0
    note: str = ""
    direction_a: Direction = Field(default_factory=Direction)
    direction_b: Direction = Field(default_factory=Direction)
    verification_class: str = "flagged-judgment-call"
    # Spans the provider itself reported as cited from the page (Anthropic citations): (start, end, text).
    cited_spans: list[dict[str, Any]] = Field(default_factory=list)


class Downgrade(_Record):
    check: str
    reason: str
    before: str
    after: str
    # what changed: "verdict" (downgraded), "text" (reworded or withheld), "class" (reclassified), "field"
    # (a harness field the model got wrong, overwritten), "flag" (nothing changed: a text left as written, flagged)
    kind: Literal["verdict", "text", "class", "field", "flag"] = "verdict"


class Verdict(_Record):
    id: str
    scope: str
    file: str = ""
    line_no: int
    source_url: str
    claim_text: str
    source_tier: str
    prior: str
    verdict: VerdictName
    claimed: str = ""
    source_says: str = ""
    quote: str = ""
    confidence: float = 0.0
    note: str = ""
    direction_a: Direction = Field(default_factory=Direction)
    direction_b: Direction = Field(default_factory=Direction)
    verification_class: VerificationClass = "flagged-judgment-call"
    draft: DraftVerdict | None = None  # the debug record: what the model said, never shown when rejected
    draft_b: DirectionBDraft | None = None  # the direction-B ask's answer (debug record), when one was made
    # Verbatim passages of the page chosen by code: the supporting one and the competing one of a judgment call.
    passages: list[str] = Field(default_factory=list)
    # True while a would-be-confirmed MATCH waits for its direction-B ask (the runner asks, then checks again).
    direction_b_pending: bool = False
    downgrades: list[Downgrade] = Field(default_factory=list)
    # Set by answer_checks.verify: the checks that ran on this verdict (the report counts run/failed from them), the
    # claim's carrying figure and the different figure the checked quote carries (corrections use both).
    checks_run: list[str] = Field(default_factory=list)
    figure_claimed: str = ""
    figure_on_page: str = ""
    provider: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False
    page_text_hash: str = ""
    prompt_version: str = ""
    judged_at: str = ""  # ISO 8601 UTC
