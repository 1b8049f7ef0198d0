"""The audit step: the audit of every scope as parquet tables (the record, report.audit, computed from the stored
values of every scope), and publishing its report under the home's audit lock."""
