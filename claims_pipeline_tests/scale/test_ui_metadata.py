"""The UI's metadata stays bounded at scale: a large audit's materialization shows the top rows of each table and
where the full one is, never one row per claim or a name per scope, and it does not grow with the audit."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dagster as dg

from claims_pipeline.defs.audit.checks import review_warning
from claims_pipeline.defs.audit.ui import STALE_HEADERS, audit_metadata, report_metadata, stale_rows
from claims_pipeline.defs.metadata import first_lines, md_list
from claims_pipeline.priors import TOKENS_ABSENT, TOKENS_PRESENT, Prior
from claims_pipeline.report.audit import Audit, build_audit
from claims_pipeline.report.md_tables import MAX_TABLE_ROWS
from claims_pipeline_tests.report.factories import claim, page, value

RUN_AT = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


def audit_of(scopes: int, per_scope: int = 5) -> Audit:
    """`scopes` scopes of `per_scope` claims each: one stale claim (its page changed) and one TOKENS_ABSENT in
    each scope, the rest present; 100 more scopes of the corpus not in this audit."""
    claims, pages, priors = [], {}, {}
    for s in range(scopes):
        scope = f"s{s:04d}"
        for i in range(per_scope):
            url = f"https://www.tax.gouv.fr/{scope}/{i}"
            c = claim(f"The {scope} duty is **{i + 1}.5%**", [value("pct", f"{i + 1}.5%")], url=url, scope=scope,
                      line_no=i + 1, last_verified="2026-01-10", file=f"countries/{scope}/playbook.md")
            claims.append(c)
            pages[url] = page(url, "text", content_changed=i == 0, changed_at="2026-06-15T00:00:00+00:00" if i == 0 else None,
                              diff="-old\n+new" if i == 0 else None)
            priors[c.id] = Prior(TOKENS_ABSENT if i == 1 else TOKENS_PRESENT, missing_tokens=[f"{i + 1}.5%"] if i == 1 else [])
    audit = build_audit(claims, pages, priors, run_at=RUN_AT)
    audit.scopes = sorted({c.scope for c in claims})
    audit.scopes_missing = [f"m{n:04d}" for n in range(100)]
    return audit


def serialized(metadata: dict[str, Any]) -> int:
    return len(json.dumps({k: getattr(v, "value", v) for k, v in metadata.items()}, default=str).encode())


def all_metadata(audit: Audit, tmp: Path) -> dict[str, Any]:
    published = SimpleNamespace(audit=audit, out_dir=tmp / "reports" / "r", files={}, previous_run=None)
    warning = review_warning(stale_rows(audit.priors), STALE_HEADERS, "stale_changed")
    return {**audit_metadata(audit, tmp / "audit" / "tables"), **report_metadata(published),
            **{f"check_{k}": v for k, v in warning.metadata.items()}, "check_description": warning.description}


def test_a_large_audits_metadata_is_top_rows_and_a_pointer_to_the_full_table(tmp_path: Path) -> None:
    audit = audit_of(400)
    meta = all_metadata(audit, tmp_path)
    full = str(tmp_path / "audit" / "tables" / "priors.parquet")
    for key in ("by_scope", "stale_changed_claims", "tokens_absent_claims", "changed_pages"):
        text = meta[key].value
        assert text.count("\n| ") == MAX_TABLE_ROWS, key  # the header row, then the top rows only
        assert f"…and {400 - MAX_TABLE_ROWS} more (the full table: {full})" in text, key
    assert meta["scopes_missing"].value[-1] == f"…and {100 - MAX_TABLE_ROWS} more"
    assert len(meta["scopes_missing"].value) == MAX_TABLE_ROWS + 1
    assert meta["check_count"].value == 400 and meta["check_scopes_count"].value == 400
    assert len(meta["check_scopes"].value) == MAX_TABLE_ROWS
    assert meta["check_description"].endswith("; and 380 more scopes")
    assert meta["claims"] == 2000 and meta["flagged"] == 800  # the numbers stay whole
    assert serialized(meta) < 64_000


def test_the_metadata_does_not_grow_with_the_audit(tmp_path: Path) -> None:
    small, large = serialized(all_metadata(audit_of(120), tmp_path)), serialized(all_metadata(audit_of(1000), tmp_path))
    assert large < small * 1.1, (small, large)


def test_a_small_audits_metadata_lists_everything(tmp_path: Path) -> None:
    audit = audit_of(3)
    audit.scopes_missing = ["xx"]
    meta = all_metadata(audit, tmp_path)
    assert meta["by_scope"].value.count("\n| ") == 3 and "more" not in meta["by_scope"].value
    assert meta["scopes_missing"].value == ["xx"]
    assert meta["check_description"] == "s0000: 1 stale_changed; s0001: 1 stale_changed; s0002: 1 stale_changed"


def test_lists_and_diffs_are_cut_with_a_count() -> None:
    names = [f"countries/xa/f{i}.md" for i in range(MAX_TABLE_ROWS + 7)]
    text = md_list(names).value
    assert text.count("\n- ") == MAX_TABLE_ROWS - 1 and text.endswith("_…and 7 more_")
    assert isinstance(md_list(names[:3]), dg.MarkdownMetadataValue) and "more" not in md_list(names[:3]).value
    diff = "\n".join(f"+line {i}" for i in range(500))
    assert first_lines(diff).splitlines()[-1] == "… 440 more lines" and len(first_lines(diff).splitlines()) == 61
    assert first_lines("-a\n+b") == "-a\n+b"


MAX_COLUMNS = 6  # by_scope's figures; every table of text has 5 at most
MAX_ROW_CHARS = 260  # what a row shows (link labels, not their targets), all cells together
MAX_UNBROKEN = 50  # the longest run a browser cannot wrap (no space, no zero-width space)


def _shown_rows(markdown: str) -> list[list[str]]:
    """Each table row's cells as a reader sees them: a link as its label, escapes dropped."""
    rows = []
    for line in markdown.splitlines():
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        shown = re.sub(r"\]\(<[^>]*>\)", "", line).replace("[", "")
        rows.append([c.replace("\\", "").strip() for c in re.split(r"(?<!\\)\|", shown)[1:-1]])
    return rows


