"""report.html: a self-contained page for people (inline CSS and SVG, no JS, no external assets).

Everything from a fetched page or the corpus goes through html.escape (``h``); links are emitted only for
http(s) URLs. Excerpts highlight the matched figure at the offsets the prior recorded. The same sections as
report.md (report/sections.py): a changed page's diff once, above the claims citing it; times in UTC.
"""

from __future__ import annotations

import json
from typing import Any

from claims_pipeline.priors import PRIOR_KINDS
from claims_pipeline.report.chart import COLOURS, priors_by_scope_svg
from claims_pipeline.report.escape import claim_plain, h, link_html, s, url_html
from claims_pipeline.report.history import AuditPoint, history_html
from claims_pipeline.report.sections import (
    BY_SCOPE_NOTE,
    CARDS_MAX,
    LISTED_MAX,
    ChangedPage,
    ScopeCount,
    by_source_tier,
    change_note,
    changed_page_count,
    changed_pages,
    counts_by_scope,
    pages_and_claims,
    plural,
    sorted_rows,
    table_rows,
    unreadable_labels,
    utc_time,
)
from claims_pipeline.steps.audit.build import Audit

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2430}
main{max-width:1080px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:32px 0 12px;border-bottom:1px solid #dde1e7;padding-bottom:4px}
.meta{color:#5b6574;font-size:13px}.note{background:#fff8e1;border-left:4px solid #f9a825;padding:8px 12px;margin:12px 0}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:10px 14px;min-width:120px}
.card b{display:block;font-size:26px}.card span{color:#5b6574;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card.alert b{color:#c62828}
.claim{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:12px 16px;margin:12px 0}
.claim.stale{border-left:5px solid #c62828}.claim .where{font-size:13px;color:#5b6574}
.claim blockquote{margin:8px 0;padding:4px 12px;border-left:3px solid #b0bac8;color:#2b3442}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;color:#fff;font-weight:600}
.excerpt{background:#f3f5f8;border-radius:6px;padding:8px 10px;margin:6px 0;font-size:14px;white-space:pre-wrap}
mark{background:#ffe066;padding:0 2px;border-radius:2px}
pre.diff{background:#111827;color:#e5e7eb;padding:10px;border-radius:6px;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;font-size:12.5px;max-height:340px}
pre.diff .add{color:#86efac}pre.diff .del{color:#fca5a5}pre.diff .hunk{color:#93c5fd}
table{border-collapse:collapse;background:#fff;width:100%;font-size:14px}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:left;vertical-align:top}
.url{overflow-wrap:break-word;color:#5b6574}a{color:#1565c0;overflow-wrap:break-word}
.page{background:#fff;border:1px solid #dde1e7;border-left:5px solid #ef6c00;border-radius:8px;padding:12px 16px;margin:12px 0}
.page.earlier{border-left-color:#b0bac8}.page table{margin-top:8px}.page td:nth-child(3){width:45%}
.chart{max-width:100%;height:auto;background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:8px}
"""


def _badge(prior: str) -> str:
    colour = COLOURS.get(prior, "#455a64")
    return f'<span class="badge" style="background:{colour}">{h(prior)}</span>'


def _highlighted(excerpt: str, spans: list[tuple[int, int]]) -> str:
    """The excerpt escaped, with each (start, end) span wrapped in <mark>."""
    out, pos = [], 0
    for start, end in sorted(set(spans)):
        if start < pos or end > len(excerpt) or start >= end:
            continue  # overlapping or out of range: leave as text
        out.append(h(excerpt[pos:start]))
        out.append(f"<mark>{h(excerpt[start:end])}</mark>")
        pos = end
    out.append(h(excerpt[pos:]))
    return "".join(out)


def _excerpts_html(row: Any) -> str:
    excerpts: list[str] = json.loads(row.excerpts)
    hits: list[dict[str, Any]] = json.loads(row.hits)
    spans: dict[int, list[tuple[int, int]]] = {}
    for hit in hits:
        i, s, e = hit.get("excerpt_index"), hit.get("excerpt_start"), hit.get("excerpt_end")
        if isinstance(i, int) and isinstance(s, int) and isinstance(e, int):
            spans.setdefault(i, []).append((s, e))
    return "".join(f'<div class="excerpt">{_highlighted(x, spans.get(i, []))}</div>' for i, x in enumerate(excerpts))


def _diff_html(diff: str | None) -> str:
    if not diff:
        return ""
    lines = []
    for line in str(diff).splitlines():
        cls = "add" if line.startswith("+") else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else ""
        lines.append(f'<span class="{cls}">{h(line)}</span>' if cls else h(line))
    return '<details open><summary>What changed on the page</summary><pre class="diff">' + "\n".join(lines) + "</pre></details>"


def _page_group(group: ChangedPage) -> str:
    """One changed page: its link, times, diff (once), and the claims citing it."""
    bits = [
        f'<section class="page{"" if group.new else " earlier"}">',
        f"<div>{link_html(group.url)}</div>",
        f'<div class="meta">changed {h(utc_time(group.changed_at) or "at an unknown time")} · {h(group.note)} · '
        f"cited by {h(plural(len(group.claims), 'claim'))}</div>",
        _diff_html(group.diff) or "<p>(no diff stored)</p>",
        "<table><tr><th>scope</th><th>where</th><th>claim</th><th>prior</th><th>verified</th><th>stale_changed</th></tr>",
    ]
    bits += [
        f"<tr><td><code>{url_html(r.scope)}</code></td><td>{url_html(s(r.file))}:{int(r.line_no)}</td><td>{h(claim_plain(r.claim))}</td>"
        f"<td>{_badge(r.prior)}</td><td>{h(s(r.last_verified)[:10] or 'never')}</td><td>{'yes' if r.stale_changed else 'no'}</td></tr>"
        for r in group.claims
    ]
    bits.append("</table></section>")
    return "".join(bits)


def _claim_card(row: Any, *, stale: bool) -> str:
    missing = json.loads(row.missing)
    matched = json.loads(row.matched)
    bits = [
        f'<article class="claim{" stale" if stale else ""}">',
        f'<div class="where"><code>{h(row.scope)}</code> · {h(s(row.file))}:{int(row.line_no)} · {h(s(row.section))}</div>',
        f"<blockquote>{h(claim_plain(row.claim))}</blockquote>",
        f"<div>{_badge(row.prior)}",
    ]
    if row.content_changed or s(row.changed_at):
        bits.append(f" · page changed {h(utc_time(row.changed_at))}")
    if stale:
        bits.append(f" · {h(change_note(row))}")
    bits.append(f" · last verified {h(s(row.last_verified) or 'never')}")
    bits.append("</div>")
    if missing:
        bits.append(f"<div>Missing: {h(', '.join(missing))}</div>")
    if matched:
        bits.append(f"<div>Found: {h(', '.join(matched))}</div>")
    if s(row.fetch_note):
        bits.append(f'<div class="meta">{h(row.fetch_note)}</div>')
    bits.append(_excerpts_html(row))  # the page's diff is shown once, in its changed-page section
    bits.append(f"<div>Source: {link_html(row.url)}</div>")
    bits.append("</article>")
    return "".join(bits)


def _claim_rows(rows: Any, *, stale: bool) -> str:
    """Claims as table rows instead of cards (a section past CARDS_MAX): every claim still listed, in full, without
    its excerpts; a changed page's diff is in its own section."""
    extra = "<th>changed (UTC)</th><th>change shown</th>" if stale else "<th>prior</th><th>missing</th>"
    bits = ["<table><tr><th>scope</th><th>where</th><th>claim</th><th>verified</th>" + extra + "<th>source</th></tr>"]
    for r in table_rows(rows):
        cells = (f"<td>{h(utc_time(r.changed_at))}</td><td>{h(change_note(r))}</td>" if stale
                 else f"<td>{_badge(r.prior)}</td><td>{h(', '.join(json.loads(r.missing)))}</td>")
        bits.append(f"<tr><td><code>{url_html(r.scope)}</code></td><td>{url_html(s(r.file))}:{int(r.line_no)}</td>"
                    f"<td>{h(claim_plain(r.claim))}</td><td>{h(s(r.last_verified)[:10] or 'never')}</td>{cells}"
                    f"<td>{link_html(r.url)}</td></tr>")
    bits.append("</table>")
    return "\n".join(bits)


def _claims(rows: Any, *, stale: bool) -> list[str]:
    if not len(rows):
        return ["<p>None.</p>"]
    if len(rows) > CARDS_MAX:
        return [_claim_rows(rows, stale=stale)]
    return [_claim_card(r, stale=stale) for r in table_rows(rows)]


def _by_scope(counts: list[ScopeCount], n: int, what: str) -> str:
    """A section too long to list: its claims counted by scope, with the most frequent labels."""
    bits = [f"<p>{h(BY_SCOPE_NOTE.format(n=n, what=what))}</p>",
            f"<table><tr><th>scope</th><th>claims</th><th>most frequent {h(what)}</th></tr>"]
    bits += [f"<tr><td><code>{url_html(c.scope)}</code></td><td>{c.claims}</td>"
             f"<td>{h(c.top_text)}</td></tr>"
             for c in counts]
    bits.append("</table>")
    return "\n".join(bits)


def render_html(audit: Audit, previous_run: str | None = None, history: list[AuditPoint] | None = None) -> str:
    """history: the last audits, this one last (report/history.py); none: the section is left out."""
    hd = audit.headline
    stale = sorted_rows(audit.bucket("stale_changed"))
    absent = sorted_rows(audit.bucket("tokens_absent"))
    weak = sorted_rows(audit.bucket("weak_match"))
    groups = changed_pages(audit)
    new, earlier = [g for g in groups if g.new], [g for g in groups if not g.new]
    unreadable = sorted_rows(audit.priors[audit.priors["prior"].isin(["SOURCE_UNAVAILABLE", "PDF_NO_TEXT", "SOURCE_BINARY"])])
    cards = [
        ("Claims checked", hd["total"], False),
        ("Flagged", hd["flagged"], hd["flagged"] > 0),
        ("Stale after verify", hd["stale_changed"], hd["stale_changed"] > 0),
        ("Figure absent", hd["tokens_absent"], hd["tokens_absent"] > 0),
        ("On a changed page", hd["content_changed"], False),
        ("Changed pages", changed_page_count(audit), False),
        ("Weak match", int(hd["by_prior"].get("WEAK_MATCH", 0)), False),
        ("Source unavailable", hd["source_unavailable"], False),
        ("PDF without text", hd["pdf_no_text"], False),
        ("Binary source", int(hd["by_prior"].get("SOURCE_BINARY", 0)), False),
    ]
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        "<title>Source-content audit</title><style>" + CSS + "</style></head><body><main>",
        "<h1>Source-content audit</h1>",
        f'<div class="meta">Run {h(utc_time(audit.run_at))} · previous run {h(utc_time(previous_run) or "(none)")}</div>',
        '<div class="note"><b>These are tripwires, not verdicts.</b> A figure reported absent may be on the page in '
        "a form the matcher does not read; re-read the cited page before editing anything.</div>",
        *([f'<div class="note"><b>{len(audit.scopes_missing)} scope(s) of the corpus are not in this audit</b> '
            f'(never materialized): {h(", ".join(audit.scopes_missing))}. The numbers below leave them out.</div>']
          if audit.scopes_missing else []),
        '<section class="cards">',
        *(f'<div class="card{" alert" if alert else ""}"><b>{int(n)}</b><span>{h(label)}</span></div>' for label, n, alert in cards),
        "</section>",
        *([f"<h2>Over time{f': the last {len(history)} audits' if len(history) > 1 else ''}</h2>",
           history_html(history)] if history else []),
        "<h2>Priors by scope</h2>",
        priors_by_scope_svg(audit.priors),
        "<table><tr><th>prior</th><th>claims</th></tr>",
        *(f"<tr><td>{_badge(k)}</td><td>{int(v)}</td></tr>" for k, v in sorted(hd["by_prior"].items())),
        "</table>",
        f"<h2>Re-verify first: source changed after its Last verified date ({len(stale)})</h2>",
    ]
    parts += _claims(stale, stale=True)
    parts.append(f"<h2>Cited page CHANGED ({h(pages_and_claims(new))})</h2>")
    parts += [_page_group(g) for g in new] or ["<p>None.</p>"]
    if earlier:
        parts.append(f"<h2>Changed before, shown by an earlier report: claims still stale ({h(pages_and_claims(earlier))})</h2>")
        parts += [_page_group(g) for g in earlier]
    parts.append(f"<h2>Figure not on cited page: TOKENS_ABSENT ({len(absent)})</h2>")
    for title, rows in by_source_tier(audit, absent):
        parts += [f"<h3>{h(title)} ({len(rows)})</h3>"] if title else []
        parts += _claims(rows, stale=False)
    parts.append(f"<h2>Figures only partly on cited page: WEAK_MATCH ({len(weak)})</h2>")
    if len(weak) > LISTED_MAX:
        parts.append(_by_scope(counts_by_scope(weak, weak["file"]), len(weak), "files"))
    else:
        parts += _claims(weak, stale=False)
    parts.append(f"<h2>Not readable: unavailable, binary or scanned sources ({len(unreadable)})</h2>")
    if len(unreadable) > LISTED_MAX:
        parts.append(_by_scope(counts_by_scope(unreadable, unreadable_labels(unreadable)), len(unreadable), "notes"))
    elif len(unreadable):
        parts.append("<table><tr><th>scope</th><th>where</th><th>prior</th><th>note</th><th>source</th></tr>")
        parts += [
            f"<tr><td><code>{url_html(r.scope)}</code></td><td>{url_html(s(r.file))}:{int(r.line_no)}</td><td>{_badge(r.prior)}</td>"
            f"<td>{h(s(r.fetch_note))}</td><td>{link_html(r.url)}</td></tr>"
            for r in table_rows(unreadable)
        ]
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")
    parts.append(f'<p class="meta">Prior kinds: {h(", ".join(PRIOR_KINDS))}.</p></main></body></html>')
    return "\n".join(parts)
