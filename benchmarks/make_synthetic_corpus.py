"""The synthetic corpus generator's command: claims_pipeline_tests/support/synthetic_corpus.py says what it writes.

    .venv/bin/python benchmarks/make_synthetic_corpus.py --claims 100000 --files 10000 --urls 20000 \
        --hosts 500 --out /tmp/synth100k [--scopes 1000] [--seed 7] [--page-kb 6] [--address 127.0.0.1:8765]

The benchmarks import `generate` and `route_to` from here, as before the generator moved beside the tests'
support code (the tests may use it; they import no benchmark).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from claims_pipeline_tests.support.synthetic_corpus import generate, main, route_to  # noqa: E402

__all__ = ["generate", "main", "route_to"]

if __name__ == "__main__":
    sys.exit(main())
