"""The thin Dagster layer: it wires the pure core (corpus, web, store, priors, report) into assets."""

import dagster as dg


def build_definitions() -> dg.Definitions:
    return dg.Definitions(assets=[])
