"""The audit: claims, pages and priors as tables, and the headline numbers computed from them.

Two independent computations of the headline numbers exist on purpose: ``build_audit`` counts its buckets
while walking the records, and ``headline_numbers`` recomputes them from the three tables alone (joining claims
to pages by URL). The blocking asset check compares the two: a mismatch is an engine bug, not a finding.

Rules:
- content_changed (per claim) = its page's PageState.content_changed: a confirmed change no written report showed
  yet, whichever fetch confirmed it (combine_scopes sets it from the ledger, store/recent_changes.py).
- stale_changed (per claim) = the page has a confirmed change (changed_at set) dated AFTER the claim's
  last_verified date (inline stamp, else the file footer); a claim without a usable last_verified is
  stale_changed when its page's change is content_changed. A claim verified on or after the change day is not.
- flagged = DISTINCT (file, line_no, url) over TOKENS_ABSENT ∪ content_changed (the reference key
  (scope, line_no, url) with the file added, docs/decisions/0001: several files may share a scope, countries/fr/**.md).
- unconfirmed_since (per page and claim) = the page's text read by this audit is new and its change is not
  confirmed yet (PageState.unconfirmed_since): the prior is computed on that text, and the report says so beside
  the figure's state; content_changed, stale_changed and the change's report wait for the confirmation.
- change_reported_at (per claim) = when a stale_changed claim's page change is not content_changed (a written
  report showed it), the run_at of that report, from the ledger; the report says "change reported on <date>"
  beside a CONTENT_CHANGED count that leaves that page out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Any

import pandas as pd

from claims_pipeline.corpus.records import ClaimRecord, Value
from claims_pipeline.priors import (
    PDF_NO_TEXT,
    SOURCE_BINARY,
    SOURCE_UNAVAILABLE,
    TOKENS_ABSENT,
    WEAK_MATCH,
    Hit,
    Prior,
    PriorRules,
)
from claims_pipeline.store.recent_changes import ReportedChanges
from claims_pipeline.store.records import PageState

CLAIM_COLUMNS = [
    "id", "scope", "section", "line_no", "file", "claim_text", "source_url", "source_host", "source_tier",
    "link_kind", "last_verified", "last_verified_origin", "stamp_date", "stamp_kind", "values",
]
PAGE_COLUMNS = [
    "url", "fetch_status", "http_status", "content_kind", "note", "fetched_at", "text_hash", "raw_hash",
    "text_chars", "content_changed", "changed_at", "stable_since", "diff", "change_reported_at", "unconfirmed_since",
]
PRIOR_COLUMNS = [
    "claim_id", "scope", "line_no", "file", "section", "url", "claim", "last_verified", "last_verified_origin",
    "prior", "matched", "strong_matched", "missing", "excerpts", "hits", "fetch_note", "fetch_status",
    "content_changed", "changed_at", "stale_changed", "diff", "change_reported_at", "unconfirmed_since",
]
HEADLINE_KEYS = [
    "total", "by_prior", "tokens_absent", "content_changed", "stale_changed", "pdf_no_text",
    "source_unavailable", "flagged",
]


def _parse_day(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def is_stale_changed(last_verified: str | None, changed_at: str | None, content_changed: bool) -> bool:
    """A confirmed page change after the claim was last verified (see module doc)."""
    if not changed_at:
        return False
    verified = _parse_day(last_verified)
    if verified is None:
        return bool(content_changed)
    changed = _parse_day(changed_at)
    return changed is not None and changed > verified


def newest_page_states(by_scope: dict[str, dict[str, PageState]]) -> dict[str, PageState]:
    """One state per URL from the scopes' own snapshots: the most recently fetched. Scopes are refreshed one
    at a time (a one-country run, the corpus sensor), so two scopes citing one page can hold states of two
    different fetches; the older one must not hide a change the newer one confirmed."""
    out: dict[str, PageState] = {}
    for scope in sorted(by_scope):
        for url, page in by_scope[scope].items():
            known = out.get(url)
            if known is None or (page.fetched_at or "", page.content_changed) > (known.fetched_at or "", known.content_changed):
                out[url] = page
    return out


def combined_pages(pages_by_scope: dict[str, dict[str, PageState]], current: dict[str, PageState],
                   keys: dict[str, str], reported: ReportedChanges) -> dict[str, PageState]:
    """Per cited URL the page's state is `current` (the page cache's now: it holds every fetch, another scope's
    run or `claims-pipeline fetch` included), else the newest snapshot (newest_page_states; a page the cache does
    not hold has no change this cache confirmed); its CONTENT_CHANGED says whether no written report showed its
    change yet (store/recent_changes.py, `reported`, ledger keys `keys`)."""
    from dataclasses import replace

    from claims_pipeline.store.recent_changes import mark_unreported

    # a snapshot the cache's state replaces keeps only its place in the order
    snapshots = {u: p if u in current else replace(p, content_changed=False)
                 for u, p in newest_page_states(pages_by_scope).items()}
    return {**snapshots, **mark_unreported(current, keys, reported)}


def read_again(own: PageState | None, newest: PageState | None) -> bool:
    """Is a claim read again on the newest state of its page? When its scope held another state of it (another
    text, or a failed fetch), or none."""
    return newest is not None and (own is None or own.text_hash != newest.text_hash
                                   or own.fetch_status != newest.fetch_status)


def combine_scopes(
    claims_by_scope: dict[str, list[dict[str, Any]]],
    pages_by_scope: dict[str, dict[str, PageState]],
    current: dict[str, PageState],
    prior_of: dict[str, dict[str, Any]],
    rules: PriorRules,
    reported: ReportedChanges,
    keys: dict[str, str],
) -> tuple[dict[str, PageState], dict[str, dict[str, Any]], int]:
    """The scopes' own snapshots as one audit's input: the pages (combined_pages), and the claims whose scope
    held another state of their page read again on it (read_again). Claims and priors are the stored values
    (ClaimRecord.to_dict, Prior.to_dict): only a claim read again becomes a record, for build_prior; `prior_of`
    is left as it is. Returns (pages, priors, how many claims were read again)."""
    from claims_pipeline.priors import build_prior

    pages = combined_pages(pages_by_scope, current, keys, reported)
    priors, reread = prior_of, 0
    for scope, claims in claims_by_scope.items():
        own = pages_by_scope.get(scope, {})
        for c in claims:
            newest = pages.get(c["source_url"])
            if read_again(own.get(c["source_url"]), newest):
                if reread == 0:
                    priors = dict(prior_of)
                priors[c["id"]] = build_prior(ClaimRecord.from_dict(c), newest, rules).to_dict()
                reread += 1
    return pages, priors, reread


_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(x, ensure_ascii=False), without an encoder per call


def _json(x: Any) -> str:
    if isinstance(x, list) and not x:
        return "[]"  # many claims' missing, strong_matched or hits: no encoder call
    return _ENCODER.encode(x)


# The stored values' keys in the order Value.to_dict and Hit.to_dict write them: a stored list whose every item
# has them is written to the tables as it is (the usual case); any other shape (an older version's) goes through
# the record, so the tables read as the records' to_dict would.
_VALUE_KEYS = tuple(f.name for f in fields(Value))
_HIT_KEYS = tuple(f.name for f in fields(Hit))


def _values_json(values: list[dict[str, Any]]) -> str:
    if all(tuple(v) == _VALUE_KEYS for v in values):
        return _json(values)
    return _json([Value.from_dict(v).to_dict() for v in values])


def _hits_json(hits: list[dict[str, Any]]) -> str:
    if all(tuple(h) == _HIT_KEYS for h in hits):
        return _json(hits)
    return _json([Hit(**h).to_dict() for h in hits])


@dataclass
class Audit:
    claims: pd.DataFrame
    pages: pd.DataFrame
    priors: pd.DataFrame
    run_at: str
    headline: dict[str, Any] = field(default_factory=dict)
    # scopes of the corpus with no results in this audit yet (never materialized): the report names them, so
    # "Claims checked: 14" is not read as the whole corpus
    scopes_missing: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)  # the scopes audited, those without claims included
    # the latest change of each page this audit covered (ledger key → confirming fetch id), those it shows, and
    # the page cache it read: recorded in the ledger when its report is written (store/recent_changes.py)
    covered_changes: dict[str, int] = field(default_factory=dict)
    shown_changes: list[str] = field(default_factory=list)
    cache_identity: str = ""

    def audited_scopes(self) -> list[str]:
        return self.scopes or sorted(set(self.claims["scope"]))

    # ---- buckets (views of the priors table) -----------------------------------------------------
    def bucket(self, name: str) -> pd.DataFrame:
        p = self.priors
        if name == "tokens_absent":
            return p[p["prior"] == TOKENS_ABSENT]
        if name == "content_changed":
            return p[p["content_changed"]]
        if name == "stale_changed":
            return p[p["stale_changed"]]
        if name == "pdf_no_text":
            return p[p["prior"] == PDF_NO_TEXT]
        if name == "source_unavailable":
            return p[p["prior"] == SOURCE_UNAVAILABLE]
        if name == "source_binary":
            return p[p["prior"] == SOURCE_BINARY]
        if name == "weak_match":
            return p[p["prior"] == WEAK_MATCH]
        if name == "flagged":
            flagged = p[(p["prior"] == TOKENS_ABSENT) | p["content_changed"]]
            return flagged.drop_duplicates(subset=["file", "line_no", "url"])
        raise KeyError(name)

    # ---- storage -----------------------------------------------------------------------------------
    def to_tables(self) -> dict[str, pd.DataFrame]:
        meta = pd.DataFrame([{"run_at": self.run_at, "headline": _json(self.headline),
                              "scopes_missing": _json(self.scopes_missing), "scopes": _json(self.scopes),
                              "covered_changes": _json(self.covered_changes), "shown_changes": _json(self.shown_changes),
                              "cache_identity": self.cache_identity}])
        return {"claims": self.claims, "pages": self.pages, "priors": self.priors, "meta": meta}

    @classmethod
    def from_tables(
        cls,
        claims: pd.DataFrame,
        pages: pd.DataFrame,
        priors: pd.DataFrame,
        *,
        run_at: str | None = None,
        headline: dict[str, Any] | None = None,
        meta: pd.DataFrame | None = None,
    ) -> Audit:
        """Reload stored tables. The stored headline (meta) is kept as is, never silently recomputed."""
        row = meta.iloc[0] if meta is not None and len(meta) else None

        def stored(name: str, default: Any) -> Any:
            """The meta row's JSON column (absent in tables of an older version, or empty: the default)."""
            return json.loads(row[name]) if row is not None and name in row.index and row[name] else default

        if row is not None:
            run_at = run_at or str(row["run_at"])
            if headline is None:
                headline = json.loads(row["headline"])
        scopes_missing = [str(s) for s in stored("scopes_missing", [])]
        scopes = [str(s) for s in stored("scopes", [])]
        covered = {str(k): int(v) for k, v in stored("covered_changes", {}).items()}
        shown = [str(k) for k in stored("shown_changes", [])]
        identity = str(row["cache_identity"]) if row is not None and "cache_identity" in row.index and row["cache_identity"] else ""
        priors = priors_as_read(priors)
        if "change_reported_at" not in pages.columns:
            pages = pages.assign(change_reported_at=None)
        if "unconfirmed_since" not in priors.columns:  # tables of a version before the column
            priors["unconfirmed_since"] = None
        if "unconfirmed_since" not in pages.columns:
            pages = pages.assign(unconfirmed_since=None)
        return cls(
            claims=claims,
            pages=pages,
            priors=priors,
            run_at=run_at or "",
            headline=headline if headline is not None else headline_numbers(claims, pages, priors),
            scopes_missing=scopes_missing,
            scopes=scopes,
            covered_changes=covered,
            shown_changes=shown,
            cache_identity=identity,
        )


