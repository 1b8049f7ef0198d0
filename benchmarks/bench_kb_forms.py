"""Extraction quality on markdown as people write it: recall and precision of claims, by citation form.

The corpora are the project's own (claims_pipeline_tests/corpus/kb_forms/: a city guide citing by footnotes,
a French service handbook built with templates, a German policy blog with tables and "Quelle:" lines), each in
its own folder layout, with hand-labelled expected claims in expected.tsv. A claim is counted as the tuple
(file, line, figure, URL): a salient figure stated with a link that should support it. Recall is the share of
labelled tuples extracted; precision the share of extracted tuples that are labelled. Each extracted tuple
takes the form of the label of its line and URL, else of its line ("unlabelled" when its line has none). "claims on footnote definition lines"
counts extracted tuples on a `[^x]: …` or `[ref]: …` line (target 0). Not a test: numbers, no asserts.

    .venv/bin/python benchmarks/bench_kb_forms.py [--corpus DIR] [--primary-only] [--show-misses]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from claims_pipeline_tests.support.kb_forms_scoring import (  # noqa: E402  (the labels and the scoring, shared with the test)
    DEFAULT_CORPUS,
    check_labels,
    extract,
    extract_as_configured,
    read_labels,
    score,
)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f} %" if b else "    — "


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder holding the corpora and expected.tsv")
    ap.add_argument("--primary-only", action="store_true", help="primary citations only (default: secondary too)")
    ap.add_argument("--show-misses", action="store_true", help="list the missed and the wrong tuples")
    args = ap.parse_args(argv)
    labels = read_labels(args.corpus)
    problems = check_labels(args.corpus, labels)
    if problems:
        print("\n".join(f"label problem: {p}" for p in problems), file=sys.stderr)
        return 2
    run = extract(args.corpus, include_secondary=not args.primary_only)
    s = score(labels, run)
    print(f"kb_forms: {len(run.extraction.files)} files, {sum(lab.figure != '-' for lab in labels)} labelled claims, "
          f"{'primary only' if args.primary_only else 'secondary sources included'}")
    print(f"{'form':<22}{'expected':>9}{'found':>7}{'recall':>9}{'extracted':>11}{'correct':>9}{'precision':>11}")
    for form in sorted(s["by_form"]):
        c = s["by_form"][form]
        print(f"{form:<22}{c['expected']:>9}{c['found']:>7}{_pct(c['found'], c['expected']):>9}"
              f"{c['extracted']:>11}{c['correct']:>9}{_pct(c['correct'], c['extracted']):>11}")
    t = s["total"]
    print(f"{'overall':<22}{t['expected']:>9}{t['found']:>7}{_pct(t['found'], t['expected']):>9}"
          f"{t['extracted']:>11}{t['correct']:>9}{_pct(t['correct'], t['extracted']):>11}")
    print(f"claims on footnote definition lines: {s['on_definition_lines']} (target 0)")
    stats = run.extraction
    print(f"template figures skipped: {stats.skipped_template_figures}; home-page rows (lint findings, no claim): "
          f"{len(run.lint)}")
    as_user = score(labels, extract_as_configured(args.corpus))
    t = as_user["total"]
    print(f"nothing configured but the folder (default settings, the corpus walk): recall "
          f"{_pct(t['found'], t['expected']).strip()}, precision {_pct(t['correct'], t['extracted']).strip()}, "
          f"claims on footnote definition lines {as_user['on_definition_lines']}")
    if args.show_misses:
        for label, rows in (("missed", s["missed"]), ("wrong", s["wrong"])):
            for row in rows:
                print(f"{label}: {row[0]}:{row[1]} {row[2]!r} {row[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
