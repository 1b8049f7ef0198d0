"""The Dagster code location (`dg dev`, `dg check defs`): every definition under claims_pipeline/defs/, found by
Dagster's defs-folder loader. The project is declared once, in pyproject.toml's [tool.dg]."""

import warnings
from pathlib import Path

import dagster as dg

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dg.definitions
def defs() -> dg.Definitions:
    if (PROJECT_ROOT / "pyproject.toml").is_file():  # a checkout: the dg project
        return dg.load_from_defs_folder(path_within_project=PROJECT_ROOT)
    # an installed package has no pyproject: the same tree load_from_defs_folder builds, from the module itself
    # (dg.load_defs is deprecated, and it looks for a pyproject.toml above the package: none in site-packages)
    import claims_pipeline.defs

    with warnings.catch_warnings():  # load_from_defs_folder silences the preview warnings of this same loader
        warnings.simplefilter("ignore", category=dg.PreviewWarning)
        return dg.ComponentTree.from_module(defs_module=claims_pipeline.defs, project_root=PROJECT_ROOT).build_defs()
