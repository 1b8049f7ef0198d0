"""One-line explanations of a corpus run that found nothing, for the commands (extract, lint, audit): which
setting left the files out, or what a claim needs. Never imports Dagster."""

from __future__ import annotations

from claims_pipeline.config.corpus_source import CorpusSource

CLAIM_NEEDS = ("a claim is a line that states a figure (a percentage, an amount, a statute number or a date) and "
               "links the page that gives it, on the same line or by a reference or footnote")


def no_claim_message(corpus: CorpusSource, files: int, *, scopes: list[str] | None = None,
                     include_secondary: bool = False) -> str:
    """`files` were read and gave no claim: what a claim needs, and when citations were left out by the
    official-only setting, how many."""
    from claims_pipeline.corpus.extract import extract_corpus

    why = CLAIM_NEEDS
    if corpus.extraction.primary_only and not include_secondary:
        others = len(extract_corpus(corpus, scopes=scopes, include_secondary=True).claims)
        if others:
            why = (f"{others} figure{'s' * (others != 1)} cite{'s' * (others == 1)} sources that are not official, "
                   "left out by extraction.primary_only: true")
    return (f"{files} file{'s' * (files != 1)} read, no claim found: {why}; hint: docs/user-guide.md, "
            "\"What a claim is\", and `claims-pipeline extract --out claims.json` to see what is read")
