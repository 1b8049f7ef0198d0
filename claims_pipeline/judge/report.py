"""What the verdict step ships: verdicts.md, verdicts.html and verdicts.json, and a section in the audit's report.html.

Every text from a model or a page is hostile: markdown cells go through escape.md_cell / md_link, HTML is rendered
from templates/ in report.html_templates' environment (autoescaped, control and bidi characters neutralised), JSON
through text_safety.json_escaped. Each report carries the verification section: per
check, run and failed counts ("checks: quote_verbatim 19/19, figure_in_quote 16/18 (2 failed) … · 15 shipped as
said, 2 downgraded, 1 reworded"), and the draft → verified list: what the judge said, what shipped, and why.

The counts (`verdict_counts`) are stored in verdicts.json; recount.recount_mismatches re-derives them another
way before anyone reads the report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, TypedDict

from claims_pipeline.common.text_safety import json_escaped
from claims_pipeline.judge.answer_checks import CHECK_ASKS, CHECKS
from claims_pipeline.judge.corrections import Correction
from claims_pipeline.judge.model import CLASSES, SCRIPTED_MODEL, VERDICTS, Verdict
from claims_pipeline.report.escape import claim_plain, md_cell, md_code, md_link
from claims_pipeline.report.html_templates import render
from claims_pipeline.report.sections import utc_time
from claims_pipeline.store.files import write_text_atomically

OUTCOMES: tuple[str, ...] = ("as_said", "downgraded", "reworded", "reclassified", "set_by_code")
OUTCOME_WORDS = {"as_said": "shipped as said", "downgraded": "downgraded", "reworded": "reworded",
                 "reclassified": "reclassified", "set_by_code": "set by code"}
# The reference triage order (docs/decisions/0001): what a person must act on first.
ORDER = ("MISMATCH", "STALE", "NOT_FOUND", "INDETERMINATE", "PARTIAL", "SOURCE_UNAVAILABLE", "MATCH")
COLOURS = {"MATCH": "#2e7d32", "MISMATCH": "#c62828", "STALE": "#ad1457", "PARTIAL": "#ef6c00",
           "NOT_FOUND": "#6a1b9a", "SOURCE_UNAVAILABLE": "#546e7a", "INDETERMINATE": "#455a64"}
TITLE = "Claim verdicts (LLM judge, re-checked by code)"
MEANING = ("A MATCH means the cited page says this, not that it is true of the world. Every answer was re-checked by "
           "code before it shipped; nothing in the corpus was changed (corrections are suggestions, in "
           "corrections.patch).")
SCRIPTED_LABEL = ("Scripted demo judge: these verdicts come from a scripted stand-in that reads the page's figures "
                  "with the project's own number and date readers, not from a language model.")
SECTION_ID = "claim-verdicts"
JUDGE_PACKAGE = "claims_pipeline.judge"  # whose templates/ hold verdict_section.html.j2 and verdicts.html.j2
_START, _END = f"<!-- {SECTION_ID}:start -->", f"<!-- {SECTION_ID}:end -->"


def outcome(v: Verdict) -> str:
    """What code did to the judge's answer: set_by_code (no answer), downgraded, reworded, reclassified, as_said."""
    if v.draft is None:
        return "set_by_code"
    kinds = {d.kind for d in v.downgrades}
    for kind, name in (("verdict", "downgraded"), ("text", "reworded"), ("class", "reclassified")):
        if kind in kinds:
            return name
    return "as_said"


class VerdictCounts(TypedDict):
    """The report's counts (verdicts.json's `counts`): each name, verification class, check and outcome."""

    total: int
    by_verdict: dict[str, int]
    by_class: dict[str, int]
    checks: dict[str, dict[str, int]]  # check → {"run": n, "failed": n}
    outcomes: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cached: int


