"""Reports of one audit: report.md (the reference layout, docs/decisions/0001), report.json, report.html and parquet tables."""

from claims_pipeline.report.write import write_reports

__all__ = ["write_reports"]
