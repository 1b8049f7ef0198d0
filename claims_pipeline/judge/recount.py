"""The verdict report's counts, re-derived another way from the stored verdicts (V2/V3 for the verdict step), and
the verdicts themselves recomputed from their drafts (reverify_mismatches).

report.verdict_counts counts in one pass, reading each Downgrade's kind. Here every figure is derived per name
instead (one filter per verdict, class and check), the outcomes from comparing each draft with what shipped,
field by field (not from the downgrade records), and totals are summed from their members. The invariants the
checks guarantee are re-tested too. Any difference is an engine bug, not a model mistake: the blocking asset
check stops the run before the report is read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from claims_pipeline.judge.answer_checks import ALLOWED_CLASSES, CHECKS, unreadable_verdict, verify
from claims_pipeline.judge.figures import quote_core
from claims_pipeline.judge.model import CLASSES, QUOTED_VERDICTS, VERDICTS, JudgeItem, Verdict

_VERDICT_CHANGING = ("MATCH", "MISMATCH", "STALE", "PARTIAL", "NOT_FOUND", "SOURCE_UNAVAILABLE")


def _as_verdicts(verdicts: Iterable[Verdict | Mapping[str, Any]]) -> list[Verdict]:
    return [v if isinstance(v, Verdict) else Verdict.model_validate(v) for v in verdicts]


def _said_verdict(v: Verdict) -> str:
    assert v.draft is not None
    said = " ".join(str(v.draft.verdict).replace("-", " ").split()).upper().replace(" ", "_")
    return "NOT_FOUND" if said == "NOTFOUND" else said


def _said_quote(v: Verdict) -> str:
    assert v.draft is not None
    quote = v.draft.quote
    if not quote.strip():
        quote = next((str(s.get("text", "")) for s in v.draft.cited_spans if isinstance(s, dict) and s.get("text")), "")
    return quote_core(quote)


def _outcome(v: Verdict) -> str:
    """The outcome from the record itself: the draft's fields against the shipped ones."""
    if v.draft is None:
        return "set_by_code"
    if _said_verdict(v) != v.verdict:
        return "downgraded"
    d = v.draft
    # a direction settled by code or by the second ask is not the answer's text: only the answer's own are compared
    own = [(mine.result, mine.line) != (said.result, said.line)
           for mine, said in ((v.direction_a, d.direction_a), (v.direction_b, d.direction_b)) if mine.by == "model"]
    if (v.note, v.source_says, v.claimed) != (d.note, d.source_says, d.claimed) or any(own) or v.quote != _said_quote(v):
        return "reworded"
    if v.verification_class != d.verification_class.strip().lower():
        return "reclassified"
    return "as_said"


def recount(verdicts: Iterable[Verdict | Mapping[str, Any]]) -> dict[str, Any]:
    vs = _as_verdicts(verdicts)
    by_verdict = {name: len([v for v in vs if v.verdict == name]) for name in VERDICTS}
    by_class = {name: len([v for v in vs if v.verification_class == name]) for name in CLASSES}
    names = list(CHECKS) + sorted({c for v in vs for c in v.checks_run} - set(CHECKS))
    checks = {
        name: {"run": len([v for v in vs if name in v.checks_run]),
               "failed": len([v for v in vs if any(d.check == name for d in v.downgrades)])}
        for name in names
    }
    outcomes: dict[str, int] = {}
    for v in vs:
        key = _outcome(v)
        outcomes[key] = outcomes.get(key, 0) + 1
    return {
        "total": sum(by_verdict.values()),
        "by_verdict": by_verdict,
        "by_class": by_class,
        "checks": checks,
        "outcomes": outcomes,
        "input_tokens": sum(v.input_tokens for v in vs),
        "output_tokens": sum(v.output_tokens for v in vs),
        "cost_usd": math.fsum(v.cost_usd for v in vs),
        "cached": len([v for v in vs if v.cached]),
    }


def _invariants(vs: list[Verdict]) -> list[str]:
    """What the checks guarantee of every shipped verdict, tested on the record."""
    out = []
    ids = [v.id for v in vs]
    dupes = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dupes:
        out.append(f"verdicts repeated for ids {dupes[:5]}")
    for v in vs:
        where = f"{v.id}"
        failed = {d.check for d in v.downgrades}
        if failed - set(v.checks_run):
            out.append(f"{where}: checks failed but not recorded as run: {sorted(failed - set(v.checks_run))}")
        if v.verification_class not in ALLOWED_CLASSES[v.verdict]:
            out.append(f"{where}: class {v.verification_class} contradicts the verdict {v.verdict}")
        if v.verdict in QUOTED_VERDICTS:
            if not v.quote.strip():
                out.append(f"{where}: {v.verdict} shipped without a quote")
            for check in ("quote_verbatim", "figure_in_quote"):
                if check not in v.checks_run:
                    out.append(f"{where}: {v.verdict} shipped without the {check} check")
                if check in failed:
                    out.append(f"{where}: {v.verdict} shipped although {check} failed")
        if v.verdict == "MATCH" and (v.direction_b.result != "pass" or v.direction_a.result != "pass"):
            out.append(f"{where}: MATCH shipped without both directions passed")
        if v.verdict in QUOTED_VERDICTS and v.draft is not None and _said_verdict(v) != v.verdict and v.verdict != "PARTIAL":
            out.append(f"{where}: {v.verdict} shipped although code lowered the answer")
        if v.verdict in ("MISMATCH", "STALE") and not v.figure_on_page:
            out.append(f"{where}: {v.verdict} shipped without the page's figure")
        if v.verdict == "SOURCE_UNAVAILABLE" and v.draft is not None and _said_verdict(v) == "SOURCE_UNAVAILABLE" \
                and "unavailable_by_code" not in v.checks_run:
            out.append(f"{where}: a model's SOURCE_UNAVAILABLE shipped unchecked")
        if v.draft is not None and v.verdict in _VERDICT_CHANGING and _said_verdict(v) != v.verdict:
            # code only ever lowers a verdict: to PARTIAL (secondary tier), INDETERMINATE, or SOURCE_UNAVAILABLE (unreadable page)
            if not (v.verdict == "PARTIAL" and _said_verdict(v) == "MATCH") and v.verdict != "SOURCE_UNAVAILABLE":
                out.append(f"{where}: code changed {_said_verdict(v)} into {v.verdict}")
    return out