def verdict_counts(verdicts: Sequence[Verdict]) -> VerdictCounts:
    """The report's counts, in one pass over the verdicts (recount.py derives them another way)."""
    checks: dict[str, dict[str, int]] = {c: {"run": 0, "failed": 0} for c in CHECKS}
    by_verdict = dict.fromkeys(VERDICTS, 0)
    by_class = dict.fromkeys(CLASSES, 0)
    outcomes = dict.fromkeys(OUTCOMES, 0)
    tokens_in = tokens_out = cached = 0
    cost = 0.0
    for v in verdicts:
        by_verdict[v.verdict] += 1
        by_class[v.verification_class] += 1
        outcomes[outcome(v)] += 1
        for c in v.checks_run:
            checks.setdefault(c, {"run": 0, "failed": 0})["run"] += 1
        for c in {d.check for d in v.downgrades}:
            checks.setdefault(c, {"run": 0, "failed": 0})["failed"] += 1
        tokens_in += v.input_tokens
        tokens_out += v.output_tokens
        cost += v.cost_usd
        cached += v.cached
    return {"total": len(verdicts), "by_verdict": by_verdict, "by_class": by_class, "checks": checks,
            "outcomes": outcomes, "input_tokens": tokens_in, "output_tokens": tokens_out,
            "cost_usd": round(cost, 6), "cached": cached}


def verification_line(counts: Mapping[str, Any]) -> str:
    """"checks: quote_verbatim 19/19, figure_in_quote 16/18 (2 failed) … · 15 shipped as said, 2 downgraded"."""
    parts = []
    for name, c in counts["checks"].items():
        if not c["run"] and not c["failed"]:
            continue
        bit = f"{name} {c['run'] - c['failed']}/{c['run']}"
        parts.append(bit + (f" ({c['failed']} failed)" if c["failed"] else ""))
    oc = counts["outcomes"]
    tail = [f"{oc['as_said']} {OUTCOME_WORDS['as_said']}"] + [
        f"{oc[k]} {OUTCOME_WORDS[k]}" for k in OUTCOMES[1:] if oc[k]]
    return "checks: " + (", ".join(parts) or "none ran") + " · " + ", ".join(tail)


def _sorted(verdicts: Sequence[Verdict]) -> list[Verdict]:
    rank = {v: i for i, v in enumerate(ORDER)}
    return sorted(verdicts, key=lambda v: (rank.get(v.verdict, 99), v.scope, v.file, v.line_no, v.source_url))


_BY = {"model": "the answer", "code": "code", "ask": "second ask"}


def _directions(v: Verdict) -> str:
    """"A pass (the answer) · B flagged (code): …": each direction's result, who settled it, and a failure's line."""
    if v.draft is None:
        return ""
    out = []
    for name, d in (("A", v.direction_a), ("B", v.direction_b)):
        bit = f"{name} {d.result} ({_BY.get(d.by, d.by)})"
        if d.result in ("fail", "flagged", "incomplete") and d.line.strip():
            bit += f": {d.line}"
        out.append(bit)
    return " · ".join(out)


def _said(v: Verdict) -> str:
    """What the judge said, as a verdict name only (an unknown name is a model's text: not shown)."""
    if v.draft is None:
        return "(no answer)"
    said = " ".join(str(v.draft.verdict).replace("-", " ").split()).upper().replace(" ", "_")
    return said if said in VERDICTS else "(unknown)"


# The verdicts that agree with each prior (the priors are a substring search: a tripwire, the verdict the reading).
AGREES: dict[str, frozenset[str]] = {
    "TOKENS_PRESENT": frozenset({"MATCH", "PARTIAL"}),
    "WEAK_MATCH": frozenset({"MATCH", "PARTIAL", "INDETERMINATE", "NOT_FOUND", "MISMATCH", "STALE"}),
    "TOKENS_ABSENT": frozenset({"MISMATCH", "STALE", "NOT_FOUND"}),
    "SOURCE_UNAVAILABLE": frozenset({"SOURCE_UNAVAILABLE"}),
    "SOURCE_BINARY": frozenset({"SOURCE_UNAVAILABLE"}),
    "PDF_NO_TEXT": frozenset({"SOURCE_UNAVAILABLE"}),
}


def prior_agreement(v: Verdict) -> tuple[bool, str]:
    """Does the verdict agree with the claim's prior? When not, why (the check that decided, in the project's
    words, or the judge's own reading when it was accepted as said)."""
    if v.verdict in AGREES.get(v.prior, frozenset()):
        return True, "agrees"
    decided = [d for d in v.downgrades if d.kind == "verdict"]
    if decided:
        return False, f"{decided[-1].check}: {decided[-1].reason}"
    if v.draft is None:
        return False, v.note
    return False, (f"the judge read the page as {v.verdict} where the substring search found {v.prior}; "
                   "its quote and note are the evidence")


