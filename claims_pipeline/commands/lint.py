"""`claims-pipeline lint`: citations pointing at a primary portal's root next to a figure (advisory). The findings
are the result (stdout; --json: one JSON document)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from claims_pipeline.commands import options
from claims_pipeline.commands.extract import corpus_for, scopes_for
from claims_pipeline.common.text_safety import name_escaped, terminal_escaped

OPTIONS = [options.CORPUS, options.SCOPE, options.JSON]
if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true", help="exit 1 when there is any finding")
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="only these markdown files of the corpus (what a pre-commit hook passes); a file outside "
                        "the corpus's scope folders is named and left out")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from claims_pipeline.corpus.linter import corpus_files, corpus_rel, lint_corpus

    corpus = corpus_for(args, settings)
    skipped: list = []
    scopes = scopes_for(corpus, args.scope)
    only = None
    if args.files:
        given = [Path(f) for f in args.files]
        linted = corpus_files(corpus)
        for path in given:
            if path.resolve() not in linted:
                print(name_escaped(f"note: {path} is not a file of the corpus ({corpus.root}): not linted"),
                      file=sys.stderr)
        only = [p for p in given if p.resolve() in linted]
    findings = lint_corpus(corpus, settings.linter, scopes, skipped, only=only)
    for warning in skipped:  # files not linted (a FIFO, a link leaving the corpus, over the size cap, binary)
        print(f"warning: {warning}", file=sys.stderr)
    output = options.Result(args.json)
    output.document({"findings": [{"file": f.file, "line": f.line, "url": f.url, "context": f.context} for f in findings]})
    if not findings:
        from claims_pipeline.corpus.explain import no_claim_message
        from claims_pipeline.corpus.extract import extract_corpus

        extraction = extract_corpus(corpus, scopes=scopes)
        if only is not None:  # the files given, not the corpus: what was linted is what the line counts
            named = {corpus_rel(corpus.root, p.resolve()) for p in only}
            extraction.claims = [c for c in extraction.claims if c.file in named]
            extraction.files = [f for f in extraction.files if f in named]
        if not extraction.claims:  # nothing to lint is no clean bill: say why
            message = no_claim_message(corpus, len(extraction.files), scopes=scopes)
            if args.json:  # the document's empty findings would read as a clean bill: the reason on stderr
                print(terminal_escaped(message), file=sys.stderr)
            output.line(message)
            return 0
        output.line(f"✓ no domain-root citations next to a figure ({len(extraction.claims)} claims in "
                    f"{len(extraction.files)} files)")
        return 0
    output.line(f"⚠️  {len(findings)} citation(s) point at a PRIMARY-SOURCE domain ROOT next to a figure "
                "(cite the page that holds the figure):")
    for f in findings:  # file names, URLs and lines are the corpus's own text: Result.line escapes them
        output.line(f"  {name_escaped(f.file)}:{f.line}  → {f.url}\n      {f.context}")
    output.line("(advisory: add deep links, or list deliberate roots in linter.root_url_allowlist)")
    return 1 if args.strict else 0
