"""The audit's parquet tables on disk (<home>/audit/tables/*.parquet): written by the audit_tables asset (steps/audit/cross_scope.py), read back by
its checks and by the report asset, so what a reviewer reads is exactly what the checks verified. The four
tables are one audit's: written under the home's audit lock and read under it (store/files.py), so a CLI
audit running beside a Dagster run never leaves a reader with one audit's claims and another's pages. The
lock covers each step, not the run: when two audits interleave their steps, the tables the first one's report
step finds may be the second one's. It then refuses (audit_report compares their run_at with the one its own
run's audit_tables step recorded) rather than report tables whose own check has not run."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.report.audit import Audit
from claims_pipeline.store.files import locked, replace_atomically

TABLE_NAMES = ("claims", "pages", "priors", "meta")


def tables_dir(home: Path) -> Path:
    return HomeLayout(home).tables_dir


def audit_lock(home: Path) -> Path:
    return HomeLayout(home).audit_lock


def write_tables(tables: dict[str, pd.DataFrame], directory: Path) -> dict[str, Path]:
    """Every table replaced atomically, all of them under the audit lock (`directory` is <home>/audit/tables)."""
    paths = {}
    with locked(audit_lock(directory.parent.parent)):
        for name, df in tables.items():
            path = directory / f"{name}.parquet"
            replace_atomically(path, partial(df.to_parquet, index=False))
            paths[name] = path
    return paths


def read_audit(home: Path) -> Audit:
    """The audit in <home>'s tables, read under the audit lock (shared: readers do not wait for each other)."""
    with locked(audit_lock(home), shared=True):
        return load_audit(tables_dir(home))


def read_priors(home: Path) -> pd.DataFrame:
    """Only the priors table, as read_audit(home).priors: what the review checks list (one table of four)."""
    from claims_pipeline.report.audit import priors_as_read

    path = tables_dir(home) / "priors.parquet"
    with locked(audit_lock(home), shared=True):
        if not path.is_file():
            raise FileNotFoundError(f"audit table missing: {path} (materialize audit_tables first)")
        return priors_as_read(read_table(path))


def read_tables(directory: Path) -> dict[str, pd.DataFrame]:
    missing = [n for n in TABLE_NAMES if not (directory / f"{n}.parquet").is_file()]
    if missing:
        raise FileNotFoundError(f"audit tables missing in {directory}: {', '.join(missing)} (materialize audit_tables first)")
    return {n: read_table(directory / f"{n}.parquet") for n in TABLE_NAMES}


# Arrow types a text column is stored as (null: a column with no value at all, pandas' object dtype)
_TEXT_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view, pa.types.is_null)


def read_table(path: Path) -> pd.DataFrame:
    """One stored table, its text columns as Python strings with None for missing: the core's records use None,
    so "missing" stays falsy (pandas' string dtype reads NaN, which is truthy). Read a column at a time, a text
    column straight from Arrow to Python strings, so a 100k-claim table is never held as Arrow data, pandas
    strings and Python strings at once; any other column as pandas reads it."""
    stored = pq.ParquetFile(path)
    columns: dict[str, pd.Series] = {}
    for field in stored.schema_arrow:
        if any(is_type(field.type) for is_type in _TEXT_TYPES):
            values = stored.read(columns=[field.name]).column(0).to_numpy(zero_copy_only=False)
            columns[field.name] = pd.Series(values, dtype=object, name=field.name)
        else:
            columns[field.name] = _nulls_as_none(pd.read_parquet(path, columns=[field.name]))[field.name]
    return pd.DataFrame(columns, columns=list(columns))


def _nulls_as_none(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns as Python objects with None for missing (pandas' string dtype reads NaN, which is truthy)."""
    df = df.copy()
    for col in df.columns:
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
            df[col] = df[col].astype(object).where(df[col].notna(), None)
    return df


def load_audit(directory: Path) -> Audit:
    t = read_tables(directory)
    return Audit.from_tables(t["claims"], t["pages"], t["priors"], meta=t["meta"])