def _prior_cell(v: Verdict) -> str:
    agrees, why = prior_agreement(v)
    return f"{v.prior}: agrees" if agrees else f"{v.prior}: differs ({why})"


def _evidence(v: Verdict) -> str:
    """The quote, or a judgment call's passages (both the page's, chosen by code)."""
    if v.passages:
        return " ‖ ".join(f"page: «{p}»" for p in v.passages)
    return v.quote


def _run_facts(run_info: Mapping[str, Any], counts: Mapping[str, Any], scripted: bool = False) -> list[tuple[str, str]]:
    cost = run_info.get("cost_usd", counts["cost_usd"])
    # the scripted demo judge is named as such, and costs nothing (no price to know)
    facts = [
        ("judge", "scripted demo judge (the project's figure readers, not a model)") if scripted else
        ("provider", str(run_info.get("provider") or "(none)")),
        ("model", str(run_info.get("model") or "(none)")),
        ("prompt", str(run_info.get("prompt_version") or "")),
        ("claims judged", str(counts["total"])),
        ("tokens in / out", f"{run_info.get('input_tokens', counts['input_tokens'])} / "
                            f"{run_info.get('output_tokens', counts['output_tokens'])}"),
        ("cost", "$0" if scripted else f"${float(cost):.4f}" + (
            "" if run_info.get("price_known", True) else " (price unknown for this model)")),
        ("cached answers", str(run_info.get("cached", counts["cached"]))),
        ("direction-B asks (second requests, framed to refute)",
         f"{int(run_info.get('b_requests_sent') or 0)} sent, {int(run_info.get('b_cached') or 0)} from the cache"
         + (f", {int(run_info['b_unasked'])} left unasked by the cost cap" if run_info.get("b_unasked") else "")),
    ]
    if run_info.get("stopped_by"):
        facts.append(("stopped by", f"{run_info['stopped_by']} ({run_info.get('skipped', 0)} claims not judged)"))
    if run_info.get("failed"):
        facts.append(("no usable answer", str(run_info["failed"])))
    return [(k, val) for k, val in facts if val]


def _is_scripted(run_info: Mapping[str, Any], verdicts: Sequence[Verdict] = ()) -> bool:
    """run_info says so, or the verdicts carry the scripted demo judge's model name (labelled even if not said)."""
    return bool(run_info.get("scripted")) or run_info.get("model") == SCRIPTED_MODEL or any(
        v.model == SCRIPTED_MODEL for v in verdicts)


# ---- markdown ------------------------------------------------------------------------------------------------

def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return ["_(none)_"]
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def _md_where(v: Verdict) -> str:
    return md_code(f"{v.file}:{v.line_no}") if v.file else md_code(f"{v.scope}:{v.line_no}")


def render_markdown(verdicts: Sequence[Verdict], run_info: Mapping[str, Any], counts: Mapping[str, Any],
                    corrections: Sequence[Correction] = ()) -> str:
    lines = [f"# {TITLE}", ""]
    if _is_scripted(run_info, verdicts):
        lines += [f"> **{SCRIPTED_LABEL}**", ""]
    lines += [f"Run: {md_cell(utc_time(run_info.get('run_at')))}  ·  " + "  ·  ".join(
        f"{k}: {md_cell(v)}" for k, v in _run_facts(run_info, counts, _is_scripted(run_info, verdicts))), "",
        f"> {MEANING}", ""]
    lines += ["## Verdicts", ""]
    lines += _md_table(["verdict", "claims"], [[k, str(n)] for k, n in counts["by_verdict"].items() if n])
    lines += ["", "## Verification", "", f"`{verification_line(counts)}`", ""]  # check names and numbers only
    lines += _md_table(["check", "asks", "run", "passed", "failed"], [
        [name, md_cell(CHECK_ASKS.get(name, "")), str(c["run"]), str(c["run"] - c["failed"]), str(c["failed"])]
        for name, c in counts["checks"].items()])
    lines += ["", "### Draft → verified", "", "What the judge said, what shipped, and why (one row per change).", ""]
    rows = []
    for v in _sorted(verdicts):
        said = _said(v)
        for d in v.downgrades:
            rows.append([_md_where(v), md_cell(said, 40), v.verdict, d.check, md_cell(d.reason, 240),
                         md_cell(d.before, 80), md_cell(d.after, 80)])
    lines += _md_table(["where", "judge said", "shipped", "check", "why", "before", "after"], rows)
    lines += ["", "## Claims (MISMATCH, STALE and NOT_FOUND first)", ""]
    lines += _md_table(["verdict", "class", "where", "claim", "source says", "quote", "directions", "note", "prior", "url"], [
        [v.verdict, v.verification_class, _md_where(v), md_cell(claim_plain(v.claim_text), 140), md_cell(v.source_says, 160),
         md_cell(_evidence(v), 400), md_cell(_directions(v), 240), md_cell(v.note, 200), md_cell(_prior_cell(v), 240),
         md_link(v.source_url)]
        for v in _sorted(verdicts)])
    lines += ["", "## Suggested corrections (never applied: corrections.patch)", ""]
    lines += _md_table(["where", "verdict", "before", "after", "the page says", "url"], [
        [md_code(f"{c.file}:{c.line_no}"), c.verdict, md_cell(c.figure_before, 40), md_cell(c.figure_after, 40),
         md_cell(c.quote, 200), md_link(c.source_url)] for c in corrections])
    return "\n".join(lines) + "\n"