def test_every_table_of_the_ui_fits_its_cell(tmp_path: Path) -> None:
    """Long claims, paths and URLs are cut or wrap: no table in the audit's metadata, its report's, or its checks'
    is wider than a UI cell allows (the browser test measures the rendered tables too)."""
    audit = audit_of(3)
    long_url = "https://www.tax.gouv.fr/" + "/".join(f"section-{i}-of-the-official-guidance" for i in range(8))
    audit.priors["claim"] = "The duty on the transfer of a second home is **7.5%** " + "of the declared value " * 20
    audit.priors["url"] = long_url
    audit.priors["file"] = "countries/s0000/" + "a-very-long-folder-name/" * 4 + "playbook.md"
    meta = all_metadata(audit, tmp_path)
    tables = {k: v.value for k, v in meta.items() if isinstance(v, dg.MarkdownMetadataValue) and "\n|---" in v.value}
    assert {"by_scope", "stale_changed_claims", "tokens_absent_claims", "flagged_claims", "check_claims"} <= set(tables)
    for key, text in tables.items():
        rows = _shown_rows(text)
        assert rows, key
        for row in rows:
            assert len(row) <= MAX_COLUMNS, (key, row)
            assert sum(len(c) for c in row) <= MAX_ROW_CHARS, (key, row)
            longest = max((len(w) for c in row for w in re.split(r"[\s\u200b]+", c)), default=0)
            assert longest <= MAX_UNBROKEN, (key, row)
    # cut, and said so: the report has the whole text
    assert "…" in tables["stale_changed_claims"] and "the report has them whole" in tables["stale_changed_claims"]


def test_the_headline_shows_every_kind_of_prior_and_flagged_claims_match_it(tmp_path: Path) -> None:
    audit = audit_of(3)
    # every kind of prior in the line (the UI cut it after 90 characters: "…TOKENS_ABSENT 3 ·…")
    audit.headline["by_prior"] = {**audit.headline["by_prior"], "PDF_NO_TEXT": 1, "SOURCE_BINARY": 1,
                                  "SOURCE_UNAVAILABLE": 10, "WEAK_MATCH": 1}
    meta = all_metadata(audit, tmp_path)
    by_prior = next(r for r in _shown_rows(meta["summary"].value) if r[0] == "by prior")[1]
    assert "…" not in by_prior and all(k in by_prior for k in audit.headline["by_prior"])
    flagged_rows = [r for r in _shown_rows(meta["flagged_claims"].value)[1:]]
    assert len(flagged_rows) == audit.headline["flagged"] == meta["flagged"]
    assert all(r[0] != "WEAK_MATCH" for r in flagged_rows)
