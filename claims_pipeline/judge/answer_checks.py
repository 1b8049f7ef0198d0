"""Code re-checks every model answer before it ships (the verdict step's V1-V8).

A model's draft is a junior colleague's draft: fluent, and possibly wrong, fabricated, or steered by the page
it read. `verify(draft, item)` runs the checks of `CHECKS` in order; a failed check downgrades the verdict (or
rewords / withholds a text, or overwrites a field) and records a `Downgrade` naming the check and the reason, in
the project's words: no Downgrade ever carries the model's text. `Verdict.checks_run` lists the checks that ran.
What each check asks, in order, is specified in docs/verification.md ("Each check, by name"); `CHECK_ASKS` holds
the one-line question each asks, as the report prints it.
"""

from __future__ import annotations

import math
import re
from typing import Literal, cast

from claims_pipeline.judge.addressed import _INSTRUCTION_RE, addressed_spans
from claims_pipeline.judge.evidence import (
    PLACED_BY,
    best_subject,
    claim_figure_spans,
    claim_subject_words,
    competing,
    language_counts,
    language_of,
    languages_of,
    other_figure_spans,
    passage_around,
    subject_of,
    subject_segments,
)
from claims_pipeline.judge.figures import (
    free_numerals,
    normalized,
    normalized_page,
    quote_core,
)
from claims_pipeline.judge.model import (
    CLASSES,
    QUOTED_VERDICTS,
    UNREADABLE_PRIORS,
    VERDICTS,
    Direction,
    DirectionBDraft,
    Downgrade,
    DraftVerdict,
    JudgeItem,
    Verdict,
    VerdictName,
    VerificationClass,
)

CHECKS: tuple[str, ...] = (
    "answer_parsed",
    "identity",
    "verdict_known",
    "unavailable_by_code",
    "quote_verbatim",
    "quote_not_instruction",
    "figure_in_quote",
    "same_thing",
    "page_consistent",
    "no_free_numerals",
    "source_tier",
    "both_directions",
    "direction_b",
    "causal_wording",
    "class_consistent",
)
# What each check asks (the report's verification table).
CHECK_ASKS: dict[str, str] = {
    "answer_parsed": "did a usable answer come back? (malformed twice: INDETERMINATE)",
    "identity": "are id, scope, line and URL the harness's? (the model's are overwritten)",
    "verdict_known": "is the verdict one of the seven names?",
    "unavailable_by_code": "SOURCE_UNAVAILABLE is set by code only, for pages with no readable text",
    "quote_verbatim": "is the quote one span found verbatim in the page text the judge was given?",
    "quote_not_instruction": "is the quote evidence, not page text addressed to a reader or model about the check?",
    "figure_in_quote": "does the quote carry the claim's figure (MATCH, PARTIAL) or a different one (MISMATCH, STALE)?",
    "same_thing": "is the quoted figure about the claim's subject (two words of the claim's clause around its figure)?",
    "page_consistent": "does the rest of the page state a competing figure for the same subject? (a judgment call)",
    "no_free_numerals": "is every number in source_says on the page, every number in claimed in the claim?",
    "source_tier": "a secondary source gives at most PARTIAL",
    "both_directions": "did the answer report both directions, neither failed? (empty or garbled: incomplete)",
    "direction_b": ("did a second, independent ask framed to refute leave the MATCH or PARTIAL standing? (not asked "
                    "or unusable: INDETERMINATE)"),
    "causal_wording": "is causal wording backed by a quote that says so? (else reworded, or flagged)",
    "class_consistent": "does the verification class follow the shipped verdict?",
}

INDETERMINATE: VerdictName = "INDETERMINATE"
INSTRUCTION_REACH = 200  # chars around text addressed to a model within which a quote is not evidence
_MAX_QUOTE_OCCURRENCES = 200  # bounds the scan of a quote repeated all over a page
MIN_QUOTE_CHARS = 12
MAX_QUOTE_CHARS = 600  # the prompt asks for one sentence or table row
WITHHELD_NOTE = "Set by code: the answer failed the {checks} check; its text is withheld (kept in the debug record)."

