"""Settings for fetching from the fixture web in tests: only 127.0.0.1 is allowed, short intervals and timeouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from claims_pipeline.config.settings import Settings, settings_from_dict
from claims_pipeline_demo.fixture_web.server import FixtureWeb


def fixture_config(web: FixtureWeb, home: Path, *, interval_ms: int = 20, concurrency: int = 2, **fetch: Any) -> dict[str, Any]:
    return {
        "home": str(home),
        "fetch": {
            "allow_networks": ["127.0.0.1/32"],
            "address_map": web.address_map(),
            "default_host": {"concurrency": concurrency, "interval_ms": interval_ms},
            "gov_host": {"concurrency": 1, "interval_ms": interval_ms},
            "per_host_overrides": {},
            "req_per_sec": 200,
            "request_timeout_s": 3,
            "connect_timeout_s": 1,
            "robots_timeout_s": 1,
            "max_retries": 1,
            "retry_backoff_s": [0.05],
            "run_budget_s": 60,
            **fetch,
        },
    }


def fixture_settings(web: FixtureWeb, home: Path, **kwargs: Any) -> Settings:
    return settings_from_dict(fixture_config(web, home, **kwargs))


def write_config(web: FixtureWeb, home: Path, path: Path, **kwargs: Any) -> Path:
    path.write_text(yaml.safe_dump(fixture_config(web, home, **kwargs)), encoding="utf-8")
    return path
