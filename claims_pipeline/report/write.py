"""write_reports: every output of one audit into one directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from claims_pipeline.common.text_safety import json_escaped
from claims_pipeline.report.audit import Audit
from claims_pipeline.report.history import AuditPoint
from claims_pipeline.report.html_report import render_html
from claims_pipeline.report.markdown import render_markdown
from claims_pipeline.report.sections import LISTED_MAX
from claims_pipeline.report.summary import report_json
from claims_pipeline.store.files import naming


def write_reports(audit: Audit, out_dir: Path, *, previous_run: str | None = None,
                  tables_dir: Path | None = None, history: list[AuditPoint] | None = None) -> dict[str, Path]:
    """report.md, report.json, report.html and the claims/pages/priors parquet tables; returns name → path.

    tables_dir: where the audit's tables were read from (publish_report, under the audit lock); each one is
    copied beside the report when it has the audit's columns, instead of written again from the frames (at 100k
    claims a second and 0.3 GB): the same frames when read back."""
    out_dir = Path(out_dir)
    with naming(out_dir):  # a full disk says which folder
        return _write(audit, out_dir, previous_run, tables_dir, history)


def _write(audit: Audit, out_dir: Path, previous_run: str | None, tables_dir: Path | None,
           history: list[AuditPoint] | None) -> dict[str, Path]:
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
    paths["report.html"].write_text(render_html(audit, previous_run, history), encoding="utf-8")
    for name, df in (("claims", audit.claims), ("pages", audit.pages), ("priors", audit.priors)):
        stored = tables_dir / f"{name}.parquet" if tables_dir is not None else None
        if stored is not None and stored.is_file() and pq.read_schema(stored).names == list(df.columns):
            shutil.copyfile(stored, paths[f"{name}.parquet"])
        else:  # an audit built in memory, or tables of a version before a column (from_tables added it)
            df.to_parquet(paths[f"{name}.parquet"], index=False)
    return paths