# The classes each shipped verdict allows; the first is the one code sets when the model's contradicts it.
ALLOWED_CLASSES: dict[str, tuple[str, ...]] = {
    "MATCH": ("confirmed",),
    "MISMATCH": ("corrected",),
    "STALE": ("corrected",),
    "PARTIAL": ("flagged-judgment-call", "flagged-unsupported"),
    "NOT_FOUND": ("flagged-unsupported",),
    "SOURCE_UNAVAILABLE": ("flagged-no-source",),
    "INDETERMINATE": ("flagged-judgment-call", "flagged-unsupported"),
}

_VERDICT_ALIASES = {"NOTFOUND": "NOT_FOUND", "NOT FOUND": "NOT_FOUND", "SOURCE UNAVAILABLE": "SOURCE_UNAVAILABLE"}
_LANGUAGES = {"en": "English", "fr": "French", "es": "Spanish", "de": "German", "it": "Italian", "pt": "Portuguese"}

# Causal wording. A preposition-like phrase becomes "alongside" and a causal verb "coincided with" (same tense):
# both stay grammatical in place. "because" (a conjunction: "while" changes the meaning) and "cause(s)" (also a
# noun) have no neutral word that fits every sentence: a sentence holding them, or two causal phrases, is left
# as written and flagged.
_REWORD: dict[str, str] = {
    "as a result of": "alongside", "because of": "alongside", "owing to": "alongside", "due to": "alongside",
    "thanks to": "alongside", "caused by": "alongside", "driven by": "alongside",
    "resulted in": "coincided with", "results in": "coincides with", "result in": "coincide with",
    "led to": "coincided with", "leads to": "coincides with", "lead to": "coincide with", "drove": "coincided with",
}
_CAUSAL_RE = re.compile(r"\b(as a result of|because of|owing to|due to|thanks to|caused by|driven by|resulted in|"
                        r"results in|result in|led to|leads to|lead to|drove|because|caused|causes|cause)\b", re.I)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+")


class _Draft:
    """The verdict as it is being checked: the fields that ship and the record of every change."""

    def __init__(self, draft: DraftVerdict, item: JudgeItem, full_page: str) -> None:
        self.item = item
        self.full_page = full_page  # the whole page (item.page_text is what the judge was sent)
        self.verdict = draft.verdict
        self.claimed = draft.claimed
        self.source_says = draft.source_says
        self.quote = draft.quote
        self.note = draft.note
        self.verification_class = draft.verification_class
        self.direction_a = draft.direction_a.model_copy(update={"by": "model"})
        self.direction_b = draft.direction_b.model_copy(update={"by": "model"})
        self.figure_on_page = ""
        self.passages: list[str] = []
        self.quote_ok = False  # the quote was found verbatim in the page text
        self.pending_b = False
        self.downgrades: list[Downgrade] = []
        self.checks_run: list[str] = []

    def ran(self, check: str) -> None:
        if check not in self.checks_run:
            self.checks_run.append(check)

    def downgrade(self, check: str, reason: str, to: str = INDETERMINATE) -> None:
        self.ran(check)
        before = self.verdict if self.verdict in VERDICTS else "(unknown)"
        self.downgrades.append(Downgrade(check=check, reason=reason, before=before, after=to))
        self.verdict = to
        if to not in ("MISMATCH", "STALE"):
            self.figure_on_page = ""  # only a shipped MISMATCH/STALE names the page's figure (corrections read it)

    def changed(self, check: str, reason: str, before: str, after: str,
                kind: Literal["verdict", "text", "class", "field", "flag"] = "text") -> None:
        self.downgrades.append(Downgrade(check=check, reason=reason, before=before, after=after, kind=kind))

    @property
    def rejected(self) -> bool:
        """Code refused the answer: it ships INDETERMINATE after a check lowered it there."""
        return self.verdict == INDETERMINATE and any(x.kind == "verdict" and x.after == INDETERMINATE
                                                      for x in self.downgrades)


def _short(text: str, n: int = 80) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n - 1] + "…"


