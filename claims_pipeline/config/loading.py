"""Loading the settings: which file (an explicit path, $CLAIMS_PIPELINE_CONFIG, ./config/claims_pipeline.yaml,
else the defaults or the demo's), its YAML validated into `Settings`, relative paths resolved against the
file's folder, and every validation error as `<file>: <dotted.key>: <message>`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from claims_pipeline.config.config_file import parse_config_yaml, read_config_text
from claims_pipeline.config.environment import (
    DEFAULT_CONFIG_RELPATH,
    DEFAULT_DEPLOYMENT,
    DEMO_CONFIG_FILE,
    ENV_CONFIG,
    ConfigError,
    Deployment,
    demo_config_file,
    demo_home_dir,
    deployment_from_env,
)
from claims_pipeline.config.settings_object import Settings

_PATH_KEYS = (("home",), ("extraction", "corpus_dir"), ("extraction", "primary_allowlist_file"), ("cache", "blob_dir"))


def _resolve_relative(data: dict[str, Any], base: Path) -> None:
    for keys in _PATH_KEYS:
        node: Any = data
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(keys[-1]), str):
            p = Path(node[keys[-1]]).expanduser()
            node[keys[-1]] = str(p if p.is_absolute() else (base / p).resolve())


MAX_ERRORS_SHOWN = 5  # a list of 120 bad entries (a YAML alias bomb) is five lines and a count, not 120


def _format_errors(path: Path | str, exc: ValidationError) -> str:
    lines = []
    errors = exc.errors()
    for err in errors[:MAX_ERRORS_SHOWN]:
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            msg = "unknown key" + _did_you_mean(err["loc"])
        elif err["type"] == "value_error" and "error" in err.get("ctx", {}):
            msg = str(err["ctx"]["error"])  # our validators' own words, without pydantic's "Value error, "
        else:
            msg = err["msg"]
        lines.append(f"{path}: {key}: {msg}")
    if len(errors) > MAX_ERRORS_SHOWN:
        lines.append(f"{path}: … and {len(errors) - MAX_ERRORS_SHOWN} more errors ({len(errors)} in all); fix these first")
    return "\n".join(lines)


def _did_you_mean(loc: tuple[int | str, ...]) -> str:
    """', did you mean scope_depth?' for a misspelt key: the closest keys of the section it was found in."""
    import difflib

    model: Any = Settings
    keyed = False  # the part before was a mapping of names to sections (per_host_overrides): this part is a name
    for part in loc[:-1]:
        if isinstance(part, int) or keyed:  # an entry of a list or a mapping: its model was taken already
            keyed = False
            continue
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return ""
        model = _section_model(field.annotation)
        keyed = "dict" in str(field.annotation)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return ""
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=2, cutoff=0.6)
    return f", did you mean {' or '.join(close)}?" if close else ""


def _section_model(annotation: Any) -> Any:
    """The model a field holds: itself, or the item model of a `list[Model] | None`, or a dict's value model."""
    from typing import get_args

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _section_model(arg)
        if found is not None:
            return found
    return None


def settings_from_dict(data: dict[str, Any], *, source: Path | str = "<dict>", base_dir: Path | None = None,
                       deployment: Deployment = DEFAULT_DEPLOYMENT) -> Settings:
    """Validate a mapping into Settings; paths are resolved against base_dir when given."""
    data = dict(data or {})
    if base_dir is not None:
        _resolve_relative(data, base_dir)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(source, exc)) from None
    settings._source_file = Path(source) if source != "<dict>" else None
    settings._deployment = deployment
    return settings


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    if explicit:
        return Path(explicit)
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env)
    candidate = Path.cwd() / DEFAULT_CONFIG_RELPATH
    return candidate if candidate.is_file() else None


def corpus_origin(config_file: Path | None, *, override: bool = False) -> str:
    """Where the corpus directory came from, for an error message."""
    if override:
        return "--corpus"
    return f"extraction.corpus_dir in {config_file}" if config_file else "extraction.corpus_dir, default"


def settings_source(config_file: Path | None, deployment: Deployment = DEFAULT_DEPLOYMENT) -> str:
    """Which configuration a run uses, in words: the file, or the built-in defaults and why; and the
    deployment when it is not the default one."""
    if config_file is not None:
        said = f"config {config_file}"
    elif deployment == "demo":
        said = f"config {demo_config_file()} (the demo's: ${ENV_CONFIG} unset, no ./{DEFAULT_CONFIG_RELPATH.as_posix()})"
    else:
        said = f"built-in defaults (${ENV_CONFIG} unset, no ./{DEFAULT_CONFIG_RELPATH.as_posix()})"
    return said if deployment == DEFAULT_DEPLOYMENT else f"{said} · deployment {deployment}"


def load_settings(path: str | os.PathLike[str] | None = None, *, deployment: Deployment | None = None) -> Settings:
    """Load and validate settings (see module doc for the lookup order). An entry point calls this once and
    passes the result, or the section a part needs, down. deployment: None = $CLAIMS_PIPELINE_DEPLOYMENT; the
    demo deployment without a config file reads the demo's settings (demo_config_file)."""
    deployment = deployment or deployment_from_env()
    file = find_config_file(path) or (demo_config_file() if deployment == "demo" else None)
    if file is None:
        return settings_from_dict({}, deployment=deployment)
    data = parse_config_yaml(read_config_text(file), file) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: (top level): expected a mapping of sections, got {type(data).__name__}")
    if file == DEMO_CONFIG_FILE:
        data.setdefault("home", str(demo_home_dir()))  # the demo's outputs, runs and instance, as the demo's own
    return settings_from_dict(data, source=file, base_dir=file.resolve().parent, deployment=deployment)
