"""Short markdown views of one audit for the Dagster UI's metadata, and per-scope figures for its asset checks.
Pure (no Dagster import): strings and plain dicts. Every cell is escaped (report/md_tables.py): pages and
claims are hostile input."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from claims_pipeline.priors import TOKENS_ABSENT, WEAK_MATCH
from claims_pipeline.report.audit import Audit
from claims_pipeline.report.escape import md_code
from claims_pipeline.report.md_tables import Link, breakable, markdown_table, md_cell, prose, where
from claims_pipeline.report.sections import changed_page_count, plural, sorted_rows, table_rows, utc_time

CLAIM_LIMIT = 70  # characters of a claim in a UI table; the report has it whole
URL_LIMIT = 48
# the order a reviewer triages in (the report's Action line)
FLAG_ORDER = ("stale_changed", TOKENS_ABSENT, "CONTENT_CHANGED", WEAK_MATCH)


def headline_markdown(audit: Audit) -> str:
    """The headline numbers as a two-column markdown table."""
    h = audit.headline
    by_prior = " · ".join(f"{k} {int(v)}" for k, v in sorted(h["by_prior"].items())) or "none"
    scopes = str(len(audit.audited_scopes()))
    if audit.scopes_missing:
        scopes += f" ({len(audit.scopes_missing)} more in the corpus, not in this audit)"
    rows = [
        ["claims", h["total"]],
        ["flagged", h["flagged"]],
        ["TOKENS_ABSENT", h["tokens_absent"]],
        ["CONTENT_CHANGED pages", f"{changed_page_count(audit)} ({plural(h['content_changed'], 'claim')})"],
        ["stale_changed", h["stale_changed"]],
        ["WEAK_MATCH", int(h["by_prior"].get(WEAK_MATCH, 0))],
        ["by prior", by_prior],
        ["scopes", scopes],
        ["run", utc_time(audit.run_at)],
    ]
    # the by-prior line whole (it wraps at its ' · '): a cut one hid the last kinds of prior
    return markdown_table(["figure", "value"], ([md_cell(v, 400) for v in r] for r in rows), max_rows=len(rows),
                          escaped=True)


def _flag_of(row: Any) -> str:
    if row.stale_changed:
        return "stale_changed"
    if row.prior == TOKENS_ABSENT:
        return TOKENS_ABSENT
    if row.content_changed:
        return "CONTENT_CHANGED"
    return WEAK_MATCH


def flagged_rows(audit: Audit) -> pd.DataFrame:
    """Claims a reviewer looks at, each once, in triage order: stale_changed, TOKENS_ABSENT, the other claims on
    a changed page (flagged too), then WEAK_MATCH; within each by scope, file, line."""
    p = audit.priors
    picked = sorted_rows(p[p["stale_changed"] | p["content_changed"] | p["prior"].isin([TOKENS_ABSENT, WEAK_MATCH])])
    picked = picked.assign(flag=[_flag_of(r) for r in table_rows(picked)])
    order = {f: i for i, f in enumerate(FLAG_ORDER)}
    return picked.sort_values("flag", key=lambda col: col.map(order), kind="stable")


def flagged_claims_markdown(audit: Audit, limit: int = 25, *, weak_match: bool = False) -> str:
    """The flagged claims (stale_changed, TOKENS_ABSENT, the other claims on a changed page: as many rows as the
    headline's flagged) as a markdown table (flag, file:line, claim shortened and the figures missing, url cut to
    fit: four columns fit a narrow cell),
    at most `limit` rows, then a line saying how many more rows the full report has. `weak_match`: the
    WEAK_MATCH claims instead, which are not flagged (figures only partly on the page)."""
    picked = flagged_rows(audit)
    picked = picked[(picked["flag"] == WEAK_MATCH) == weak_match]
    rows = [
        [md_code(r.flag), breakable(md_cell(where(r.file, r.line_no), 48)), md_cell(prose(r.claim), CLAIM_LIMIT)
         + (f" — **missing:** {md_cell(', '.join(missing[:6]), 40)}" if (missing := json.loads(r.missing)) else ""),
         Link(r.url)]
        for r in table_rows(picked)
    ]
    shown = rows[:max(0, limit)]
    if rows and not shown:
        return f"_{len(rows)} rows in the full report (report.md, report.html)_"
    table = markdown_table(["flag", "file:line", "claim (and the figures missing)", "url"], shown,
                           max_rows=len(shown), url_limit=URL_LIMIT, escaped=True)
    if not rows or len(shown) == len(rows):
        return table
    return f"{table}\n\n_…and {len(rows) - len(shown)} more rows in the full report (report.md, report.html)_"


def scope_status_rows(audit: Audit) -> list[dict[str, Any]]:
    """Per audited scope (those without claims too): claims, flagged, stale_changed, tokens_absent, weak_match and
    changed_pages (distinct pages whose change this report shows), as plain ints. Counted by one group-by each,
    not one scan of the table per scope (1,000 scopes of 100k claims)."""
    p = audit.priors
    scope = p["scope"]
    flagged = p[(p["prior"] == TOKENS_ABSENT) | p["content_changed"]].drop_duplicates(subset=["file", "line_no", "url"])
    columns = {
        "claims": scope.value_counts(),
        "flagged": flagged["scope"].value_counts(),
        "stale_changed": p["stale_changed"].groupby(scope).sum(),
        "tokens_absent": (p["prior"] == TOKENS_ABSENT).groupby(scope).sum(),
        "weak_match": (p["prior"] == WEAK_MATCH).groupby(scope).sum(),
        "changed_pages": p.loc[p["content_changed"]].groupby("scope")["url"].nunique(),
    }
    counts = {name: {str(k): int(v) for k, v in col.items()} for name, col in columns.items()}
    return [{"scope": s, **{name: by.get(s, 0) for name, by in counts.items()}} for s in audit.audited_scopes()]


VERDICT_ORDER = ("MISMATCH", "STALE", "NOT_FOUND", "INDETERMINATE", "PARTIAL", "SOURCE_UNAVAILABLE", "MATCH")
QUOTE_LIMIT = 120


def verdicts_markdown(verdicts: list[Any], kinds: tuple[str, ...], limit: int = 25) -> str:
    """The verdicts of these kinds (MISMATCH first) as a table: verdict, file:line, the claim shortened, the quote
    of the page that backs the verdict (cut; verdicts.md has it whole, with the url); at most `limit` rows, then
    how many more verdicts.md lists. Duck-typed on the judge's Verdict (scope, file, line_no, claim_text, quote, note,
    source_url), so this module stays free of the judge."""
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    picked = sorted((v for v in verdicts if v.verdict in kinds),
                    key=lambda v: (rank.get(v.verdict, 99), v.scope, v.file, v.line_no))
    rows = [[md_code(v.verdict), breakable(md_cell(where(v.file or v.scope, v.line_no), 48)), md_cell(prose(v.claim_text), 60),
             md_cell(v.quote or (f"({v.note})" if v.note else ""), QUOTE_LIMIT)]
            for v in picked]
    shown = rows[:max(0, limit)]
    table = markdown_table(["verdict", "file:line", "claim", "the page says (quote)"], shown,
                           max_rows=len(shown), url_limit=URL_LIMIT, escaped=True)
    if len(shown) < len(rows):
        table += f"\n\n_…and {len(rows) - len(shown)} more in verdicts.md / verdicts.html_"
    return table