# ---- HTML ----------------------------------------------------------------------------------------------------

def section_html(verdicts: Sequence[Verdict], run_info: Mapping[str, Any], counts: Mapping[str, Any], *,
                 heading: str = "h2", corrections: Sequence[Correction] = ()) -> str:
    """The verdict section (one <section>, every tag closed): used alone in verdicts.html and inside report.html."""
    return render("verdict_section.html.j2", JUDGE_PACKAGE,
                  **_section_context(verdicts, run_info, counts, heading=heading, corrections=corrections))


def _section_context(verdicts: Sequence[Verdict], run_info: Mapping[str, Any], counts: Mapping[str, Any], *,
                     heading: str, corrections: Sequence[Correction]) -> dict[str, Any]:
    scripted = _is_scripted(run_info, verdicts)
    ordered = _sorted(verdicts)
    return {
        "section_id": SECTION_ID, "title": TITLE, "heading": heading, "sub": {"h1": "h2", "h2": "h3"}.get(heading, "h4"),
        "scripted": scripted, "scripted_label": SCRIPTED_LABEL, "meaning": MEANING, "colours": COLOURS,
        "run_at": run_info.get("run_at"), "facts": _run_facts(run_info, counts, scripted),
        "by_verdict": list(counts["by_verdict"].items()), "verification": verification_line(counts),
        "checks": list(counts["checks"].items()), "check_asks": CHECK_ASKS,
        "changes": [(v, _said(v), d) for v in ordered for d in v.downgrades],
        "claims": [(v, _directions(v), _prior_cell(v)) for v in ordered],
        "corrections": list(corrections),
    }


def render_html(verdicts: Sequence[Verdict], run_info: Mapping[str, Any], counts: Mapping[str, Any],
                corrections: Sequence[Correction] = ()) -> str:
    return render("verdicts.html.j2", JUDGE_PACKAGE,
                  **_section_context(verdicts, run_info, counts, heading="h1", corrections=corrections))


# ---- files ---------------------------------------------------------------------------------------------------

def _json_safe(run_info: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(dict(run_info), default=str))


def write_verdict_report(verdicts: Sequence[Verdict], run_info: Mapping[str, Any], out_dir: Path, *,
                         corrections: Sequence[Correction] = ()) -> dict[str, Path]:
    """verdicts.md, verdicts.html and verdicts.json in out_dir; returns name → path. run_info: the run's
    provider, model, prompt_version, run_at, tokens, cost_usd, price_known, cached, stopped_by, skipped, failed
    (JudgeRun.summary() plus run_at and prompt_version) and scripted=True for the scripted demo judge.
    corrections: corrections.write_corrections(...).corrections, listed before → after (call it first)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    verdicts = list(verdicts)
    counts = verdict_counts(verdicts)
    paths = {name: out_dir / name for name in ("verdicts.md", "verdicts.html", "verdicts.json")}
    doc = {
        "version": 1,
        "run": _json_safe(run_info),
        "scripted_demo_judge": _is_scripted(run_info, verdicts),
        "counts": counts,
        "verification": verification_line(counts),
        "verdicts": [v.model_dump(mode="json") for v in verdicts],
        "corrections": [asdict(c) for c in corrections],
    }
    write_text_atomically(paths["verdicts.json"], json_escaped(json.dumps(doc, indent=2, ensure_ascii=False)))
    write_text_atomically(paths["verdicts.md"], render_markdown(verdicts, run_info, counts, corrections))
    write_text_atomically(paths["verdicts.html"], render_html(verdicts, run_info, counts, corrections))
    return paths


def load_verdicts(path: Path) -> tuple[list[Verdict], dict[str, Any]]:
    """The verdicts and the stored counts of a verdicts.json (what the blocking check recounts)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    return [Verdict.model_validate(v) for v in doc["verdicts"]], doc["counts"]


