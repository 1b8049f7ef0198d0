"""The kb_forms corpora's labels and their scoring: recall and precision of extracted claims against the
hand-labelled tuples of expected.tsv (claims_pipeline_tests/corpus/kb_forms/). benchmarks/bench_kb_forms.py
prints the figures; claims_pipeline_tests/corpus/test_kb_forms.py holds the corpora to their targets."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from claims_pipeline.config.corpus_source import CorpusSource, corpus_source
from claims_pipeline.config.settings import ExtractionSettings, LinterSettings
from claims_pipeline.corpus.extract import ExtractOptions, extract_text
from claims_pipeline.corpus.linter import lint_text
from claims_pipeline.corpus.reading import read_markdown
from claims_pipeline.corpus.records import Extraction

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "kb_forms"
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