def recount_mismatches(verdicts: Iterable[Verdict | Mapping[str, Any]], report_counts: Mapping[str, Any]) -> list[str]:
    """Every difference between the report's stored counts and a recount from the verdicts, and every broken
    invariant (empty: consistent). verdicts: Verdict records or their JSON dicts (verdicts.json's "verdicts")."""
    vs = _as_verdicts(verdicts)
    mine = recount(vs)
    out: list[str] = []
    if mine["total"] != len(vs):
        out.append(f"by_verdict sums to {mine['total']}, {len(vs)} verdicts stored")
    for key in ("total", "input_tokens", "output_tokens", "cached"):
        if report_counts.get(key) != mine[key]:
            out.append(f"{key}: report {report_counts.get(key)!r}, recount {mine[key]!r}")
    if not math.isclose(float(report_counts.get("cost_usd", -1)), mine["cost_usd"], rel_tol=1e-6, abs_tol=1e-6):
        out.append(f"cost_usd: report {report_counts.get('cost_usd')!r}, recount {mine['cost_usd']!r}")
    for group in ("by_verdict", "by_class"):
        theirs = report_counts.get(group, {})
        for name, n in mine[group].items():
            if theirs.get(name, 0) != n:
                out.append(f"{group}.{name}: report {theirs.get(name, 0)}, recount {n}")
        for name in set(theirs) - set(mine[group]):
            out.append(f"{group}.{name}: report {theirs[name]}, not a known name")
    theirs_checks = report_counts.get("checks", {})
    for name in sorted(set(mine["checks"]) | set(theirs_checks)):
        a = theirs_checks.get(name, {"run": 0, "failed": 0})
        b = mine["checks"].get(name, {"run": 0, "failed": 0})
        if (a.get("run"), a.get("failed")) != (b["run"], b["failed"]):
            out.append(f"checks.{name}: report {a.get('run')} run / {a.get('failed')} failed, recount {b['run']} / {b['failed']}")
    theirs_out = report_counts.get("outcomes", {})
    for name in sorted(set(mine["outcomes"]) | set(theirs_out)):
        if theirs_out.get(name, 0) != mine["outcomes"].get(name, 0):
            out.append(f"outcomes.{name}: report {theirs_out.get(name, 0)}, recount {mine['outcomes'].get(name, 0)}")
    if sum(theirs_out.values()) != len(vs):
        out.append(f"outcomes sum to {sum(theirs_out.values())}, {len(vs)} verdicts stored")
    return out + _invariants(vs)


def reverify_mismatches(verdicts: Iterable[Verdict | Mapping[str, Any]], items: Iterable[JudgeItem]) -> list[str]:
    """V2 for the verdict step: re-run answer_checks.verify on each stored draft against its item (the page text it was
    judged on) and name every verdict whose stored outcome differs (empty: all recompute). A verdict whose item is
    missing, or whose page changed since (another text hash), is named too."""
    by_id = {i.id: i for i in items}
    out: list[str] = []
    for v in _as_verdicts(verdicts):
        item = by_id.get(v.id)
        if item is None:
            out.append(f"{v.id}: no item to recompute it from")
            continue
        if item.page_text_hash != v.page_text_hash:
            out.append(f"{v.id}: judged on page {v.page_text_hash or '(none)'}, the item has {item.page_text_hash or '(none)'}")
            continue
        if v.draft is None:
            again = unreadable_verdict(item) if not item.readable else None
            if again is not None and again.verdict != v.verdict:
                out.append(f"{v.id}: stored {v.verdict}, recomputed {again.verdict}")
            elif again is None and v.verdict != "INDETERMINATE":
                out.append(f"{v.id}: no answer, yet stored {v.verdict}")
            continue
        again = verify(v.draft, item, direction_b=v.draft_b)
        stored = (v.verdict, v.quote, v.figure_on_page, v.verification_class, v.checks_run,
                  [(d.check, d.kind, d.before, d.after) for d in v.downgrades])
        fresh = (again.verdict, again.quote, again.figure_on_page, again.verification_class, again.checks_run,
                 [(d.check, d.kind, d.before, d.after) for d in again.downgrades])
        if stored != fresh:
            field = ("verdict", "quote", "figure_on_page", "verification_class", "checks_run", "downgrades")
            diff = [f for f, a, b in zip(field, stored, fresh) if a != b]
            out.append(f"{v.id}: stored {v.verdict}, recomputed {again.verdict} (differs in {', '.join(diff)})")
    return out
