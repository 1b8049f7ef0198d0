"""Configuration: validated models with defaults, loaded from one YAML file.

Lookup order for the file: an explicit path (``--config``), then ``$CLAIMS_PIPELINE_CONFIG``, then
``./config/claims_pipeline.yaml`` when it exists, else the built-in defaults below. Relative paths inside the
file are resolved against the file's own directory. A wrong key, type or value raises ``ConfigError`` naming
the file and the dotted key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ENV_CONFIG = "CLAIMS_PIPELINE_CONFIG"
ENV_HOME = "CLAIMS_PIPELINE_HOME"
DEFAULT_CONFIG_RELPATH = Path("config") / "claims_pipeline.yaml"
PACKAGE_DIR = Path(__file__).resolve().parent
DEMO_CORPUS_DIR = PACKAGE_DIR / "demo" / "corpus"


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExtractionSettings(_Strict):
    corpus_dir: Path | None = Field(None, description="Corpus root; None means the bundled demo corpus.")
    scope_dirs: list[str] = Field(
        default_factory=lambda: ["countries", "shared"],
        description="Folders under corpus_dir walked for *.md, in this order.",
    )
    skip_files: list[str] = Field(
        default_factory=lambda: [
            "test-fixtures.md",
            "output-template.md",
            "sections.md",
            "anti-hallucination.md",
            "source-verifier.md",
            "updater.md",
        ]
    )
    exclude_dirs: list[str] = Field(default_factory=lambda: ["node_modules", "_local", ".git"])
    skip_headings: list[str] = Field(
        default_factory=lambda: ["Data sources", "Sources", "Where to verify", "Primary sources"]
    )
    min_salient_values: int = Field(1, ge=0)
    claim_window_chars: int = Field(360, ge=40, le=100_000)
    primary_only: bool = True
    primary_allowlist_file: Path | None = None
    primary_allowlist: list[str] = Field(default_factory=list, description="Extra primary hosts, inline.")
    pointer_lookback_chars: int = Field(48, ge=0, le=400)
    max_line_chars: int = Field(200_000, ge=1000, description="Longer lines are cut (with a warning).")
    workers: int = Field(
        0, ge=0, le=64,
        description="Processes extracting files of a big corpus (fork pool; same output as serial). "
        "0 = auto (the CPUs, only for corpora of many files and MB), 1 = always serial.",
    )


class HostPolicy(_Strict):
    concurrency: int = Field(ge=1, le=64)
    interval_ms: int = Field(ge=0, le=600_000)


class FetchSettings(_Strict):
    user_agent: str = "claims-pipeline/{version} (+https://github.com/claims-pipeline/claims_pipeline)"
    concurrency: int = Field(64, ge=1, le=1024)
    req_per_sec: float = Field(10.0, gt=0)
    default_host: HostPolicy = HostPolicy(concurrency=2, interval_ms=500)
    gov_host: HostPolicy = HostPolicy(concurrency=1, interval_ms=1000)
    per_host_overrides: dict[str, HostPolicy] = Field(
        default_factory=lambda: {
            "eur-lex.europa.eu": HostPolicy(concurrency=1, interval_ms=10_000),
            "legifrance.gouv.fr": HostPolicy(concurrency=1, interval_ms=2_000),
        }
    )
    excluded_hosts: list[str] = Field(default_factory=lambda: ["linkedin.com"])
    connect_timeout_s: float = Field(10.0, gt=0)
    request_timeout_s: float = Field(15.0, gt=0, description="Whole-response deadline per attempt.")
    max_retries: int = Field(3, ge=1, le=10, description="Attempts per URL, the first included.")
    retry_backoff_s: list[float] = Field(default_factory=lambda: [1.0, 2.0, 4.0])
    retry_jitter_pct: float = Field(25.0, ge=0, le=100)
    retry_after_cap_s: float = Field(60.0, ge=0)
    max_redirects: int = Field(5, ge=0, le=20)
    max_html_bytes: int = Field(5_000_000, ge=1024)
    max_pdf_bytes: int = Field(12_000_000, ge=1024)
    run_budget_s: float = Field(3600.0, gt=0, description="Wall-time bound for one fetch run.")
    breaker_failures: int = Field(3, ge=1, description="Consecutive timeouts/connection failures that open a host's breaker.")
    verify_tls: bool = True
    event_loop: Literal["auto", "uvloop", "asyncio"] = Field(
        "auto", description="auto = uvloop when installed (it is a dependency on Linux and macOS), else asyncio's.")
    robots_enabled: bool = True
    robots_timeout_s: float = Field(10.0, gt=0)
    robots_cache_hours: float = Field(
        24.0, ge=0,
        description="robots.txt kept in the page cache is reused without a request while younger than this "
        "(RFC 9309 §2.4: generally not over 24 h); older, it is re-validated conditionally (304 keeps it). "
        "0 = never reused without asking the server.",
    )
    min_text_chars: int = Field(200, ge=0)
    js_spa_hosts: list[str] = Field(default_factory=lambda: ["elegislation.gov.hk"])
    binary_content_prefixes: list[str] = Field(
        default_factory=lambda: ["application/octet-stream", "application/zip", "image/", "audio/", "video/"]
    )
    blocked_status_codes: list[int] = Field(default_factory=lambda: [403, 429, 503, 999])
    challenge_titles: list[str] = Field(default_factory=lambda: ["Just a moment", "Attention Required", "One more step"])
    allow_hosts: list[str] = Field(
        default_factory=list, description="Hosts allowed past the SSRF guard (exact names)."
    )
    allow_networks: list[str] = Field(
        default_factory=list, description="Addresses or CIDR ranges allowed past the SSRF guard."
    )
    address_map: dict[str, str] = Field(
        default_factory=dict,
        description="host -> 'ip:port', like curl --resolve; '*.suffix' keys match subdomains.",
    )

    @field_validator("retry_backoff_s")
    @classmethod
    def _backoff_nonempty(cls, v: list[float]) -> list[float]:
        if not v or any(x < 0 for x in v):
            raise ValueError("needs at least one non-negative number of seconds")
        return v


class PdfSettings(_Strict):
    enabled: bool = True
    max_pages: int = Field(300, ge=0, description="0 = every page.")
    timeout_s: float = Field(60.0, gt=0)
    max_text_chars: int = Field(5_000_000, ge=1000)


class PriorSettings(_Strict):
    excerpt_window_chars: int = Field(400, ge=40)
    max_excerpts_per_claim: int = Field(4, ge=1)


class LinterSettings(_Strict):
    root_url_allowlist: list[str] = Field(default_factory=list)


class SamplingWeights(_Strict):
    stale_marker: float = 100
    never_verified: float = 50
    stamp_age_per_30d: float = 8
    salient_statute_or_money: float = 10


class SamplingSettings(_Strict):
    default_sample: int = Field(60, ge=1)
    seed: int = 1234
    priority_weights: SamplingWeights = SamplingWeights()


class CacheSettings(_Strict):
    db_url: str | None = Field(None, description="SQLAlchemy URL; default sqlite under <home>/cache.")
    blob_dir: Path | None = Field(None, description="Default <home>/cache/blobs.")
    ttl_days: float = Field(30, ge=0, description="Worklist runs reuse fetches younger than this.")
    diff_context_lines: int = Field(2, ge=0)
    max_diff_lines: int = Field(200, ge=1)


class Settings(_Strict):
    home: Path | None = Field(None, description="Outputs root; default $CLAIMS_PIPELINE_HOME or ~/.claims_pipeline.")
    extraction: ExtractionSettings = ExtractionSettings()
    fetch: FetchSettings = FetchSettings()
    pdf: PdfSettings = PdfSettings()
    priors: PriorSettings = PriorSettings()
    linter: LinterSettings = LinterSettings()
    sampling: SamplingSettings = SamplingSettings()
    cache: CacheSettings = CacheSettings()
    source_file: Path | None = Field(None, exclude=True, description="Where these settings came from.")

    # ---- derived locations -------------------------------------------------------------------
    @property
    def corpus_dir(self) -> Path:
        return self.extraction.corpus_dir or DEMO_CORPUS_DIR

    @property
    def home_dir(self) -> Path:
        if self.home is not None:
            return self.home
        env = os.environ.get(ENV_HOME)
        return Path(env).expanduser() if env else Path.home() / ".claims_pipeline"

    @property
    def cache_db_url(self) -> str:
        return self.cache.db_url or f"sqlite:///{self.home_dir / 'cache' / 'index.sqlite'}"

    @property
    def blob_dir(self) -> Path:
        return self.cache.blob_dir or self.home_dir / "cache" / "blobs"

    @property
    def reports_dir(self) -> Path:
        return self.home_dir / "reports"

    def primary_allowlist(self) -> frozenset[str]:
        """Hosts from the allowlist file (lines split at '#', stripped, blanks skipped) and the inline list."""
        hosts = {h.strip().lower() for h in self.extraction.primary_allowlist if h.strip()}
        path = self.extraction.primary_allowlist_file
        if path is not None:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                where = self.source_file or "<defaults>"
                raise ConfigError(
                    f"{where}: extraction.primary_allowlist_file: cannot read {path}: {exc.strerror}"
                ) from exc
            for line in text.splitlines():
                host = line.split("#", 1)[0].strip().lower()
                if host:
                    hosts.add(host)
        return frozenset(hosts)


_PATH_KEYS = (("home",), ("extraction", "corpus_dir"), ("extraction", "primary_allowlist_file"), ("cache", "blob_dir"))


def _resolve_relative(data: dict[str, Any], base: Path) -> None:
    for keys in _PATH_KEYS:
        node: Any = data
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(keys[-1]), str):
            p = Path(node[keys[-1]]).expanduser()
            node[keys[-1]] = str(p if p.is_absolute() else (base / p).resolve())


def _format_errors(path: Path | str, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        lines.append(f"{path}: {key}: {msg}")
    return "\n".join(lines)


def settings_from_dict(data: dict[str, Any], *, source: Path | str = "<dict>", base_dir: Path | None = None) -> Settings:
    """Validate a mapping into Settings; paths are resolved against base_dir when given."""
    data = dict(data or {})
    if base_dir is not None:
        _resolve_relative(data, base_dir)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(source, exc)) from None
    return settings.model_copy(update={"source_file": Path(source) if source != "<dict>" else None})


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    if explicit:
        return Path(explicit)
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env)
    candidate = Path.cwd() / DEFAULT_CONFIG_RELPATH
    return candidate if candidate.is_file() else None


def load_settings(path: str | os.PathLike[str] | None = None) -> Settings:
    """Load and validate settings (see module doc for the lookup order)."""
    file = find_config_file(path)
    if file is None:
        return Settings()
    try:
        raw = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config file: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark else str(file)
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: (top level): expected a mapping of sections, got {type(data).__name__}")
    return settings_from_dict(data, source=file, base_dir=file.resolve().parent)


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("claims_pipeline")
    except Exception:  # not installed (running from a checkout)
        return "0.0.0"
