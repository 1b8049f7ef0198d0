"""Shared fixtures: one fixture web per module, and settings that route fictional hosts to it (loopback only)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from claims_pipeline.config.settings import Settings, settings_from_dict
from claims_pipeline.web.fetcher import fetch_urls
from claims_pipeline.web.records import FetchResult
from claims_pipeline_demo.fixture_web.server import FixtureWeb

ROBOTS_SITE = "polite.fixture"


def no_dns(host: str) -> list[str]:
    """Tests never ask a real resolver: every host they use is in address_map, anything else fails loudly."""
    raise OSError(f"test resolver: {host} is not mapped to the fixture web")


def run_fetch(settings: Settings, urls: list[str], **kwargs: Any) -> list[FetchResult]:
    kwargs.setdefault("resolver", no_dns)
    return fetch_urls(settings.fetch, settings.pdf, urls, **kwargs)


@pytest.fixture(scope="module")
def sites_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sites")
    polite = root / ROBOTS_SITE
    (polite / "private").mkdir(parents=True)
    (polite / "robots.txt").write_text("User-agent: *\nDisallow: /private/\nCrawl-delay: 0.3\n")
    (polite / "private" / "secret.html").write_text("<html><body>must never be fetched</body></html>")
    return root


@pytest.fixture(scope="module")
def web(sites_dir: Path) -> Iterator[FixtureWeb]:
    with FixtureWeb(sites_dir) as server:
        yield server


def fast_fetch(web: FixtureWeb, **overrides: Any) -> Settings:
    """Small intervals and timeouts so the suite stays fast; 127.0.0.1 is the only allowed private address."""
    fetch: dict[str, Any] = {
        "address_map": {**web.address_map(), **web.address_map(["tax.gov.xa"])},
        "allow_networks": ["127.0.0.1/32"],
        "default_host": {"concurrency": 2, "interval_ms": 20},
        "gov_host": {"concurrency": 1, "interval_ms": 20},
        "per_host_overrides": {},
        "req_per_sec": 200,
        "connect_timeout_s": 1.0,
        "request_timeout_s": 1.0,
        # robots.txt is answered at once by the fixture web; a test of an unreachable one sets its own timeout,
        # so this one only has to outlast a busy machine (robots that miss it are a complete disallow: ROBOTS)
        "robots_timeout_s": 5.0,
        "max_retries": 2,
        "retry_backoff_s": [0.02],
        "retry_jitter_pct": 0,
        "retry_after_cap_s": 2,
        "max_html_bytes": 200_000,
        "max_pdf_bytes": 400_000,
        "breaker_failures": 3,
        "excluded_hosts": ["excluded.fixture"],
        "js_spa_hosts": ["spa.fixture"],
    }
    fetch.update(overrides)
    return settings_from_dict({"fetch": fetch})


@pytest.fixture
def settings_for(web: FixtureWeb) -> Callable[..., Settings]:
    return lambda **overrides: fast_fetch(web, **overrides)


@pytest.fixture
def tcp_server() -> Iterator[Callable[[Callable[[socket.socket], None]], tuple[int, list[int]]]]:
    """Start a raw TCP server whose every accepted connection is handled by `handler` in its own thread.
    Returns (port, accepted) where accepted counts connections."""
    servers: list[socket.socket] = []

    def start(handler: Callable[[socket.socket], None]) -> tuple[int, list[int]]:
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        servers.append(srv)
        accepted: list[int] = []

        def serve() -> None:
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                accepted.append(1)
                threading.Thread(target=_guarded, args=(handler, conn), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        return srv.getsockname()[1], accepted

    yield start
    for srv in servers:
        srv.close()


def _guarded(handler: Callable[[socket.socket], None], conn: socket.socket) -> None:
    try:
        handler(conn)
    except OSError:
        pass
    finally:
        conn.close()


def read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return b""
        data += chunk
    return data
