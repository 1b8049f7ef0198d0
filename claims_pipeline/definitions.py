"""The Dagster code location: `dg dev`, `dagster dev` and `dg check defs` load `defs` from here."""

from claims_pipeline.defs import build_definitions

defs = build_definitions()