def _base(item: JudgeItem) -> dict:
    return {
        "id": item.id, "scope": item.scope, "file": item.file, "line_no": item.line_no,
        "source_url": item.source_url, "claim_text": item.claim_text, "source_tier": item.source_tier,
        "prior": item.prior, "page_text_hash": item.page_text_hash,
        "figure_claimed": item.values[0].raw if item.values else "",
    }


def unreadable_verdict(item: JudgeItem, draft: DraftVerdict | None = None) -> Verdict:
    """SOURCE_UNAVAILABLE set by code for a page with no readable text; never sent to a model. A draft a model
    gave anyway is kept for the record and overruled."""
    why = f"the page has no readable text (prior {item.prior})" if item.prior in UNREADABLE_PRIORS else (
        "the page text is empty")
    downgrades = []
    if draft is not None:
        same = draft.verdict == "SOURCE_UNAVAILABLE"
        said = draft.verdict if draft.verdict in VERDICTS else "(unknown)"
        downgrades.append(Downgrade(check="unavailable_by_code", reason=f"{why}: a model's answer on it is not read",
                                    before=said if not same else "(the model's note)",
                                    after="SOURCE_UNAVAILABLE" if not same else "(the harness's note)",
                                    kind="text" if same else "verdict"))
    return Verdict(**_base(item), verdict="SOURCE_UNAVAILABLE", note=f"Set by code: {why}.",
                   verification_class="flagged-no-source", draft=draft, downgrades=downgrades,
                   checks_run=["unavailable_by_code"] if draft is not None else [])


def verify(draft: DraftVerdict | None, item: JudgeItem, *, raw_error: str | None = None,
           page_given: str | None = None, direction_b: DirectionBDraft | None = None) -> Verdict:
    """The verdict that ships for item, given the model's draft (None: no usable answer, raw_error says why).

    page_given: the page text the judge was actually sent (Prompt.page, when the page was cut to the prompt's
    cap); quotes must come from it. Default: item.page_text. The page-consistency check reads the whole page.
    direction_b: the answer to the independent direction-B ask (None: not asked yet; an answer that would ship its
    quote as MATCH or PARTIAL is then INDETERMINATE with direction_b_pending set, and the runner asks and checks
    again).
    """
    if not item.readable:
        return unreadable_verdict(item, draft)
    full_page = item.page_text
    if page_given is not None and page_given != item.page_text:
        item = item.model_copy(update={"page_text": page_given})
    if draft is None:
        reason = raw_error or "no answer"
        return Verdict(**_base(item), verdict=INDETERMINATE, note=f"Set by code: no usable answer ({_short(reason, 160)}).",
                       verification_class="flagged-judgment-call", checks_run=["answer_parsed"],
                       downgrades=[Downgrade(check="answer_parsed", reason=_short(reason, 300), before="(no answer)",
                                             after=INDETERMINATE)])
    d = _Draft(draft, item, full_page)
    d.ran("answer_parsed")
    _check_identity(d, draft)
    _check_verdict_known(d)
    _check_unavailable(d)
    _check_quote(d, draft)
    _check_figure(d)
    _check_page_consistent(d)
    _check_free_numerals(d)
    _check_tier(d)
    _check_directions(d)
    _check_direction_b(d, direction_b)
    _check_causal(d)
    _check_class(d)
    if d.rejected:
        _withhold(d)
    confidence = draft.confidence if isinstance(draft.confidence, (int, float)) and math.isfinite(draft.confidence) else 0.0
    if any(x.kind == "verdict" for x in d.downgrades):
        confidence = 0.0  # the model's confidence was in the verdict code refused (the draft keeps it)
    return Verdict(
        **_base(item),
        # _check_verdict_known and _check_class left a known name in both (pydantic validates them again)
        verdict=cast(VerdictName, d.verdict),
        claimed=d.claimed,
        source_says=d.source_says,
        quote=d.quote,
        confidence=min(1.0, max(0.0, float(confidence))),
        note=d.note,
        direction_a=d.direction_a,
        direction_b=d.direction_b,
        verification_class=cast(VerificationClass, d.verification_class),
        draft=draft,
        draft_b=direction_b,
        passages=d.passages,
        direction_b_pending=d.pending_b,
        downgrades=d.downgrades,
        checks_run=d.checks_run,
        figure_on_page=d.figure_on_page,
    )


