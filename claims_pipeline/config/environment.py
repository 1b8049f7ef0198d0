"""What the configuration stands on before any file is read: the environment variables it looks at, the default
folders (the home, the bundled demo's corpus and settings), the deployments, the package's version and the
error a configuration that cannot be used raises.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

ENV_CONFIG = "CLAIMS_PIPELINE_CONFIG"
ENV_HOME = "CLAIMS_PIPELINE_HOME"
ENV_DEPLOYMENT = "CLAIMS_PIPELINE_DEPLOYMENT"
DEFAULT_CONFIG_RELPATH = Path("config") / "claims_pipeline.yaml"
PACKAGE_DIR = Path(__file__).resolve().parent.parent
# The demo package beside this one; only its paths are known here (the runtime imports it only in the demo
# deployment, in defs/resources.py).
DEMO_CORPUS_DIR = PACKAGE_DIR.parent / "claims_pipeline_demo" / "corpus"
DEMO_CONFIG_FILE = PACKAGE_DIR.parent / "claims_pipeline_demo" / "demo.yaml"

# Which resources a process runs with (defs/resources.py): `demo` = the bundled demo corpus, fixture web and
# scripted judge; `local` = a user's own corpus on this machine; `production` = a deployment (the UI, the daemon,
# its runs). Only `demo` has a default corpus; local and production never start any demo part.
Deployment = Literal["demo", "local", "production"]
DEPLOYMENTS: tuple[Deployment, ...] = ("demo", "local", "production")
DEFAULT_DEPLOYMENT: Deployment = "local"


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


class CorpusNotSet(ConfigError):
    """No extraction.corpus_dir outside the demo deployment: the message says in one line how to set it."""


def default_home_dir() -> Path:
    """The outputs root when the settings name none: $CLAIMS_PIPELINE_HOME, else ~/.claims_pipeline."""
    env = os.environ.get(ENV_HOME)
    return Path(env).expanduser() if env else Path.home() / ".claims_pipeline"


def demo_home_dir() -> Path:
    """Where `claims-pipeline demo` writes by default, and what the demo deployment runs on without a config."""
    return default_home_dir() / "demo"


def deployment_from_env() -> Deployment:
    """The deployment $CLAIMS_PIPELINE_DEPLOYMENT names (unset or empty: local)."""
    return deployment_named(os.environ.get(ENV_DEPLOYMENT, "").strip().lower() or DEFAULT_DEPLOYMENT,
                            f"${ENV_DEPLOYMENT}")


def deployment_named(value: str, origin: str) -> Deployment:
    for known in DEPLOYMENTS:
        if value == known:
            return known
    raise ConfigError(f"{origin}={value!r}: expected one of {', '.join(DEPLOYMENTS)}")


def demo_config_file() -> Path:
    """The demo deployment's settings when no file is named: the copy the last `claims-pipeline demo` wrote
    under its home (so the UI and the commands see the demo's runs), else the bundled demo.yaml."""
    copy = demo_home_dir() / DEMO_CONFIG_FILE.name
    return copy if copy.is_file() else DEMO_CONFIG_FILE


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("claims_pipeline")
    except Exception:  # not installed (running from a checkout)
        return "0.0.0"