def no_judge_report(out_dir: Path, reason: str, run_info: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """provider none: verdicts.md / verdicts.json saying no judge ran and why (the fix to configure one)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    info = dict(run_info or {})
    md = out_dir / "verdicts.md"
    js = out_dir / "verdicts.json"
    write_text_atomically(md, f"# {TITLE}\n\n**No judge ran.** {md_cell(reason)}\n\nThe audit's priors (report.md) "
                              "are the only findings of this run: tripwires, not verdicts.\n")
    counts = verdict_counts([])
    doc = {"version": 1, "run": _json_safe(info), "judged": False, "reason": reason, "counts": counts,
           "verification": verification_line(counts), "verdicts": []}
    write_text_atomically(js, json_escaped(json.dumps(doc, indent=2, ensure_ascii=False)))
    return {"verdicts.md": md, "verdicts.json": js}


# ---- the audit's report.html ---------------------------------------------------------------------------------

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})


class _Events(HTMLParser):
    """Start and end tags with their attributes, in order; `problems` lists what does not balance."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple[str, str, tuple[tuple[str, str | None], ...]]] = []
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.events.append(("start", tag, tuple(attrs)))
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.events.append(("start", tag, tuple(attrs)))
        self.events.append(("end", tag, ()))

    def handle_endtag(self, tag: str) -> None:
        self.events.append(("end", tag, ()))
        if tag in _VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            if tag in self.stack:
                del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]
            return
        self.stack.pop()


def _events(doc: str) -> _Events:
    p = _Events()
    p.feed(doc)
    p.close()
    if p.stack:
        p.problems.append("unclosed: " + ", ".join(p.stack))
    return p


def _without_section(doc: str) -> str:
    """report.html without a verdict section an earlier run appended (so a re-run replaces, not repeats, it)."""
    start = doc.find(_START)
    end = doc.find(_END, start)
    if start < 0 or end < 0:
        return doc
    return doc[:start] + doc[end + len(_END):].lstrip("\n")


def validate_appended(original: str, updated: str, section: str) -> list[str]:
    """Why `updated` is not `original` with exactly `section` added (empty: it is). Tags must balance, and the
    original's elements and attributes must come back unchanged and in order once the section is taken out."""
    problems = []
    before, after = _events(original), _events(updated)
    sec = _events(section)
    problems += [f"section: {p}" for p in sec.problems]
    problems += [f"updated: {p}" for p in after.problems if p not in before.problems]
    n = len(sec.events)
    starts = [i for i in range(len(after.events) - n + 1) if after.events[i:i + n] == sec.events]
    if not starts:
        problems.append("the section's elements are not in the updated document")
    elif after.events[:starts[-1]] + after.events[starts[-1] + n:] != before.events:
        problems.append("the document's existing elements or attributes changed")
    return problems


def append_verdict_section(report_html_path: Path, verdicts: Sequence[Verdict], run_info: Mapping[str, Any], *,
                           corrections: Sequence[Correction] = ()) -> bool:
    """Add the verdict section to the audit's report.html, before </main> (or </body>); a section from an earlier
    run is replaced. The result is validated; when validation fails the original bytes are restored and False
    is returned."""
    path = Path(report_html_path)
    original_bytes = path.read_bytes()
    original = original_bytes.decode("utf-8")
    base = _without_section(original)
    counts = verdict_counts(list(verdicts))
    section = section_html(list(verdicts), run_info, counts, corrections=corrections)
    block = f"{_START}\n{section}\n{_END}\n"
    at = base.rfind("</main>")
    if at < 0:
        at = base.rfind("</body>")
    if at < 0:
        at = len(base)
    updated = base[:at] + block + base[at:]
    write_text_atomically(path, updated)
    problems = validate_appended(base, path.read_text(encoding="utf-8"), section)
    if problems:
        path.write_bytes(original_bytes)
        return False
    return True
