"""Configuration: validated models with defaults, loaded from one YAML file.

Lookup order for the file: an explicit path (``--config``), then ``$CLAIMS_PIPELINE_CONFIG``, then
``./config/claims_pipeline.yaml`` when it exists, else the built-in defaults (the section models'; in the demo
deployment, the demo's settings: demo_config_file). Relative paths inside the file are resolved against the file's
own directory. A wrong key, type or value raises ``ConfigError`` naming the file and the dotted key — also a value
that only a later step would reject (a network range, an address-map target, a database URL, a host pattern, a
path that must be a file...): the section models' validators run the same checks at load time, so a bad file
fails before any corpus walk or network use.

This module is the settings' one import path; the code lives beside it, along its seams: environment.py
(environment variables, default folders, deployments, ConfigError), config_file.py (reading a file and its YAML),
sections/ (one model per section or group of sections, and the checks they share), settings_object.py
(`Settings`) and loading.py (validation, lookup, `load_settings`).
"""

from __future__ import annotations

from claims_pipeline.config.config_file import (
    MAX_CONFIG_BYTES,
    _not_regular,
    _refuse_duplicate_keys,
    parse_config_yaml,
    read_config_text,
)
from claims_pipeline.config.environment import (
    DEFAULT_CONFIG_RELPATH,
    DEFAULT_DEPLOYMENT,
    DEMO_CONFIG_FILE,
    DEMO_CORPUS_DIR,
    DEPLOYMENTS,
    ENV_CONFIG,
    ENV_DEPLOYMENT,
    ENV_HOME,
    PACKAGE_DIR,
    ConfigError,
    CorpusNotSet,
    Deployment,
    default_home_dir,
    demo_config_file,
    demo_home_dir,
    deployment_from_env,
    deployment_named,
    package_version,
)
from claims_pipeline.config.loading import (
    _PATH_KEYS,
    MAX_ERRORS_SHOWN,
    _did_you_mean,
    _format_errors,
    _resolve_relative,
    _section_model,
    corpus_origin,
    find_config_file,
    load_settings,
    settings_from_dict,
    settings_source,
)
from claims_pipeline.config.sections.audit_steps import (
    LinterSettings,
    PriorSettings,
    SamplingSettings,
    SamplingWeights,
)
from claims_pipeline.config.sections.extraction import (
    COUNTRIES_PRESET_DIRS,
    COUNTRIES_PRESET_RULES,
    SCOPE_PLACEHOLDER_RE,
    SCOPE_PLACEHOLDERS,
    ExtractionSettings,
    ScopeRule,
)
from claims_pipeline.config.sections.fetching import (
    FetchSettings,
    HostPolicy,
    PdfSettings,
)
from claims_pipeline.config.sections.judging import (
    JudgePrice,
    JudgeSettings,
    _default_judge_prices,
)
from claims_pipeline.config.sections.notifications import (
    _APPRISE_URL_RE,
    ENV_REF_RE,
    NotifySettings,
)
from claims_pipeline.config.sections.page_cache import (
    CacheSettings,
)
from claims_pipeline.config.sections.strict import (
    _ENV_NAME_RE,
    _NOT_IN_HOST_RE,
    _check_address_target,
    _check_hosts,
    _check_networks,
    _folder_or_absent,
    _host_problem,
    _nonblank,
    _Strict,
    split_address_target,
)
from claims_pipeline.config.settings_object import (
    PageCacheSpec,
    PageFetching,
    Settings,
)

__all__ = [
    "ENV_CONFIG",
    "ENV_HOME",
    "ENV_DEPLOYMENT",
    "DEFAULT_CONFIG_RELPATH",
    "PACKAGE_DIR",
    "DEMO_CORPUS_DIR",
    "DEMO_CONFIG_FILE",
    "Deployment",
    "DEPLOYMENTS",
    "DEFAULT_DEPLOYMENT",
    "ConfigError",
    "CorpusNotSet",
    "default_home_dir",
    "demo_home_dir",
    "deployment_from_env",
    "deployment_named",
    "_Strict",
    "_NOT_IN_HOST_RE",
    "_host_problem",
    "_check_hosts",
    "_nonblank",
    "_folder_or_absent",
    "split_address_target",
    "_check_address_target",
    "SCOPE_PLACEHOLDER_RE",
    "SCOPE_PLACEHOLDERS",
    "ScopeRule",
    "COUNTRIES_PRESET_DIRS",
    "COUNTRIES_PRESET_RULES",
    "ExtractionSettings",
    "HostPolicy",
    "_check_networks",
    "FetchSettings",
    "PdfSettings",
    "PriorSettings",
    "LinterSettings",
    "SamplingWeights",
    "SamplingSettings",
    "CacheSettings",
    "JudgePrice",
    "_default_judge_prices",
    "_ENV_NAME_RE",
    "JudgeSettings",
    "_APPRISE_URL_RE",
    "ENV_REF_RE",
    "NotifySettings",
    "PageCacheSpec",
    "PageFetching",
    "Settings",
    "_PATH_KEYS",
    "_resolve_relative",
    "MAX_ERRORS_SHOWN",
    "_format_errors",
    "_did_you_mean",
    "_section_model",
    "settings_from_dict",
    "find_config_file",
    "corpus_origin",
    "settings_source",
    "MAX_CONFIG_BYTES",
    "read_config_text",
    "_not_regular",
    "_refuse_duplicate_keys",
    "parse_config_yaml",
    "load_settings",
    "demo_config_file",
    "package_version",
]