def priors_as_read(priors: pd.DataFrame) -> pd.DataFrame:
    """The stored priors table as an Audit holds it (its flags as bools, columns of older versions added)."""
    priors = priors.copy()
    for col in ("content_changed", "stale_changed"):
        priors[col] = priors[col].astype(bool)
    if "change_reported_at" not in priors.columns:  # tables of a version before the column
        priors["change_reported_at"] = None
    return priors


def _column(values: Any) -> pd.Series:
    """One table column from its Python values, inferred as the frame constructor infers a column (text →
    pandas' string dtype). Built one column at a time, so a 100k-claim table never holds a dict per row, nor
    every column's Python strings at once (each column's strings are freed once converted)."""
    return pd.Series(list(values))


def _frame(columns: dict[str, pd.Series], order: list[str]) -> pd.DataFrame:
    return pd.DataFrame({name: columns[name] for name in order}, columns=order)


# a stored claim's optional keys and their values when absent (ClaimRecord.from_dict's defaults)
_CLAIM_DEFAULTS: dict[str, Any] = {"file": "", "link_kind": "markdown", "last_verified": None,
                                   "last_verified_origin": "none"}


def _claim_column(claims: list[dict[str, Any]], key: str) -> pd.Series:
    """One field of every stored claim as a column (line_no as int, an optional key's default where absent)."""
    if key == "line_no":
        return _column(int(c["line_no"]) for c in claims)
    if key in _CLAIM_DEFAULTS:
        return _column(c.get(key, _CLAIM_DEFAULTS[key]) for c in claims)
    return _column(c[key] for c in claims)


