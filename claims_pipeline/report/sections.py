"""What the renderings of one audit show, computed once: report.md, report.html and report.json carry the same
content (the changed pages with their claims, the change notes, the times) because they take it from here."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from claims_pipeline.report.audit import Audit
from claims_pipeline.report.escape import cell_text


def table_rows(df: pd.DataFrame) -> Iterator[Any]:
    """df.itertuples(index=False): a namedtuple per row, its fields typed by the audit table's columns (which
    pandas-stubs cannot know: it types every field as any scalar)."""
    return df.itertuples(index=False)


def json_list(text: str) -> list[Any]:
    """A table's JSON list cell (missing, matched): json.loads, with no parse for the empty list most claims have
    (100k claims: a second of the report step)."""
    return [] if text == "[]" else json.loads(text)


def utc_time(value: object) -> str:
    """An ISO time as 'YYYY-MM-DD HH:MM:SS UTC' (to the second, a naive one taken as UTC); '' for none, and a
    value that is no ISO time as it is (the renderers escape it)."""
    text = cell_text(value).strip()
    if not text:
        return ""
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return text
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def sorted_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["scope", "file", "line_no", "url"], kind="stable")


def reported_at(row: object) -> str:
    """When an earlier report showed the change of a stale claim's page ('' when unknown: an older table)."""
    return cell_text(getattr(row, "change_reported_at", None))


def change_note(row: Any) -> str:
    """Where a stale_changed claim's page change is shown: this report, or the earlier one that showed it, so a
    CONTENT_CHANGED count that leaves the page out does not read as a contradiction."""
    if row.content_changed:
        return "shown in this report"
    when = reported_at(row)
    return f"change reported on {utc_time(when)}" if when else "change reported in an earlier report"


def unconfirmed_note(row: Any) -> str:
    """Beside a figure's state checked on a page text seen for the first time: the page changed and its change is
    not confirmed yet (it is, and is reported, on the next sighting); '' otherwise (and for an older table)."""
    since = cell_text(getattr(row, "unconfirmed_since", None))
    return f"the page changed on {utc_time(since)[:10]}; not confirmed yet" if since else ""


@dataclass(frozen=True)
class ChangedPage:
    """A changed page with every flagged claim citing it: its diff is shown once, above them."""

    url: str
    new: bool  # this report shows the change first (CONTENT_CHANGED); else an earlier report did
    changed_at: str
    reported_at: str  # when an earlier report showed it ('' when new, or not known)
    diff: str
    claims: list[Any]  # priors rows (table_rows): every claim citing it (new), or the stale_changed ones (shown earlier)

    @property
    def note(self) -> str:
        """Where its change is shown: this report, or the earlier one that showed it (change_note, for a page)."""
        if self.reported_at:
            return f"change reported on {utc_time(self.reported_at)}"
        return "shown in this report" if self.new else "change reported in an earlier report"


def changed_pages(audit: Audit) -> list[ChangedPage]:
    """Pages whose change this report shows, then pages an earlier report showed that stale_changed claims still
    cite; each with its claims (priors rows, in sorted_rows' order), in url order."""
    p = audit.priors
    rows = p[(p["content_changed"] | p["stale_changed"]) & p["url"].notna()]
    # one stable sort by url then sorted_rows' keys, split where the url changes: the same groups and order as a
    # group-by url with a sort per page, in one pass (a sort per page grows with the changed pages)
    rows = rows.sort_values(["url", "scope", "file", "line_no"], kind="stable")
    out: list[ChangedPage] = []
    group: list[Any] = []
    for r in table_rows(rows):
        if group and r.url != group[0].url:
            out.append(_changed_page(group))
            group = []
        group.append(r)
    if group:
        out.append(_changed_page(group))
    return sorted(out, key=lambda g: (not g.new, g.url))


