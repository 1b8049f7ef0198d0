"""Run as a subprocess by the crash test: one refresh_pages run (killable at any moment)."""

from __future__ import annotations

import sys
from pathlib import Path

from claims_pipeline.config.settings import load_settings
from claims_pipeline.steps.pages.refresh import refresh_pages


def main(config: str, run_id: str, urls_file: str) -> None:
    urls = Path(urls_file).read_text(encoding="utf-8").split()
    refresh_pages(load_settings(config).page_fetching, urls, run_id=run_id)


if __name__ == "__main__":
    main(*sys.argv[1:4])