def _withhold(d: _Draft) -> None:
    """A refused answer ships none of its words: the verdict, the failed check and the reason only."""
    failed = list(dict.fromkeys(x.check for x in d.downgrades if x.kind == "verdict"))
    d.quote = d.source_says = ""
    d.claimed = d.item.values[0].raw if d.item.values else ""
    d.note = WITHHELD_NOTE.format(checks=", ".join(failed) or "code")
    # the refused answer's account of either direction is not read: neither counts as passed
    if d.direction_a.by == "model":
        d.direction_a = Direction(result="incomplete", line="", by="model")
    if d.direction_b.by == "model":
        d.direction_b = Direction(result="incomplete", line="", by="model")


def _check_identity(d: _Draft, draft: DraftVerdict) -> None:
    d.ran("identity")
    item = d.item
    pairs = (("id", draft.id, item.id), ("scope", draft.scope, item.scope),
             ("line_no", "" if draft.line_no is None else str(draft.line_no), str(item.line_no)),
             ("source_url", draft.source_url, item.source_url))
    for name, said, harness in pairs:
        said = (said or "").strip()
        if said and said != harness:
            d.changed("identity", f"the model's {name} is not the harness's: overwritten", f"(the model's {name})",
                      _short(harness), kind="field")


def _check_verdict_known(d: _Draft) -> None:
    d.ran("verdict_known")
    said = re.sub(r"[\s-]+", " ", str(d.verdict or "")).strip().upper()
    name = _VERDICT_ALIASES.get(said, said.replace(" ", "_"))
    if name in VERDICTS:
        d.verdict = name
    else:
        d.verdict = "(unknown)"
        d.downgrade("verdict_known", "the answer's verdict is not one of the seven names")


def _check_unavailable(d: _Draft) -> None:
    if d.verdict != "SOURCE_UNAVAILABLE":
        return
    d.ran("unavailable_by_code")
    d.downgrade("unavailable_by_code", "the page text was readable and given to the judge; only the harness sets "
                "SOURCE_UNAVAILABLE")


def _check_quote(d: _Draft, draft: DraftVerdict) -> None:
    quote = d.quote or ""
    if not quote.strip():
        cited = [str(s.get("text", "")) for s in draft.cited_spans if isinstance(s, dict) and s.get("text")]
        if cited:
            quote = d.quote = cited[0]
    core = quote_core(quote)
    if d.verdict not in QUOTED_VERDICTS:
        if core:  # a quote shipped beside any verdict is read as the page's words: it must be the page's, not a prompt
            d.ran("quote_verbatim")
            why = _quote_problem(d, core) or (_instruction_problem(d, core) and "it is page text addressed to a model")
            if why:
                d.changed("quote_verbatim", f"quote dropped: {why}", "(the model's quote)", "")
                d.quote = ""
            else:
                d.quote, d.quote_ok = core, True
        return
    d.ran("quote_verbatim")
    why = _quote_problem(d, core)
    if why:
        d.downgrade("quote_verbatim", why)
        d.quote = ""  # not the page's words: it does not ship (the draft keeps it)
        return
    d.quote, d.quote_ok = core, True
    d.ran("quote_not_instruction")
    why = _instruction_problem(d, core)
    if why:
        d.downgrade("quote_not_instruction", why)


def _instruction_problem(d: _Draft, core: str) -> str | None:
    if _INSTRUCTION_RE.search(core) or addressed_spans(core):
        return "the quote is page text addressed to a reader or model about the check, not evidence"
    if _planted_language(d.item, core):
        return ("the quote is in a language the rest of the page is not written in: a line set there for the "
                "check, not the page's evidence")
    if _beside_addressed(normalized(core), normalized_page(d.item.page_text)):
        return (f"the quote stands in or beside page text addressed to a reader or model (within "
                f"{INSTRUCTION_REACH} characters): planted, not evidence")
    return None