def _changed_page(group: list[Any]) -> ChangedPage:
    new = any(bool(r.content_changed) for r in group)
    diff = next((cell_text(r.diff) for r in group if cell_text(r.diff)), "")
    when = "" if new else next((reported_at(r) for r in group if reported_at(r)), "")
    return ChangedPage(str(group[0].url), new, cell_text(group[0].changed_at), when, diff, group)


def changed_page_count(audit: Audit) -> int:
    """Distinct pages whose change this report shows (the headline's content_changed counts claims)."""
    return int(audit.bucket("content_changed")["url"].nunique())


# A large audit's report stays readable, and report.html a few MB (100k claims: docs/scale.md): every flagged
# claim is still listed, but past CARDS_MAX in a section as a table row rather than a card with its excerpts,
# and past LISTED_MAX the claims that are not flags (WEAK_MATCH, unreadable sources) are counted by scope. A
# small audit's report (the demo's, a real corpus of ~1,000 claims) is unchanged. report.json and
# priors.parquet beside the report keep every claim.
CARDS_MAX = 300
LISTED_MAX = 500
BY_SCOPE_NOTE = ("Too many to list ({n}): counted by scope, with the most frequent {what}. Every claim is in "
                 "report.json and priors.parquet beside this report.")


@dataclass(frozen=True)
class ScopeCount:
    """One scope's rows of a section that is counted rather than listed, with its most frequent labels."""

    scope: str
    claims: int
    top: list[tuple[str, int]]  # (label, how many), at most three, most frequent first

    @property
    def top_text(self) -> str:
        return "; ".join(f"{label or '(none)'} ×{n}" for label, n in self.top)


def counts_by_scope(rows: pd.DataFrame, labels: pd.Series) -> list[ScopeCount]:
    """Rows of one section per scope (scope order; a row without a scope is left out), each with its three most
    frequent labels (a file, a note), equally frequent ones in the order of the rows. Counted in one pass: a
    group-by with a value_counts per scope costs a frame per scope (1,000 scopes at 100k claims)."""
    by_scope: dict[str, Counter[str]] = {}
    for scope, label in zip(rows["scope"].astype(str).tolist(), labels.fillna("").astype(str).tolist(), strict=True):
        if isinstance(scope, str):  # astype(str) keeps a missing scope missing
            by_scope.setdefault(scope, Counter())[label] += 1
    return [ScopeCount(scope, counts.total(), counts.most_common(3))
            for scope, counts in sorted(by_scope.items())]


def unreadable_labels(rows: pd.DataFrame) -> pd.Series:
    """'PRIOR: note' per row, what an unreadable source's count is broken down by."""
    return rows["prior"].astype(str) + ": " + rows["fetch_note"].fillna("").astype(str).str.slice(0, 80)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def pages_and_claims(groups: list[ChangedPage]) -> str:
    """'1 page · 2 claims' for a section heading."""
    return f"{plural(len(groups), 'page')} · {plural(sum(len(g.claims) for g in groups), 'claim')}"


# The report's grouping by source tier: a figure absent from an official page comes first; from a secondary source
# or the project's own page it is listed apart, under its own heading (a lead, not a finding). A corpus citing only
# official sources gets one group without a heading: a heading over the only group would say nothing.
TIER_GROUPS = (("official", "From official sources"),
               ("secondary", "From secondary sources: a lead to check against an official page, not a finding"),
               ("own", "From the project's own pages: the figure is only checked against another copy of itself"))


def by_source_tier(audit: Audit, rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(heading, rows) per tier present, official first; one group with no heading when every row is official."""
    tier_of = dict(zip(audit.claims["id"], audit.claims["source_tier"])) if "source_tier" in audit.claims else {}
    group = rows["claim_id"].map(lambda i: {"secondary": "secondary", "own": "own"}.get(tier_of.get(i, ""), "official"))
    if len(rows) == 0 or (group == "official").all():
        return [("", rows)]
    return [(title, rows[group == name]) for name, title in TIER_GROUPS if (group == name).any()]
