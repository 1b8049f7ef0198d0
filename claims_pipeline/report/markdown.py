"""report.md: the reference sections, headings and table layouts (docs/decisions/0001), with every cell escaped; a
changed page's diff once, with the claims citing it under it; WEAK_MATCH claims listed; times in UTC."""

from __future__ import annotations

import json
from typing import Any

from claims_pipeline.report.audit import Audit
from claims_pipeline.report.escape import cell_text, claim_plain, md_cell, md_code, md_link
from claims_pipeline.report.md_tables import md_code_block
from claims_pipeline.report.sections import (
    BY_SCOPE_NOTE,
    LISTED_MAX,
    ChangedPage,
    ScopeCount,
    by_source_tier,
    change_note,
    changed_pages,
    counts_by_scope,
    pages_and_claims,
    plural,
    sorted_rows,
    table_rows,
    unconfirmed_note,
    unreadable_labels,
    utc_time,
)

TITLE = "# Source-content audit (deterministic — no LLM)"
TRIPWIRES = (
    "> **These are tripwires, not verdicts.** A figure reported absent may be on the page in a form the "
    "matcher does not read, and a changed page may still carry the figure. Re-read the cited page before "
    "editing anything; never re-stamp a date without reading it."
)
UNAVAILABLE_TEXT = (
    "PDFs without a text layer and sources that could not be read (dead, blocked, binary, robots, JS-only "
    "pages) are not flags: nothing can be said about their figures until a person opens them."
)
UNREADABLE_PRIORS = ("PDF_NO_TEXT", "SOURCE_UNAVAILABLE", "SOURCE_BINARY")
CHANGED_TEXT = (
    "Pages whose new text was seen twice in a row, confirmed by this run's fetch or another (another scope's "
    "run, `claims-pipeline fetch`) and not shown by an earlier report: each change is reported once."
)
EARLIER_TEXT = (
    "Pages whose change an earlier report showed (the date is below), cited by claims verified before the "
    "change: they are still stale, so the diff is repeated here once."
)
WEAK_TEXT = (
    "Some of the claim's carrying figures are on the page, or only weakly (a 1-digit figure, a unit mismatch): "
    "not a flag, worth a look."
)
ACTION = (
    "Action: triage `stale_changed` first (the page changed after the claim was verified), then "
    "`TOKENS_ABSENT`, then the other changed pages."
)


def _where(r: Any) -> str:
    """file:line, which an editor opens: several files can share a scope and a line number."""
    file, line = cell_text(getattr(r, "file", "")), int(r.line_no)
    return md_code(f"{file}:{line}") if file else str(line)


def _claim(text: object, limit: int) -> str:
    # bold markers would show as escaped asterisks ("\\*\\*18%\\*\\*"): the claim reads as plain prose
    return md_cell(claim_plain(text), limit)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return ["_(none)_"]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _by_scope(counts: list[ScopeCount], n: int, what: str) -> list[str]:
    """A section too long to list: its claims counted by scope, with the most frequent labels."""
    lines = [BY_SCOPE_NOTE.format(n=n, what=what), ""]
    return lines + _table(
        ["scope", "claims", f"most frequent {what}"],
        [[md_code(c.scope), str(c.claims), md_cell(c.top_text, 200)]
         for c in counts],
    )


def _missing_scopes(audit: Audit) -> list[str]:
    if not audit.scopes_missing:
        return []
    names = ", ".join(md_code(s) for s in audit.scopes_missing[:30]) + (" …" if len(audit.scopes_missing) > 30 else "")
    return [f"> ⚠️ **{len(audit.scopes_missing)} scope(s) of the corpus are not in this audit** (never materialized): "
            f"{names}. The numbers above leave them out.", ""]


def _url(url: object) -> str:
    return md_link(url, breaks=True)


def _page_group(group: ChangedPage) -> list[str]:
    """One changed page: its link, times, diff (once), and the claims citing it."""
    lines = [f"**{_url(group.url)}** — changed {md_cell(utc_time(group.changed_at)) or 'at an unknown time'}"
             f"  ·  {md_cell(group.note)}  ·  cited by {plural(len(group.claims), 'claim')}", ""]
    lines += [md_code_block(group.diff, "diff") if group.diff else "_(no diff stored)_", ""]
    lines += _table(
        ["scope", "where", "claim", "prior", "verified", "stale_changed"],
        [[md_code(r.scope), _where(r), _claim(r.claim, 100), md_code(r.prior), md_cell(cell_text(r.last_verified)[:10] or "never"),
          "yes" if r.stale_changed else "no"] for r in group.claims],
    )
    return lines + [""]


