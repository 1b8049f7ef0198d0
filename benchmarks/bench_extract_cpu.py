"""CPU time and peak RSS of one extraction of a corpus folder, with whatever code is first on PYTHONPATH: run it
with two trees, interleaved, to compare them under the same machine load (wall time on a shared machine varies
far more than CPU time). Not a test: one JSON line.

    PYTHONPATH=<tree> .venv/bin/python benchmarks/bench_extract_cpu.py CORPUS_DIR [WORKERS]   # 1: serial, 0: auto
"""

from __future__ import annotations

import json
import resource
import sys
import time

from claims_pipeline.config.corpus_source import corpus_source
from claims_pipeline.config.settings import settings_from_dict
from claims_pipeline.corpus.extract import extract_corpus


def main() -> None:
    root, workers = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
    corpus = corpus_source(settings_from_dict({"extraction": {"corpus_dir": root, "workers": workers}}))
    t0, c0 = time.perf_counter(), time.process_time()
    ex = extract_corpus(corpus)
    print(json.dumps({"claims": len(ex.claims), "cpu_s": round(time.process_time() - c0, 2),
                      "wall_s": round(time.perf_counter() - t0, 2),
                      "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "worker_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}))


if __name__ == "__main__":
    main()
