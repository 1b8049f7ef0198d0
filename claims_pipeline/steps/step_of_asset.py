"""Which step stores the records of which per-scope asset: the IO manager's one lookup (defs/storage.py)."""

from __future__ import annotations

from typing import Any

from claims_pipeline.steps.changes import PAGE_CHANGES
from claims_pipeline.steps.corpus import CLAIMS, DOCUMENTS, LINT
from claims_pipeline.steps.pages.fetched import FETCHED_PAGES
from claims_pipeline.steps.priors import PRIORS
from claims_pipeline.steps.stored import StoredStep
from claims_pipeline.steps.verdicts import VERDICTS

STORED_STEPS: dict[str, StoredStep[Any]] = {
    step.asset: step for step in (DOCUMENTS, CLAIMS, LINT, FETCHED_PAGES, PAGE_CHANGES, PRIORS, VERDICTS)
}


def stored_step(asset: str) -> StoredStep[Any]:
    try:
        return STORED_STEPS[asset]
    except KeyError:
        raise KeyError(f"{asset}: no step stores this asset's records (steps/step_of_asset.py)") from None
