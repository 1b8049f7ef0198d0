"""What one verdict run did, typed: per scope (stored with its verdicts, steps/verdicts.py) and over the scopes of
a run (`VerdictRun.merged`, the `run` object of verdicts.json). The asset metadata and `claims-pipeline verify`
read its fields; nothing reads it back by key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claims_pipeline.judge.runner import JudgeRun

# the counts a merge adds up over the scopes (all ints)
_SUMMED = ("requests_sent", "input_tokens", "output_tokens", "cached", "b_requests_sent", "b_cached", "b_unasked",
           "unreadable", "failed", "skipped")
# present in a scope's run only: a merged run leaves them None and its JSON form omits them
_PER_SCOPE = ("attempts", "verdicts", "skipped_ids", "wall_s")


@dataclass(frozen=True)
class VerdictRun:
    """One run of the judge: who answered, what it cost, why it stopped; or, `judged` False, why nothing was
    judged (`reason`). `scopes` is set on a merged run (how many scopes it covers), None on a scope's own."""

    judged: bool = True
    reason: str = ""
    provider: str = ""
    model: str = ""
    prompt_version: str = ""
    run_at: str = ""
    scripted: bool = False  # the demo's scripted judge answered, not a model
    requests_sent: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: int = 0
    b_requests_sent: int = 0  # direction-B asks sent
    b_cached: int = 0
    b_unasked: int = 0  # direction-B asks the cost cap left unasked
    unreadable: int = 0
    failed: int = 0
    skipped: int = 0  # claims not judged because a cap stopped the run
    cost_usd: float = 0.0
    price_known: bool = True
    stopped_by: tuple[str, ...] = ()  # "max_claims" | "max_cost" | "provider_auth"; a merged run: each, sorted
    scopes: int | None = None
    attempts: int | None = 0
    verdicts: int | None = 0
    skipped_ids: tuple[str, ...] | None = ()
    wall_s: float | None = 0.0

    @classmethod
    def of(cls, run: JudgeRun, *, prompt_version: str, run_at: str, scripted: bool) -> VerdictRun:
        """A scope's run from the judge's own account of it."""
        return cls(
            provider=run.provider, model=run.model, prompt_version=prompt_version, run_at=run_at, scripted=scripted,
            requests_sent=run.requests_sent, input_tokens=run.input_tokens, output_tokens=run.output_tokens,
            cached=run.cached, b_requests_sent=run.b_requests_sent, b_cached=run.b_cached, b_unasked=run.b_unasked,
            unreadable=run.unreadable, failed=run.failed, skipped=len(run.skipped), cost_usd=float(run.cost_usd),
            price_known=run.price_known, stopped_by=(run.stopped_by,) if run.stopped_by else (),
            attempts=run.attempts, verdicts=len(run.verdicts), skipped_ids=tuple(run.skipped), wall_s=run.wall_s)

    @classmethod
    def not_judged(cls, reason: str, run_at: str = "") -> VerdictRun:
        return cls(judged=False, reason=reason, run_at=run_at)

    @classmethod
    def merged(cls, runs: Sequence[VerdictRun]) -> VerdictRun:
        """One run over the scopes' runs: counts, tokens and cost added up, the who and when of the last judged
        scope; not judged when no scope was (with the first reason given)."""
        judged = [r for r in runs if r.judged]
        if not judged:
            return cls.not_judged(next((r.reason for r in runs if r.reason), "no scope has verdicts yet"))
        last = judged[-1]
        sums = {k: sum(getattr(r, k) for r in judged) for k in _SUMMED}
        return cls(provider=last.provider, model=last.model, prompt_version=last.prompt_version, run_at=last.run_at,
                   scripted=last.scripted, **sums, cost_usd=round(float(sum(r.cost_usd for r in judged)), 6),
                   price_known=all(r.price_known for r in judged),
                   stopped_by=tuple(sorted({s for r in judged for s in r.stopped_by})), scopes=len(runs),
                   attempts=None, verdicts=None, skipped_ids=None, wall_s=None)

    def to_json(self) -> dict[str, Any]:
        """The JSON form; a merged run's keys and their order are those verdicts.json has always had."""
        if not self.judged:
            return {"judged": False, "reason": self.reason, **({"run_at": self.run_at} if self.run_at else {})}
        out: dict[str, Any] = {k: getattr(self, k) for k in ("provider", "model", "prompt_version", "run_at",
                                                              "scripted", *_SUMMED, "cost_usd", "price_known")}
        out["stopped_by"] = list(self.stopped_by) or None
        if self.scopes is not None:
            out["scopes"] = self.scopes
        for k in _PER_SCOPE:
            value = getattr(self, k)
            if value is not None:
                out[k] = list(value) if k == "skipped_ids" else value
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> VerdictRun:
        """The JSON form back; also a run stored before this type (JudgeRun.summary() plus a few keys, with
        stopped_by a string and keys a merge did not know), whose unknown keys are dropped."""
        if not d.get("judged", True):
            return cls.not_judged(str(d.get("reason") or ""), str(d.get("run_at") or ""))
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known and k not in ("judged", "reason")}
        stopped = d.get("stopped_by")
        values["stopped_by"] = tuple([stopped] if isinstance(stopped, str) else (stopped or ()))
        if "skipped_ids" in values:
            values["skipped_ids"] = tuple(values["skipped_ids"])
        for k in (*_SUMMED, "cost_usd"):  # an old record may hold null for a count
            values[k] = values.get(k) or 0
        values["cost_usd"] = float(values["cost_usd"])
        if "scopes" in d:  # a merged run (verdicts.json) has no per-scope details
            values.update({k: values.get(k) for k in _PER_SCOPE})
        return cls(**values)