def _planted_language(item: JudgeItem, core: str) -> bool:
    """Is the quote written in one language while the page around it is plainly written in another (a bilingual
    page, or one with a few words of the quote's language, is not)? A page's own evidence is in the page's
    language, whatever the wording of a line set there for a model in the claim's or any other language."""
    quote_langs = languages_of(core)
    if not quote_langs:
        return False
    # the page without the quote: written in another language when the quote's has under a tenth of its words
    counts = language_counts(item.page_text.replace(core, " "))
    top = max(counts.values())
    return top >= 20 and all(counts[lang] * 10 < top for lang in quote_langs)


def _beside_addressed(needle: str, page: str) -> bool:
    """Does every occurrence of the quote in the page stand within reach of text addressed to a model?"""
    spans = addressed_spans(page)
    if not spans:
        return False
    start = page.find(needle)
    for _ in range(_MAX_QUOTE_OCCURRENCES):
        if start < 0:
            return True
        end = start + len(needle)
        if not any(lo - INSTRUCTION_REACH <= end and start <= hi + INSTRUCTION_REACH for lo, hi in spans):
            return False  # one clean occurrence is evidence enough
        start = page.find(needle, start + 1)
    return True


def _quote_problem(d: _Draft, core: str) -> str | None:
    """Why the quote is not one verbatim span of the page text given to the judge (None: it is)."""
    if not core:
        return f"{d.verdict} without a quote (quote or abstain)"
    if "…" in core or "..." in core:
        return "the quote elides text: one contiguous span of the page is required"
    needle = normalized(core)
    if len(needle) < MIN_QUOTE_CHARS:
        return "the quote is too short to show what the figure describes"
    if len(needle) > MAX_QUOTE_CHARS:
        return (f"the quote is {len(needle)} characters: a span that long (a whole section or page) shows nothing "
                f"about where the figure stands; one sentence or table row is asked for")
    if needle not in normalized_page(d.item.page_text):
        return "the quote is not in the page text"
    return None


def _check_figure(d: _Draft) -> None:
    if d.verdict not in QUOTED_VERDICTS:
        return
    d.ran("figure_in_quote")
    if not d.item.values:
        d.downgrade("figure_in_quote", "the claim has no figure the quote could carry")
        return
    value = d.item.values[0]
    if d.verdict in ("MATCH", "PARTIAL"):
        spans = claim_figure_spans(value, d.quote, strong_only=d.verdict == "MATCH")
        if not spans:
            weak = d.verdict == "MATCH" and claim_figure_spans(value, d.quote, strong_only=False)
            why = ("carries the claim's figure only without its unit or precision" if weak
                   else f"does not carry the claim's figure {value.raw}")
            d.downgrade("figure_in_quote", f"{d.verdict}, but the quote {why}")
            return
    else:  # MISMATCH / STALE: the page's different figure must be in the quote
        others = other_figure_spans(value, d.quote, d.item.values)
        if not others:
            own = ", ".join(v.raw for v in d.item.values if v.type == value.type)
            d.downgrade("figure_in_quote", f"{d.verdict}, but the quote carries no {value.type} figure other than the "
                        f"claim's own ({own})")
            return
        said = normalized(d.source_says)
        named = [o for o in others if normalized(o[2]) in said]
        spans = [(a, b) for a, b, _ in (named or others)]
    # The figure must be about the claim's thing (currency is not context): the quote's clause holding it shares
    # two words with the claim's clause around its figure (one when that clause has one).
    d.ran("same_thing")
    span, check = best_subject(d.item, d.quote, spans, value)
    assert span is not None  # spans is not empty
    if d.verdict in ("MISMATCH", "STALE"):
        d.figure_on_page = d.quote[span[0]:span[1]]
    if check.ok:
        return
    strong = bool(claim_figure_spans(d.item.values[0], d.quote, strong_only=True))
    if check.foreign and strong and d.verdict in ("MATCH", "PARTIAL"):
        # a weak hit (a bare "3" for a claimed 3 %) in a passage code cannot read is a coincidence, not evidence
        lang = _LANGUAGES.get(language_of(d.quote) or "", "another language")
        if d.verdict == "MATCH":
            d.downgrade("same_thing", f"MATCH, but the quote is in {lang} and the claim is not: code cannot check by "
                        "its words that the figure is about the claim's subject; not confirmed", to="PARTIAL")
        return
    words = ", ".join(check.claim_words[:8]) or "none"
    d.downgrade("same_thing", f"{d.verdict}, but the clause of the quote holding the figure shares "
                f"{len(check.shared)} of the {check.needed} words needed with the claim's ({words}): another thing's figure")


