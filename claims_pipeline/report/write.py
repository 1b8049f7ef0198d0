"""write_reports: every output of one audit into one directory."""

from __future__ import annotations

import json
from pathlib import Path

from claims_pipeline.audit import Audit
from claims_pipeline.report.html_report import render_html
from claims_pipeline.report.markdown import render_markdown
from claims_pipeline.report.sections import LISTED_MAX
from claims_pipeline.report.summary import report_json
from claims_pipeline.text_safety import json_escaped


def write_reports(audit: Audit, out_dir: Path, *, previous_run: str | None = None) -> dict[str, Path]:
    """report.md, report.json, report.html and the claims/pages/priors parquet tables; returns name → path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "report.md": out_dir / "report.md",
        "report.json": out_dir / "report.json",
        "report.html": out_dir / "report.html",
        "claims.parquet": out_dir / "claims.parquet",
        "pages.parquet": out_dir / "pages.parquet",
        "priors.parquet": out_dir / "priors.parquet",
    }
    paths["report.md"].write_text(render_markdown(audit, previous_run), encoding="utf-8")
    # indented for a person reading a small one; a large one (a row per claim) on one line, much smaller
    indent = 2 if len(audit.priors) <= LISTED_MAX else None
    doc = json.dumps(report_json(audit, previous_run), indent=indent, ensure_ascii=False, default=str)
    paths["report.json"].write_text(json_escaped(doc), encoding="utf-8")
    paths["report.html"].write_text(render_html(audit, previous_run), encoding="utf-8")
    audit.claims.to_parquet(paths["claims.parquet"], index=False)
    audit.pages.to_parquet(paths["pages.parquet"], index=False)
    audit.priors.to_parquet(paths["priors.parquet"], index=False)
    return paths
