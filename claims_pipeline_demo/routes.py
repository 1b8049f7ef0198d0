"""How the demo reaches its fictional hosts: every *.xa, *.xb, *.xc host routed to the bundled fixture web on
loopback, and the fixture web's epoch (which version of its pages it serves) kept in the demo's home, so a UI
run after `claims-pipeline demo` sees the pages the demo's last audit saw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claims_pipeline.config.home import HomeLayout
from claims_pipeline.config.settings import FetchSettings

DEMO_CONFIG = Path(__file__).resolve().with_name("demo.yaml")
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


def with_fixture_routes(fetch: FetchSettings, address: str) -> FetchSettings:
    """The fetcher's settings, sending every demo host to the fixture web at `address` (ip:port) and nowhere else."""
    routes = fixture_routes(dict(fetch.address_map), address)
    routes["allow_networks"] = sorted({*fetch.allow_networks, *routes["allow_networks"]})
    return fetch.model_copy(update=routes)


def saved_epoch(home: Path) -> int:
    """The fixture web's epoch the demo left in `home` (1 before any demo, or when the file is not the demo's
    one small number). Read bounded from a regular file (a FIFO or a link to /dev/zero put there would hang the
    resource's start) and capped: the fixture web looks for a page variant at every epoch below it."""
    import re

    from claims_pipeline.corpus.reading import read_regular
    from claims_pipeline_demo.fixture_web.server import MAX_EPOCH

    try:
        text = read_regular(HomeLayout(home).fixture_epoch_file, 64).decode("ascii").strip()
    except (OSError, ValueError):
        return 1
    return min(int(text), MAX_EPOCH) if re.fullmatch(r"[1-9][0-9]{0,5}", text) else 1


def save_epoch(home: Path, epoch: int) -> None:
    from claims_pipeline.store.files import write_text_atomically

    write_text_atomically(HomeLayout(home).fixture_epoch_file, f"{epoch}\n")
