"""report.md: the original's sections, headings and table layouts (reference §9), with every cell escaped."""

from __future__ import annotations

import json

import pandas as pd

from claims_pipeline.audit import Audit
from claims_pipeline.report.escape import claim_plain, md_cell, md_code, md_link, s

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
ACTION = (
    "Action: triage `stale_changed` first (the page changed after the claim was verified), then "
    "`TOKENS_ABSENT`, then the other changed pages."
)


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["scope", "file", "line_no", "url"], kind="stable")


def _where(r: object) -> str:
    """file:line, which an editor opens: several files can share a scope and a line number."""
    file, line = s(getattr(r, "file", "")), int(getattr(r, "line_no"))
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


def _missing_scopes(audit: Audit) -> list[str]:
    if not audit.scopes_missing:
        return []
    names = ", ".join(md_code(s) for s in audit.scopes_missing[:30]) + (" …" if len(audit.scopes_missing) > 30 else "")
    return [f"> ⚠️ **{len(audit.scopes_missing)} scope(s) of the corpus are not in this audit** (never materialized): "
            f"{names}. The numbers above leave them out.", ""]


def render_markdown(audit: Audit, previous_run: str | None = None) -> str:
    h = audit.headline
    lines = [
        TITLE,
        "",
        f"Run: {md_cell(audit.run_at)}  ·  previous run: {md_cell(previous_run) if previous_run else '(none)'}",
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

    stale = _sorted(audit.bucket("stale_changed"))
    lines += ["", "## ⚠️ Source changed AFTER its `Last verified` date (re-verify first)", ""]
    lines += _table(
        ["scope", "where", "claim", "verified", "changed-since", "url"],
        [
            [md_code(r.scope), _where(r), _claim(r.claim, 100), md_cell(s(r.last_verified)[:10] or "never"),
             md_cell(s(r.changed_at)[:10]), md_link(r.url)]
            for r in stale.itertuples(index=False)
        ],
    )

    changed = _sorted(audit.bucket("content_changed")).drop_duplicates(subset=["file", "line_no", "url"])
    lines += ["", f"## Cited page CHANGED ({len(changed)})", "", CHANGED_TEXT, ""]
    lines += _table(
        ["scope", "where", "url", "changed-since"],
        [[md_code(r.scope), _where(r), md_link(r.url), md_cell(s(r.changed_at)[:10])] for r in changed.itertuples(index=False)],
    )

    absent = _sorted(audit.bucket("tokens_absent"))
    lines += ["", f"## Figure NOT on cited page — `TOKENS_ABSENT` ({len(absent)})", ""]
    lines += _table(
        ["scope", "where", "claim", "missing", "verified", "url"],
        [
            [md_code(r.scope), _where(r), _claim(r.claim, 100), md_cell(", ".join(json.loads(r.missing)[:6])),
             md_cell(s(r.last_verified)[:10] or "never"), md_link(r.url)]
            for r in absent.itertuples(index=False)
        ],
    )

    binary = int(h["by_prior"].get("SOURCE_BINARY", 0))
    lines += [
        "",
        f"## PDF with no text layer ({h['pdf_no_text']})  ·  Source unavailable ({h['source_unavailable']})"
        f"  ·  Binary source ({binary})",
        "",
        UNAVAILABLE_TEXT,
        "",
        *_table(
            ["scope", "where", "prior", "note", "url"],
            [[md_code(r.scope), _where(r), md_code(r.prior), md_cell(r.fetch_note, 120), md_link(r.url)]
             for r in _sorted(audit.priors[audit.priors["prior"].isin(UNREADABLE_PRIORS)]).itertuples(index=False)],
        ),
        "",
        ACTION,
        "",
    ]
    return "\n".join(lines)