def _check_page_consistent(d: _Draft) -> None:
    """Direction B by code: the rest of the whole page against the quoted passage."""
    if d.verdict not in ("MATCH", "PARTIAL", "MISMATCH") or not d.quote_ok or not d.item.values:
        return
    d.ran("page_consistent")
    value = d.item.values[0]
    if d.verdict == "MISMATCH":
        found = _supporting_elsewhere(d)
        if found:
            d.passages = [passage_around(d.full_page, d.quote), found]
            d.downgrade("page_consistent", f"MISMATCH, but the page also states the claim's figure {value.raw} for "
                        "the same subject elsewhere: a judgment call, both passages quoted")
        return
    rivals = competing(d.item, d.full_page, d.quote)
    if not rivals:
        return
    d.passages = [passage_around(d.full_page, d.quote), rivals[0].passage]
    d.direction_b = Direction(result="flagged", by="code", line=(
        f"the page also states {rivals[0].figure} for the same subject (read by code)"))
    d.downgrade("page_consistent", f"{d.verdict}, but the page states another {value.type} figure "
                f"({rivals[0].figure}) for the same subject elsewhere ({PLACED_BY[rivals[0].by]}): a judgment call, "
                "both passages quoted")


def _supporting_elsewhere(d: _Draft) -> str:
    """A passage of the page outside the quote stating the claim's own figure for the claim's subject."""
    value = d.item.values[0]
    if not claim_subject_words(d.item, value):
        return ""
    needle = normalized(d.quote)
    for lo, hi in subject_segments(d.item, d.full_page, value):
        seg = d.full_page[lo:hi]
        if needle in normalized(seg) or normalized(seg.strip()) in needle:
            continue
        for start, end in claim_figure_spans(value, seg, strong_only=True):
            if subject_of(d.item, seg, start, end, value).ok:
                return " ".join(seg.split())[:400]
    return ""


def _check_free_numerals(d: _Draft) -> None:
    d.ran("no_free_numerals")
    item = d.item
    # the claim's own numbers may be named too ("the page gives 2% and 3%, not the claimed 5%"): the prompt allows
    # numbers "in the page text or the claim", and no figure of a correction is read from source_says
    free_says = free_numerals(d.source_says, d.quote if d.quote_ok else "", item.page_text, item.claim_text)
    free_claimed = free_numerals(d.claimed, item.claim_text, item.line_text)
    nowhere = "found neither on the page nor in the claim"
    if free_says:
        d.source_says = "(withheld: it states numbers found neither on the page nor in the claim)"
        if d.verdict != INDETERMINATE:
            d.downgrade("no_free_numerals", f"source_says states {len(free_says)} number(s) {nowhere}")
        else:
            d.changed("no_free_numerals", f"source_says withheld: {len(free_says)} number(s) {nowhere}",
                      "(the model's source_says)", d.source_says)
    if free_claimed:
        d.claimed = item.values[0].raw if item.values else ""
        if d.verdict != INDETERMINATE:
            d.downgrade("no_free_numerals", f"claimed states {len(free_claimed)} number(s) the claim does not")
        else:
            d.changed("no_free_numerals", "claimed replaced by the claim's own figure", "(the model's claimed)", d.claimed)
    free_note = free_numerals(d.note, item.claim_text, item.line_text, item.page_text)
    if free_note:
        d.note = "(note withheld: it states numbers found in neither the claim nor the page)"
        d.changed("no_free_numerals", f"note withheld: {len(free_note)} number(s) {nowhere}", "(the model's note)",
                  d.note)
    for name in ("direction_a", "direction_b"):
        direction = getattr(d, name)
        if direction.by != "model":
            continue
        free = free_numerals(direction.line, item.claim_text, item.line_text, item.page_text)
        if free:
            line = "(withheld: it states numbers found neither on the page nor in the claim)"
            d.changed("no_free_numerals", f"{name} line withheld: {len(free)} number(s) {nowhere}",
                      f"(the model's {name} line)", line)
            setattr(d, name, direction.model_copy(update={"line": line}))


