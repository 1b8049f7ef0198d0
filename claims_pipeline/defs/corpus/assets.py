"""The corpus, per scope: its markdown files → the claims they state → the citation linter's findings."""


from typing import Any

import dagster as dg

from claims_pipeline.defs.metadata import NOTE_LIMIT, WHERE_LIMIT, counts, md_list, md_table
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline.defs.scoped import scope_asset, scoped_output
from claims_pipeline.report.md_tables import Link, where
from claims_pipeline.steps.corpus import (
    CorpusDocuments,
    LintFindings,
    ScopeClaims,
    claims_by_scope,
    documents_by_scope,
    lint_by_scope,
)


@scope_asset(kinds={"markdown"})
def corpus_documents(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.Output[dict[str, CorpusDocuments]]:
    """The scope's markdown files and their content hashes (data version = hash of the scope's files)."""
    corpus = claims_config.corpus
    docs = documents_by_scope(corpus, list(context.partition_keys))
    for scope in docs.empty_scopes:
        context.log.warning(f"scope {scope!r}: no markdown files under {corpus.root} (folder removed?)")
    return scoped_output(context, docs.values,
                         lambda s: {"files": len(docs.values[s].files), "file_list": md_list(docs.values[s].files)},
                         {s: v.hash for s, v in docs.values.items()})


@scope_asset(kinds={"python"})
def claims(context: dg.AssetExecutionContext, claims_config: ClaimsConfig,
           corpus_documents: dict[str, CorpusDocuments]) -> dg.Output[dict[str, ScopeClaims]]:
    """Claims (a sentence stating figures + the primary source it links) extracted from the scope's files."""
    extracted = claims_by_scope(claims_config.corpus, list(context.partition_keys))
    for warning in extracted.warnings:
        context.log.warning(warning)  # bad input: named by file and line, never fatal

    def metadata_of(scope: str) -> dict[str, Any]:
        rows = extracted.records.get(scope, [])
        return {
            "claims": len(rows),
            "by_tier": dg.MetadataValue.json(counts(c.source_tier for c in rows)),
            "never_verified": sum(1 for c in rows if not c.last_verified),
            "warnings": len(extracted.values[scope].warnings),
            "claims_table": md_table(
                ["id", "section", "figures", "verified", "url"],
                ([c.id, c.section, ", ".join(v.raw for v in c.salient_values), c.last_verified or "", Link(c.source_url)]
                 for c in rows), limits=[30, 30, 40, 12], cut_note=True),
        }

    return scoped_output(context, extracted.values, metadata_of, {s: v.data_hash() for s, v in extracted.values.items()})


@scope_asset(kinds={"python"})
def citation_lint(context: dg.AssetExecutionContext, claims_config: ClaimsConfig,
                  corpus_documents: dict[str, CorpusDocuments]) -> dg.Output[dict[str, LintFindings]]:
    """Citations that point at a primary portal's root next to a figure (advisory: the claim cannot be checked
    against a home page)."""
    findings = lint_by_scope(claims_config.corpus, claims_config.linter, list(context.partition_keys))
    return scoped_output(context, findings, lambda s: {
        "findings": len(findings[s].findings),
        "findings_table": md_table(["where", "url", "context"],
                                   ([where(f.file, f.line), Link(f.url), f.context] for f in findings[s].findings),
                                   limits=[WHERE_LIMIT, None, NOTE_LIMIT], cut_note=True),
    })