def claims_table(claims: list[dict[str, Any]]) -> pd.DataFrame:
    """The claims table from the claims' stored values (ClaimRecord.to_dict's shape; the defaults are
    ClaimRecord.from_dict's)."""
    def stamp(c: dict[str, Any], key: str) -> Any:
        return c["inline_stamp"][key] if c.get("inline_stamp") else None

    cols = {
        **{key: _claim_column(claims, key) for key in ("id", "scope", "section", "line_no", "file", "claim_text",
                                                        "source_url", "source_host", "source_tier", "link_kind",
                                                        "last_verified", "last_verified_origin")},
        "stamp_date": _column(stamp(c, "date") for c in claims),
        "stamp_kind": _column(stamp(c, "kind") for c in claims),
        "values": _column(_values_json(c.get("values", [])) for c in claims),
    }
    return _frame(cols, CLAIM_COLUMNS).astype({"line_no": "int64"})


def pages_table(pages: dict[str, PageState], text_chars: dict[str, int] | None = None) -> pd.DataFrame:
    """text_chars: the length of pages' texts the states no longer carry (audit_scopes reads them a chunk at a
    time); a state with its text is measured."""
    chars = text_chars or {}
    rows = [
        {
            "url": url,
            "fetch_status": str(p.fetch_status),
            "http_status": p.http_status,
            "content_kind": p.content_kind,
            "note": p.note,
            "fetched_at": p.fetched_at,
            "text_hash": p.text_hash,
            "raw_hash": p.raw_hash,
            "text_chars": len(p.text) if p.text else chars.get(url, 0),
            "content_changed": bool(p.content_changed),
            "changed_at": p.changed_at,
            "stable_since": p.stable_since,
            "diff": p.diff,
            "change_reported_at": p.change_reported_at,
            "unconfirmed_since": p.unconfirmed_since,
        }
        for url, p in sorted(pages.items())
    ]
    df = pd.DataFrame(rows, columns=PAGE_COLUMNS)
    return df.astype({"http_status": "Int64", "content_changed": "bool", "text_chars": "int64"})