def _check_tier(d: _Draft) -> None:
    d.ran("source_tier")
    if d.item.source_tier not in ("secondary", "own"):  # the project's own page is no source for its own figure
        return
    if d.verdict == "MATCH":
        d.downgrade("source_tier", "a secondary source gives at most PARTIAL", to="PARTIAL")
    elif d.verdict in ("MISMATCH", "STALE"):
        d.downgrade("source_tier", f"a secondary source gives at most PARTIAL; its different figure cannot "
                    f"establish {d.verdict}")
        d.figure_on_page = ""


def _check_directions(d: _Draft) -> None:
    """The answer's own account of both directions: a failure refuses a MATCH; a direction left empty or garbled
    is incomplete, never read as passed."""
    if d.verdict != "MATCH":
        return
    d.ran("both_directions")
    failed = [n for n, x in (("A", d.direction_a), ("B", d.direction_b)) if x.result in ("fail", "flagged")]
    if failed:
        d.downgrade("both_directions", f"MATCH, but the answer's own direction {failed[0]} reports a failure")
        return
    incomplete = [n for n, x in (("A", d.direction_a), ("B", d.direction_b))
                  if x.result != "pass" or not x.line.strip()]
    for n in incomplete:
        name = f"direction_{n.lower()}"
        setattr(d, name, getattr(d, name).model_copy(update={"result": "incomplete"}))
    if incomplete:
        d.downgrade("both_directions", f"MATCH, but the answer's direction {' and '.join(incomplete)} is empty or "
                    "garbled: incomplete, never read as passed; not confirmed", to="PARTIAL")


def _check_direction_b(d: _Draft, b: DirectionBDraft | None) -> None:
    """The independent direction-B ask, for every answer that would ship its quote as evidence (MATCH, or PARTIAL
    however it got there): a quote checked one way only is not signed, so an ask that was not made or came back
    unusable leaves the claim unresolved (INDETERMINATE), never a PARTIAL carrying the quote."""
    if d.verdict not in ("MATCH", "PARTIAL") or not d.quote_ok:
        return
    d.ran("direction_b")
    said = d.verdict
    if b is None:
        d.pending_b = True
        d.direction_b = Direction(result="incomplete", by="ask", line="direction B not asked yet")
        d.downgrade("direction_b", f"{said}, but direction B was not asked: checked one way only, not evidence")
        return
    if b.error or b.refuted is None:
        why = "no usable answer came back" if not b.error.startswith("not asked") else _short(b.error, 120)
        d.direction_b = Direction(result="incomplete", by="ask", line=f"direction B incomplete: {why}")
        d.downgrade("direction_b", f"{said}, but the direction-B ask is incomplete ({why}): checked one way only, "
                    "not evidence")
        return
    if not b.refuted:
        d.direction_b = Direction(result="pass", by="ask",
                                  line="a second ask, framed to refute, found nothing on the page against the claim")
        return
    core = quote_core(b.quote)
    checker = _Draft(DraftVerdict(verdict="MISMATCH", quote=core), d.item, d.full_page)
    problem = _quote_problem(checker, core) or _instruction_problem(checker, core) if core else "it quotes nothing"
    if problem:
        d.direction_b = Direction(result="incomplete", by="ask",
                                  line="direction B refuted the claim without checkable evidence")
        d.downgrade("direction_b", f"{said}, but the direction-B ask refuted it with a quote code cannot use "
                    f"({problem}): neither settled, not evidence")
        return
    d.passages = [passage_around(d.full_page, d.quote), passage_around(d.full_page, core)]
    value = d.item.values[0]
    others = other_figure_spans(value, core, d.item.values)
    rival = next((fig for a, b_, fig in others if best_subject(d.item, core, [(a, b_)], value)[1].ok), "")
    if rival:
        d.direction_b = Direction(result="fail", by="ask", line=f"the page also states {rival} for the same subject")
        d.downgrade("direction_b", f"{said}, but direction B found another {value.type} figure ({rival}) for the same "
                    "subject on the page: a judgment call, both passages quoted")
    else:
        d.direction_b = Direction(result="fail", by="ask", line="direction B quoted a passage qualifying the claim")
        d.downgrade("direction_b", f"{said}, but direction B quoted a passage of the page that may qualify it: a "
                    "judgment call, both passages quoted", to="PARTIAL")


