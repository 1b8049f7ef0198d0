"""Resources: the settings file, the page cache and the fetcher (with the bundled fixture web for the demo).

Settings stay the one source of truth (claims_pipeline/settings.py); the resources only say which file to
load, what "now" is (tests and replays pin the clock) and whether the demo's fixture web must be started.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import dagster as dg
from pydantic import PrivateAttr

from claims_pipeline.settings import DEMO_CORPUS_DIR, PACKAGE_DIR, Settings, find_config_file, load_settings

DEMO_CONFIG = PACKAGE_DIR / "demo" / "demo.yaml"
DEMO_TLDS = ("xa", "xb", "xc")  # the demo corpus cites only fictional hosts under these TLDs


def fixture_routes(address_map: dict[str, str], address: str) -> dict[str, Any]:
    """fetch.address_map / allow_networks that send every demo host to the fixture web at `address` (ip:port).

    The wildcards *.xa, *.xb, *.xc go to `address` even when the map already routes them elsewhere: a config
    written by `claims-pipeline demo` names the demo's own fixture web, whose port is closed once the demo
    ends, and a later run (the UI, `audit --config <home>/demo/demo.yaml`) must reach the fixture web it
    started itself. Exact host entries still win over the wildcards (the demo maps one host to 127.0.0.2 so
    that the SSRF guard refuses it). Only the fixture web's own address is allowed: even a guard bug could
    reach nothing but loopback.
    """
    ip = address.rsplit(":", 1)[0]
    wildcards = {f"*.{tld}": address for tld in DEMO_TLDS}
    return {
        "address_map": {**wildcards, **{k: v for k, v in address_map.items() if k.lower() not in wildcards}},
        "allow_networks": [f"{ip}/32"],
    }


def with_fixture_routes(settings: Settings, address: str) -> Settings:
    """Settings whose fetcher sends every demo host to the fixture web at `address` (ip:port) and nowhere else."""
    routes = fixture_routes(dict(settings.fetch.address_map), address)
    routes["allow_networks"] = sorted({*settings.fetch.allow_networks, *routes["allow_networks"]})
    fetch = settings.fetch.model_copy(update=routes)
    return settings.model_copy(update={"fetch": fetch})


class ClaimsConfig(dg.ConfigurableResource):
    """Which settings file to use and what time it is.

    config_path: a claims_pipeline YAML file; empty means the bundled demo config (demo/demo.yaml).
    clock: an ISO-8601 instant used as "now" for fetch times and the audit date; empty means the wall clock.
    """

    config_path: str = ""
    clock: str = ""

    def load(self) -> Settings:
        # empty: the usual lookup ($CLAIMS_PIPELINE_CONFIG, ./config/claims_pipeline.yaml), else the demo's
        return load_settings(self.config_path or find_config_file(None) or DEMO_CONFIG)

    def now(self) -> datetime:
        if not self.clock:
            return datetime.now(timezone.utc)
        dt = datetime.fromisoformat(self.clock)
        return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


class PageCacheResource(dg.ConfigurableResource):
    """Opens the page cache (SQLite index + text blobs) named by the settings, for the length of a step."""

    config: ClaimsConfig

    @contextlib.contextmanager
    def open(self, settings: Settings | None = None) -> Iterator[Any]:
        from claims_pipeline.store.cache import PageCache

        s = settings or self.config.load()
        cache = PageCache.from_settings(s)
        try:
            yield cache
        finally:
            cache.close()


class FetcherResource(dg.ConfigurableResource):
    """Fetch options. fixture_web: "on" starts the bundled fixture web in this process for the run (ephemeral
    127.0.0.1 port) and routes the demo hosts to it; "auto" does so when the corpus is the bundled demo corpus
    (so `dagster dev` on the demo never looks up the fictional hosts anywhere else); "off" never."""

    config: ClaimsConfig
    fixture_web: str = "auto"
    fixture_epoch: int = 1
    force_refresh: bool = True  # the audit re-reads every cited page (reference §4); the worklist uses the TTL

    _address: str | None = PrivateAttr(default=None)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["FetcherResource"]:
        wanted = self.fixture_web == "on" or (
            self.fixture_web == "auto" and self.config.load().corpus_dir.resolve() == DEMO_CORPUS_DIR.resolve()
        )
        if not wanted:
            yield self
            return
        from claims_pipeline.fixture_web.server import FixtureWeb

        with FixtureWeb() as web:
            web.set_epoch(self.fixture_epoch)
            self._address = f"127.0.0.1:{web.port}"
            if context.log:
                context.log.info(f"fixture web for the demo hosts on http://{self._address} (epoch {self.fixture_epoch})")
            yield self

    def settings(self) -> Settings:
        s = self.config.load()
        return with_fixture_routes(s, self._address) if self._address else s

    def refresh(self, settings: Settings, urls: list[str], cache: Any, now: datetime, run_id: str | None = None) -> dict[str, Any]:
        from claims_pipeline.pages import refresh_pages

        # run_id from fetch_runs.fetch_run_id: a retry from failure resumes where the failed or killed run
        # stopped. Without the texts: the fetched_pages asset stores states by text_hash and the priors read
        # each text from the cache.
        return refresh_pages(settings, urls, cache=cache, force=self.force_refresh, now=now, run_id=run_id,
                             with_text=False)


def default_resources(config_path: str | dg.EnvVar | None = None, *, fixture_web: str = "auto", clock: str = "") -> dict[str, Any]:
    config = ClaimsConfig(config_path=config_path or "", clock=clock)
    from claims_pipeline.defs.storage import ScopeStoreIOManager

    return {
        "claims_config": config,
        "page_cache": PageCacheResource(config=config),
        "fetcher": FetcherResource(config=config, fixture_web=fixture_web),
        "io_manager": ScopeStoreIOManager(config=config),
    }


def demo_config_path() -> Path:
    return DEMO_CONFIG