def _figures(r: Any, column: str) -> str:
    """A figure list cell (missing, found), with the page's unconfirmed change beside it when there is one."""
    cell = md_cell(", ".join(json.loads(getattr(r, column))[:6]))
    note = unconfirmed_note(r)
    return f"{cell} ({md_cell(note)})" if note else cell


def render_markdown(audit: Audit, previous_run: str | None = None) -> str:
    h = audit.headline
    lines = [
        TITLE,
        "",
        f"Run: {md_cell(utc_time(audit.run_at))}  ·  previous run: {md_cell(utc_time(previous_run)) if previous_run else '(none)'}",
        "",
        f"Claims checked: {h['total']}  ·  flagged: {h['flagged']}  ·  scopes: {len(audit.audited_scopes())}",
        "",
        *_missing_scopes(audit),
        TRIPWIRES,
        "",
        "## Prior breakdown",
        "",
    ]
    lines += [f"- {prior}: {n}" for prior, n in sorted(h["by_prior"].items())] or ["_(none)_"]

    stale = sorted_rows(audit.bucket("stale_changed"))
    lines += ["", "## ⚠️ Source changed AFTER its `Last verified` date (re-verify first)", ""]
    lines += _table(
        ["scope", "where", "claim", "verified", "changed (UTC)", "change shown", "url"],
        [
            [md_code(r.scope), _where(r), _claim(r.claim, 100), md_cell(cell_text(r.last_verified)[:10] or "never"),
             md_cell(utc_time(r.changed_at)), md_cell(change_note(r)), _url(r.url)]
            for r in table_rows(stale)
        ],
    )

    groups = changed_pages(audit)
    new, earlier = [g for g in groups if g.new], [g for g in groups if not g.new]
    lines += ["", f"## Cited page CHANGED ({pages_and_claims(new)})", "", CHANGED_TEXT, ""]
    lines += [line for g in new for line in _page_group(g)] or ["_(none)_", ""]
    if earlier:
        lines += [f"## Changed before, shown by an earlier report: claims still stale ({pages_and_claims(earlier)})",
                  "", EARLIER_TEXT, ""]
        lines += [line for g in earlier for line in _page_group(g)]

    absent = sorted_rows(audit.bucket("tokens_absent"))
    lines += [f"## Figure NOT on cited page — `TOKENS_ABSENT` ({len(absent)})", ""]
    for title, rows in by_source_tier(audit, absent):
        lines += [f"### {title} ({len(rows)})", ""] if title else []
        lines += _table(
            ["scope", "where", "claim", "missing", "verified", "url"],
            [
                [md_code(r.scope), _where(r), _claim(r.claim, 100), _figures(r, "missing"),
                 md_cell(cell_text(r.last_verified)[:10] or "never"), _url(r.url)]
                for r in table_rows(rows)
            ],
        )
        lines += [""] if title else []

    weak = sorted_rows(audit.bucket("weak_match"))
    lines += ["", f"## Figures only partly on cited page — `WEAK_MATCH` ({len(weak)})", "", WEAK_TEXT, ""]
    lines += _by_scope(counts_by_scope(weak, weak["file"]), len(weak), "files") if len(weak) > LISTED_MAX else _table(
        ["scope", "where", "claim", "found", "missing", "verified", "url"],
        [
            [md_code(r.scope), _where(r), _claim(r.claim, 100), md_cell(", ".join(json.loads(r.matched)[:6])),
             _figures(r, "missing"), md_cell(cell_text(r.last_verified)[:10] or "never"), _url(r.url)]
            for r in table_rows(weak)
        ],
    )

    binary = int(h["by_prior"].get("SOURCE_BINARY", 0))
    unreadable = sorted_rows(audit.priors[audit.priors["prior"].isin(UNREADABLE_PRIORS)])
    lines += [
        "",
        f"## PDF with no text layer ({h['pdf_no_text']})  ·  Source unavailable ({h['source_unavailable']})"
        f"  ·  Binary source ({binary})",
        "",
        UNAVAILABLE_TEXT,
        "",
        *(_by_scope(counts_by_scope(unreadable, unreadable_labels(unreadable)), len(unreadable), "notes")
          if len(unreadable) > LISTED_MAX else _table(
            ["scope", "where", "prior", "note", "url"],
            [[md_code(r.scope), _where(r), md_code(r.prior), md_cell(r.fetch_note, 120), _url(r.url)]
             for r in table_rows(unreadable)],
        )),
        "",
        ACTION,
        "",
    ]
    return "\n".join(lines)