def _check_causal(d: _Draft) -> None:
    texts = {"note": d.note, "source_says": d.source_says, "direction_a": d.direction_a.line,
             "direction_b": d.direction_b.line}
    if not any(texts.values()):
        return
    d.ran("causal_wording")
    if d.quote_ok and _CAUSAL_RE.search(d.quote):
        return  # a checked quote says so itself
    for field, before in texts.items():
        if not before or not _CAUSAL_RE.search(before):
            continue
        if field.startswith("direction") and getattr(d, field).by != "model":
            continue
        after, flagged = neutral_wording(before)
        words = ", ".join(dict.fromkeys(m.group(0).lower() for m in _CAUSAL_RE.finditer(before)))
        if flagged:
            d.changed("causal_wording", f"{field}: causal wording ({words}) with no quote that says so; no neutral "
                      "wording fits the sentence, so it is left as written and flagged", f"(the model's {field})",
                      "(left as written, flagged)", kind="flag")
        if after != before:
            if field.startswith("direction"):
                setattr(d, field, getattr(d, field).model_copy(update={"line": after}))
            else:
                setattr(d, field, after)
            d.changed("causal_wording", f"{field}: causal wording ({words}) with no quote that says so, reworded",
                      f"(the model's {field})", _short(after, 160))


def neutral_wording(text: str) -> tuple[str, bool]:
    """(text with each sentence's one causal phrase made neutral, whether a sentence was left as written).
    A sentence is reworded only when it holds exactly one causal phrase and that phrase has a neutral form that
    fits in place; otherwise it is left and flagged."""
    out: list[str] = []
    flagged = False
    for sentence in _SENTENCE_SPLIT_RE.split(text):
        found = list(_CAUSAL_RE.finditer(sentence))
        if not found:
            out.append(sentence)
            continue
        m = found[0]
        word = m.group(0).lower()
        if len(found) > 1 or word not in _REWORD:
            flagged = True
            out.append(sentence)
            continue
        repl = _match_case(m.group(0), _REWORD[word])
        out.append(sentence[:m.start()] + repl + sentence[m.end():])
    return " ".join(out) if len(out) > 1 else (out[0] if out else text), flagged


def _match_case(word: str, replacement: str) -> str:
    return replacement[0].upper() + replacement[1:] if word[:1].isupper() else replacement


def _check_class(d: _Draft) -> None:
    d.ran("class_consistent")
    allowed = ALLOWED_CLASSES[d.verdict] if d.verdict in ALLOWED_CLASSES else ("flagged-judgment-call",)
    said = str(d.verification_class or "").strip().lower()
    if d.passages and "flagged-judgment-call" in allowed:
        d.verification_class = "flagged-judgment-call"  # competing passages: a judgment call, whatever was said
        return
    if said in allowed:
        d.verification_class = said
        return
    d.verification_class = allowed[0]
    if any(x.kind == "verdict" for x in d.downgrades):
        return  # the class follows a verdict code lowered: that downgrade's row says why
    shown = said if said in CLASSES else "(not a class name)"
    d.changed("class_consistent", f"class {shown} contradicts the shipped verdict {d.verdict}", shown, allowed[0],
              kind="class")
