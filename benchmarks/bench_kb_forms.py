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
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from claims_pipeline.config.corpus_source import CorpusSource, corpus_source
from claims_pipeline.config.settings import ExtractionSettings, LinterSettings
from claims_pipeline.corpus.extract import ExtractOptions, extract_text
from claims_pipeline.corpus.linter import lint_text
from claims_pipeline.corpus.reading import read_markdown
from claims_pipeline.corpus.records import Extraction

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "claims_pipeline_tests" / "corpus" / "kb_forms"
_DEFINITION_LINE_RE = re.compile(r"^ {0,3}\[[^\]\n]+\]:")


@dataclass(frozen=True)
class Label:
    file: str
    line: int
    form: str
    figure: str  # "-": the line states no claim
    url: str


def norm(figure: str) -> str:
    return re.sub(r"[\s\u00a0\u202f\u2009*_]", "", figure).replace("’", "'").casefold()


def read_labels(corpus: Path) -> list[Label]:
    labels = []
    for n, row in enumerate((corpus / "expected.tsv").read_text(encoding="utf-8").splitlines(), start=1):
        if not row.strip() or row.startswith("#"):
            continue
        cells = row.split("\t")
        if len(cells) != 5:
            raise SystemExit(f"{corpus / 'expected.tsv'}:{n}: 5 tab-separated cells expected, got {len(cells)}")
        labels.append(Label(cells[0], int(cells[1]), cells[2], cells[3], cells[4]))
    return labels


def check_labels(corpus: Path, labels: list[Label]) -> list[str]:
    """Problems of the labels themselves: a file missing, a figure not written on its line."""
    problems = []
    for lab in labels:
        path = corpus / lab.file
        if not path.is_file():
            problems.append(f"{lab.file}: no such file")
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        if not 1 <= lab.line <= len(lines):
            problems.append(f"{lab.file}:{lab.line}: no such line")
        elif lab.figure != "-" and norm(lab.figure) not in norm(lines[lab.line - 1]):
            problems.append(f"{lab.file}:{lab.line}: figure {lab.figure!r} is not on the line")
    return problems


@dataclass
class Run:
    extraction: Extraction
    lint: list[tuple[str, int, str]]  # (file, line, url) of the lint findings
    definition_lines: set[tuple[str, int]]


def extract(corpus: Path, *, include_secondary: bool) -> Run:
    """Every markdown file of the corpus, each read by the extractor (the corpus walk's layout rules are not
    what is measured here: each file is handed over with its corpus-relative name)."""
    defaults = CorpusSource(corpus, ExtractionSettings())
    opts = ExtractOptions.of(defaults.extraction, include_secondary=include_secondary)
    out = Extraction()
    lint: list[tuple[str, int, str]] = []
    definition_lines: set[tuple[str, int]] = set()
    for path in sorted(corpus.rglob("*.md")):
        rel = path.relative_to(corpus).as_posix()
        text, warnings = read_markdown(path, rel, opts.max_file_bytes)
        out.warnings += warnings
        if text is None:
            continue
        out.files.append(rel)
        extract_text(text, scope=rel.split("/", 1)[0], rel=rel, opts=opts, out=out)
        lint += [(rel, f.line, f.url) for f in lint_text(text, rel=rel, corpus=defaults, linter=LinterSettings())]
        definition_lines |= {(rel, n) for n, line in enumerate(text.split("\n"), start=1) if _DEFINITION_LINE_RE.match(line)}
    return Run(out, lint, definition_lines)


def extract_as_configured(corpus: Path) -> Run:
    """The same corpora as a new user runs them: the default settings with nothing but the corpus folder set, read
    through the corpus walk (its layout rules, its scopes) as `claims-pipeline extract` reads them."""
    from claims_pipeline.config.settings import settings_from_dict
    from claims_pipeline.corpus.extract import extract_corpus

    settings = settings_from_dict({"extraction": {"corpus_dir": str(corpus)}})
    out = extract_corpus(corpus_source(settings))
    definition_lines: set[tuple[str, int]] = set()
    for rel in out.files:
        text = (corpus / rel).read_text(encoding="utf-8")
        definition_lines |= {(rel, n) for n, line in enumerate(text.split("\n"), start=1) if _DEFINITION_LINE_RE.match(line)}
    return Run(out, [], definition_lines)


def score(labels: list[Label], run: Run) -> dict:
    expected = {(lab.file, lab.line, norm(lab.figure), lab.url) for lab in labels if lab.figure != "-"}
    form_of_line = {(lab.file, lab.line): lab.form for lab in labels}
    form_of_link = {(lab.file, lab.line, lab.url): lab.form for lab in labels if lab.url != "-"}
    form_of = {(lab.file, lab.line, norm(lab.figure), lab.url): lab.form for lab in labels if lab.figure != "-"}
    got = {(c.file, c.line_no, norm(v.raw), c.source_url) for c in run.extraction.claims for v in c.values if v.salient}
    by_form: dict[str, Counter] = defaultdict(Counter)
    for t in expected:
        by_form[form_of[t]]["expected"] += 1
        by_form[form_of[t]]["found"] += t in got
    for t in got:
        form = form_of_link.get((t[0], t[1], t[3])) or form_of_line.get((t[0], t[1]), "unlabelled")
        by_form[form]["extracted"] += 1
        by_form[form]["correct"] += t in expected
    total = Counter()
    for c in by_form.values():
        total.update(c)
    return {
        "by_form": dict(by_form), "total": total,
        "missed": sorted(expected - got), "wrong": sorted(got - expected),
        "on_definition_lines": sum((t[0], t[1]) in run.definition_lines for t in got),
    }


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