def build_audit(
    claims: list[ClaimRecord], pages: dict[str, PageState], priors: dict[str, Prior], *, run_at: datetime
) -> Audit:
    """Tables for every claim, and headline numbers counted while building them (build_audit_of_values)."""
    return build_audit_of_values([c.to_dict() for c in claims], pages, {k: p.to_dict() for k, p in priors.items()},
                                 run_at=run_at)


# a claim with no prior (none stored, none computed) reads as an unavailable source
_NO_PRIOR = Prior(SOURCE_UNAVAILABLE, fetch_note="no prior computed").to_dict()


def build_audit_of_values(
    claims: list[dict[str, Any]],
    pages: dict[str, PageState],
    priors: dict[str, dict[str, Any]],
    *,
    run_at: datetime,
    text_chars: dict[str, int] | None = None,
) -> Audit:
    """build_audit from the claims' and priors' stored values (ClaimRecord.to_dict and Prior.to_dict shapes, as
    the claims and priors assets store them), read as they are: no record is rebuilt per claim, which at 100k
    claims cost the audit step a third of its time and memory. text_chars: see pages_table."""
    by_prior: dict[str, int] = {}
    counts = {"tokens_absent": 0, "content_changed": 0, "stale_changed": 0, "pdf_no_text": 0, "source_unavailable": 0}
    flagged: set[tuple[str, int, str]] = set()
    seen: set[str] = set()
    unique_claims: list[dict[str, Any]] = []
    # per claim, what its row needs besides the claim: (prior, page, content_changed, changed_at, stale_changed)
    rows: list[tuple[dict[str, Any], PageState | None, bool, str | None, bool]] = []
    for c in claims:
        if c["id"] in seen:
            continue  # an id is a claim; a duplicate would double-count every number
        seen.add(c["id"])
        unique_claims.append(c)
        page = pages.get(c["source_url"])
        prior = priors.get(c["id"]) or _NO_PRIOR
        kind = prior["prior"]
        changed = bool(page.content_changed) if page else False
        changed_at = page.changed_at if page else None
        stale = is_stale_changed(c.get("last_verified"), changed_at, changed)
        by_prior[kind] = by_prior.get(kind, 0) + 1
        counts["tokens_absent"] += kind == TOKENS_ABSENT
        counts["pdf_no_text"] += kind == PDF_NO_TEXT
        counts["source_unavailable"] += kind == SOURCE_UNAVAILABLE
        counts["content_changed"] += changed
        counts["stale_changed"] += stale
        if kind == TOKENS_ABSENT or changed:
            flagged.add((c.get("file", ""), int(c["line_no"]), c["source_url"]))
        rows.append((prior, page, changed, changed_at, stale))
    cols = {
        # the priors table's names for the claim's fields
        **{name: _claim_column(unique_claims, key) for name, key in (
            ("claim_id", "id"), ("scope", "scope"), ("line_no", "line_no"), ("file", "file"), ("section", "section"),
            ("url", "source_url"), ("claim", "claim_text"), ("last_verified", "last_verified"),
            ("last_verified_origin", "last_verified_origin"))},
        "prior": _column(r[0]["prior"] for r in rows),
        "matched": _column(_json(r[0].get("matched_tokens", [])) for r in rows),
        "strong_matched": _column(_json(r[0].get("strong_matched", [])) for r in rows),
        "missing": _column(_json(r[0].get("missing_tokens", [])) for r in rows),
        "excerpts": _column(_json(r[0].get("excerpts", [])) for r in rows),
        "hits": _column(_hits_json(r[0].get("hits", [])) for r in rows),
        "fetch_note": _column(r[0].get("fetch_note", "") for r in rows),
        "fetch_status": _column(str(page.fetch_status) if page else "NOT_FETCHED" for _, page, *_ in rows),
        "content_changed": _column(r[2] for r in rows),
        "changed_at": _column(r[3] for r in rows),
        "stale_changed": _column(r[4] for r in rows),
        "diff": _column(page.diff if page and (changed or stale) else None for _, page, changed, _, stale in rows),
        "change_reported_at": _column(page.change_reported_at if page and stale and not changed else None
                                      for _, page, changed, _, stale in rows),
        "unconfirmed_since": _column(page.unconfirmed_since if page else None for _, page, *_ in rows),
    }
    priors_df = _frame(cols, PRIOR_COLUMNS).astype({"line_no": "int64", "content_changed": "bool", "stale_changed": "bool"})
    del cols, rows
    headline = {
        "total": len(seen),
        "by_prior": dict(sorted(by_prior.items())),
        **counts,
        "flagged": len(flagged),
    }
    return Audit(
        claims=claims_table(unique_claims),
        pages=pages_table(pages, text_chars),
        priors=priors_df,
        run_at=run_at.isoformat(),
        headline={k: headline[k] for k in HEADLINE_KEYS},
    )


