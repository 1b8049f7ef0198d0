"""report.html: a self-contained page for people (inline CSS and SVG, no JS, no external assets), rendered from
templates/report.html.j2 in the project's HTML environment (html_templates: autoescaped, the whole page's text
neutralised). The same sections as report.md (report/sections.py)."""

from __future__ import annotations

from claims_pipeline.priors import PRIOR_KINDS
from claims_pipeline.report.audit import Audit
from claims_pipeline.report.chart import COLOURS, priors_chart
from claims_pipeline.report.history import AuditPoint, history_chart
from claims_pipeline.report.html_templates import render
from claims_pipeline.report.sections import (
    BY_SCOPE_NOTE,
    CARDS_MAX,
    LISTED_MAX,
    by_source_tier,
    changed_page_count,
    changed_pages,
    counts_by_scope,
    sorted_rows,
    unreadable_labels,
)

UNREADABLE = ["SOURCE_UNAVAILABLE", "PDF_NO_TEXT", "SOURCE_BINARY"]


def render_html(audit: Audit, previous_run: str | None = None, history: list[AuditPoint] | None = None) -> str:
    """history: the last audits, this one last (report/history.py); none: the section is left out."""
    hd = audit.headline
    stale = sorted_rows(audit.bucket("stale_changed"))
    absent = sorted_rows(audit.bucket("tokens_absent"))
    weak = sorted_rows(audit.bucket("weak_match"))
    groups = changed_pages(audit)
    unreadable = sorted_rows(audit.priors[audit.priors["prior"].isin(UNREADABLE)])
    cards = [
        ("Claims checked", hd["total"], False),
        ("Flagged", hd["flagged"], hd["flagged"] > 0),
        # each card says what it counts: a stale claim's change may have been shown by an earlier report, and the
        # changed-page cards count pages (new in this report, shown before) where the others count claims
        ("Claims stale: page changed after their Last verified", hd["stale_changed"], hd["stale_changed"] > 0),
        ("Claims whose figure is absent", hd["tokens_absent"], hd["tokens_absent"] > 0),
        ("Claims on a page changed since the last report", hd["content_changed"], False),
        ("Pages changed since the last report", changed_page_count(audit), False),
        ("Pages changed before, shown by an earlier report, claims still stale",
         sum(1 for g in groups if not g.new), False),
        ("Weak match", int(hd["by_prior"].get("WEAK_MATCH", 0)), False),
        ("Source unavailable", hd["source_unavailable"], False),
        ("PDF without text", hd["pdf_no_text"], False),
        ("Binary source", int(hd["by_prior"].get("SOURCE_BINARY", 0)), False),
    ]
    return render(
        "report.html.j2",
        title="Source-content audit",
        run_at=audit.run_at,
        previous_run=previous_run,
        scopes_missing=audit.scopes_missing,
        cards=cards,
        history=history,
        history_chart=history_chart(history) if history else None,
        priors_chart=priors_chart(audit.priors),
        by_prior=sorted(hd["by_prior"].items()),
        colours=COLOURS,
        stale=stale,
        new=[g for g in groups if g.new],
        earlier=[g for g in groups if not g.new],
        absent=absent,
        absent_by_tier=by_source_tier(audit, absent),
        weak=weak,
        weak_counts=counts_by_scope(weak, weak["file"]) if len(weak) > LISTED_MAX else [],
        unreadable=unreadable,
        unreadable_counts=(counts_by_scope(unreadable, unreadable_labels(unreadable))
                           if len(unreadable) > LISTED_MAX else []),
        cards_max=CARDS_MAX,
        by_scope_note=BY_SCOPE_NOTE,
        prior_kinds=PRIOR_KINDS,
    )
