"""The corpus steps, per scope: its markdown files and their hashes → the claims they state → the citation
linter's findings. Each record here is what its asset stores (steps/stored.py) and the next step reads."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.settings import LinterSettings
from claims_pipeline.corpus.hashes import combined_hash, scope_file_hashes
from claims_pipeline.corpus.linter import LintFinding
from claims_pipeline.corpus.records import ClaimRecord
from claims_pipeline.steps.stored import StoredStep


@dataclass(frozen=True)
class CorpusDocuments:
    """A scope's markdown files: corpus-relative path -> sha256, and one hash over them (the data version)."""

    corpus_dir: str
    files: dict[str, str]
    hash: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> CorpusDocuments:
        return cls(str(data["corpus_dir"]), dict(data["files"]), str(data["hash"]))


@dataclass(frozen=True)
class ScopeClaims:
    """A scope's claims and the extraction's warnings about its files.

    The claims stay in their stored form (ClaimRecord.to_dict's): the audit reads 100k of them as they are, and
    rebuilding a record each (records()) cost 2 s per 100k claims on the dev machine, each way."""

    claims: list[dict[str, Any]]
    warnings: list[str]

    def records(self) -> list[ClaimRecord]:
        return [ClaimRecord.from_dict(c) for c in self.claims]

    def urls(self) -> set[str]:
        return {c["source_url"] for c in self.claims}

    def data_hash(self) -> str:
        return hashlib.sha256(repr(self.claims).encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {"claims": self.claims, "warnings": self.warnings}

    @classmethod
    def from_json(cls, data: Any) -> ScopeClaims:
        return cls(list(data["claims"]), [str(w) for w in data.get("warnings", [])])


@dataclass(frozen=True)
class LintFindings:
    """Citations of a scope that point at a primary portal's root next to a figure (advisory)."""

    findings: list[LintFinding]

    def to_json(self) -> list[dict[str, Any]]:
        return [asdict(f) for f in self.findings]

    @classmethod
    def from_json(cls, data: Any) -> LintFindings:
        return cls([LintFinding(**f) for f in data])


# The stored forms (steps/stored.py): the Arrow type of each record's to_json(), field by field in its order.
_str, _int, _bool = pa.string(), pa.int64(), pa.bool_()
VALUE_FORM = pa.struct([("type", _str), ("raw", _str), ("needles", pa.list_(_str)), ("salient", _bool),
                        ("pos", _int), ("end", _int), ("number", pa.float64())])
CLAIM_FORM = pa.struct([
    ("id", _str), ("scope", _str), ("section", _str), ("line_no", _int), ("claim_text", _str),
    ("values", pa.list_(VALUE_FORM)), ("source_url", _str), ("source_host", _str), ("source_tier", _str),
    ("inline_stamp", pa.struct([("date", _str), ("kind", _str)])), ("link_kind", _str), ("last_verified", _str),
    ("last_verified_origin", _str), ("file", _str), ("source_reason", _str)])

DOCUMENTS = StoredStep("corpus_documents", CorpusDocuments, pa.struct([
    ("corpus_dir", _str), ("files", pa.map_(_str, _str)), ("hash", _str)]))
CLAIMS = StoredStep("claims", ScopeClaims, pa.struct([("claims", pa.list_(CLAIM_FORM)), ("warnings", pa.list_(_str))]))
LINT = StoredStep("citation_lint", LintFindings, pa.list_(pa.struct([
    ("file", _str), ("line", _int), ("url", _str), ("context", _str), ("scope", _str)])))


@dataclass
class DocumentsOfScopes:
    values: dict[str, CorpusDocuments]
    empty_scopes: list[str]  # partitions whose folder holds no markdown file (removed meanwhile?)


def documents_by_scope(corpus: CorpusSource, scopes: list[str]) -> DocumentsOfScopes:
    """Each scope's markdown files and their content hashes (the hash is the scope's data version)."""
    from claims_pipeline.corpus.scopes import list_scopes

    listed = list_scopes(corpus)
    values: dict[str, CorpusDocuments] = {}
    for scope in scopes:
        hashes = scope_file_hashes(listed.get(scope, []), corpus.root)
        values[scope] = CorpusDocuments(str(corpus.root), hashes, combined_hash(hashes))
    return DocumentsOfScopes(values, [s for s in scopes if not listed.get(s)])


def current_scope_hashes(corpus: CorpusSource) -> dict[str, str]:
    """Every scope of the corpus as it is now -> the hash corpus_documents would store for it."""
    from claims_pipeline.corpus.scopes import list_scopes

    return {s: combined_hash(scope_file_hashes(files, corpus.root)) for s, files in list_scopes(corpus).items()}


def stored_scope_hashes(home: Path, scopes: list[str]) -> dict[str, str]:
    """The file hash the last materialization of corpus_documents stored for each of `scopes` that has one (a
    damaged file counts as none: its scopes are audited again)."""
    from claims_pipeline.steps.stored import StoredValueDamaged

    try:
        stored, _ = DOCUMENTS.read_scopes(home, scopes)
    except (OSError, StoredValueDamaged):
        return {}
    return {scope: value.hash for scope, value in stored.items()}


def corpus_drift(corpus: CorpusSource, home: Path, scopes: list[str]) -> list[str]:
    """Corpus files whose bytes differ from what corpus_documents recorded under `home` for `scopes` (or that
    appeared or vanished): the proof that the pipeline never edits the corpus."""
    from claims_pipeline.corpus.scopes import list_scopes

    now = list_scopes(corpus)
    drift: list[str] = []
    for scope, stored in DOCUMENTS.read_scopes(home, scopes)[0].items():  # one read of the stored file
        recorded = stored.files
        current = scope_file_hashes(now.get(scope, []), corpus.root)
        for rel in sorted(set(recorded) | set(current)):
            if recorded.get(rel) != current.get(rel):
                what = "appeared" if rel not in recorded else "vanished" if rel not in current else "bytes differ"
                drift.append(f"{rel}: {what}")
    return drift


@dataclass
class ClaimsOfScopes:
    values: dict[str, ScopeClaims]
    records: dict[str, list[ClaimRecord]]
    warnings: list[str]  # every warning of the extraction, named by file and line
    skipped_pointer_links: int


def claims_by_scope(corpus: CorpusSource, scopes: list[str]) -> ClaimsOfScopes:
    """Claims extracted from the scopes' files, with each extraction warning filed under its file's scope."""
    from claims_pipeline.corpus.extract import extract_corpus

    extraction = extract_corpus(corpus, scopes=scopes)
    values: dict[str, ScopeClaims] = {s: ScopeClaims([], []) for s in scopes}
    records: dict[str, list[ClaimRecord]] = defaultdict(list)
    for c in extraction.claims:
        values.setdefault(c.scope, ScopeClaims([], [])).claims.append(c.to_dict())
        records[c.scope].append(c)
    scope_of_file = {f: s for s, files in extraction.scopes.items() for f in files}
    for w in extraction.warnings:
        scope = scope_of_file.get(w.file)
        if scope is not None and scope in values:
            values[scope].warnings.append(str(w))
    return ClaimsOfScopes(values, records, [str(w) for w in extraction.warnings], extraction.skipped_pointer_links)


def lint_by_scope(corpus: CorpusSource, linter: LinterSettings, scopes: list[str]) -> dict[str, LintFindings]:
    """Citations that point at a primary portal's root next to a figure (advisory)."""
    from claims_pipeline.corpus.linter import lint_corpus

    out: dict[str, LintFindings] = {s: LintFindings([]) for s in scopes}
    for f in lint_corpus(corpus, linter, scopes=scopes):
        out.setdefault(f.scope, LintFindings([])).findings.append(f)
    return out
