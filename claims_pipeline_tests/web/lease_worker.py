"""Run as a subprocess by test_shared_politeness: one fetch run (pages.refresh_pages, the audit's path) on a page
cache shared with the other workers, so each host's politeness is shared through its database.

    python -m claims_pipeline_tests.web.lease_worker '<json spec>'

spec: db_url, blobs, home, fetch (settings' fetch mapping), urls, ready (a file touched once imports are done),
go (a file to wait for before fetching; none = at once). Prints one JSON line: the statuses counted, and when each
request head's write returned (host, wall clock): the client's side of the server's log."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.steps.pages.refresh import refresh_pages
from claims_pipeline.store.cache import PageCache
from claims_pipeline.web.politeness import HostThrottle


def no_dns(host: str) -> list[str]:  # as conftest's, without importing pytest into every worker
    raise OSError(f"test resolver: {host} is not mapped to the fixture web")


def main(spec_text: str) -> None:
    spec = json.loads(spec_text)
    settings = settings_from_dict({"home": spec["home"], "fetch": spec["fetch"]})
    cache = PageCache(spec["db_url"], Path(spec["blobs"]))
    Path(spec["ready"]).touch()
    if spec.get("go"):  # a barrier: every worker fetches at the same moment
        deadline = time.monotonic() + 30
        while not Path(spec["go"]).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    sent: list[tuple[str, float]] = []
    done = HostThrottle._send_done

    def recorded(self: HostThrottle, ok: bool) -> None:
        done(self, ok)
        if ok:
            sent.append((self.host, time.time()))

    HostThrottle._send_done = recorded  # type: ignore[method-assign]  # observed only, behaviour unchanged
    states = refresh_pages(settings.page_fetching, spec["urls"], cache=cache, force=True, resolver=no_dns, with_text=False)
    cache.close()
    print(json.dumps({"statuses": Counter(s.fetch_status for s in states.values()), "sent": sent}))


if __name__ == "__main__":
    main(sys.argv[1])