def headline_numbers(claims_df: pd.DataFrame, pages_df: pd.DataFrame, priors_df: pd.DataFrame) -> dict[str, Any]:
    """The headline numbers recomputed from the tables alone (claims ⋈ pages by URL, priors by claim id)."""
    claims = claims_df.drop_duplicates(subset=["id"])[["id", "file", "line_no", "source_url", "last_verified"]]
    pages = pages_df.drop_duplicates(subset=["url"])[["url", "content_changed", "changed_at"]]
    prior_of = priors_df.drop_duplicates(subset=["claim_id"]).set_index("claim_id")["prior"]
    merged = claims.merge(pages, how="left", left_on="source_url", right_on="url")
    merged["content_changed"] = merged["content_changed"].fillna(False).astype(bool)
    merged["prior"] = merged["id"].map(prior_of).fillna(SOURCE_UNAVAILABLE)
    merged["stale"] = [
        is_stale_changed(lv if isinstance(lv, str) else None, ca if isinstance(ca, str) else None, cc)
        for lv, ca, cc in zip(merged["last_verified"], merged["changed_at"], merged["content_changed"])
    ]
    is_flag = (merged["prior"] == TOKENS_ABSENT) | merged["content_changed"]
    flagged = merged.loc[is_flag, ["file", "line_no", "source_url"]].drop_duplicates()
    by_prior = {str(k): int(v) for k, v in merged["prior"].value_counts().sort_index().items()}
    return {
        "total": int(len(merged)),
        "by_prior": by_prior,
        "tokens_absent": int((merged["prior"] == TOKENS_ABSENT).sum()),
        "content_changed": int(merged["content_changed"].sum()),
        "stale_changed": int(merged["stale"].sum()),
        "pdf_no_text": int((merged["prior"] == PDF_NO_TEXT).sum()),
        "source_unavailable": int((merged["prior"] == SOURCE_UNAVAILABLE).sum()),
        "flagged": int(len(flagged)),
    }


def headline_mismatches(stored: dict[str, Any], recomputed: dict[str, Any]) -> list[str]:
    """Human-readable differences between two headline dicts (empty when they agree)."""
    out = []
    for key in HEADLINE_KEYS:
        if stored.get(key) != recomputed.get(key):
            out.append(f"{key}: stored {stored.get(key)!r} != recomputed {recomputed.get(key)!r}")
    return out
