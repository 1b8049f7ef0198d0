"""``python -m claims_pipeline_demo.fixture_web --port 8765``: run the fixture web by hand."""

from __future__ import annotations

import argparse
import json
import time

from claims_pipeline_demo.fixture_web.server import FixtureWeb


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m claims_pipeline_demo.fixture_web", description=__doc__)
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--sites", default=None, help="sites folder (default: the package's fixture_web/sites)")
    ap.add_argument("--log", default=None, help="JSONL request log path")
    ap.add_argument("--epoch", type=int, default=1)
    args = ap.parse_args()
    with FixtureWeb(args.sites, port=args.port, log_path=args.log) as web:
        web.set_epoch(args.epoch)
        print(f"fixture web on http://127.0.0.1:{web.port}/  (virtual hosts by Host header)")
        print("fetch.address_map for your config:")
        print(json.dumps(web.address_map(), indent=2))
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
