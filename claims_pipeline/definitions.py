"""The Dagster code location (`dg dev`, `dg check defs`): every definition under claims_pipeline/defs/, found by
Dagster's defs-folder loader. The project is declared once, in pyproject.toml's [tool.dg]."""

from pathlib import Path

import dagster as dg

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dg.definitions
def defs() -> dg.Definitions:
    if (PROJECT_ROOT / "pyproject.toml").is_file():  # a checkout: the dg project
        return dg.load_from_defs_folder(path_within_project=PROJECT_ROOT)
    import claims_pipeline.defs  # an installed package has no pyproject: load the same folder as a module

    return dg.load_defs(defs_root=claims_pipeline.defs)
