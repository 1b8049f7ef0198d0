"""Per-scope assets: corpus documents → claims → citation lint; fetched pages → page changes; priors.

Each asset handles the scopes of its run (context.partition_keys: one, or many in a single-run backfill) and
returns {scope: value}; storage.ScopeStoreIOManager writes one file per scope.
"""


import hashlib
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import dagster as dg

from claims_pipeline.defs.corpus_files import combined_hash, scope_file_hashes
from claims_pipeline.defs.fetch_runs import fetch_run_id
from claims_pipeline.defs.metadata import Link, counts, md_cell, md_code_block, md_list, md_table, prose, where
from claims_pipeline.defs.partitions import scope_partitions, single_run_backfill
from claims_pipeline.defs.records_io import claims_from_json, page_from_json, page_to_json
from claims_pipeline.store.recent_changes import load_reported, mark_unreported
from claims_pipeline.urls import normalize_url
from claims_pipeline.defs.resources import ClaimsConfig, FetcherResource, PageCacheResource

SCOPE_ASSET_KW: dict[str, Any] = {"partitions_def": scope_partitions, "backfill_policy": single_run_backfill}


def _version(per_scope: dict[str, str]) -> dg.DataVersion:
    """One scope: its own hash. Several scopes in one run: Dagster records one version per run, so use a
    hash over all of them (the next single-scope run gives each scope its own again)."""
    if len(per_scope) == 1:
        return dg.DataVersion(next(iter(per_scope.values())))
    h = hashlib.sha256("\n".join(f"{k}={v}" for k, v in sorted(per_scope.items())).encode()).hexdigest()[:16]
    return dg.DataVersion(h)


def _scoped(context: dg.AssetExecutionContext, out: dict[str, Any], metadata_of: Callable[[list[str]], dict[str, Any]]) -> dict[str, Any]:
    """The Output's metadata. One scope: its metadata. Several scopes in one run (the monthly audit, a
    backfill): each scope's materialization gets its own metadata (Dagster's per-partition asset metadata),
    so the UI shows per scope what that scope holds; the Output keeps only how many scopes the run covered."""
    scopes = list(out)
    if len(scopes) <= 1:
        return metadata_of(scopes)
    add_partition_metadata(context, {scope: metadata_of([scope]) for scope in scopes})
    return {"scopes_in_run": len(scopes)}


def add_partition_metadata(context: dg.AssetExecutionContext, by_partition: dict[str, dict[str, Any]]) -> None:
    """context.add_asset_metadata(metadata, partition_key=p) for each partition of the run.

    Why not simply that call: each one re-reads the dynamic partitions from the instance to check the key
    (~10 ms; 6 assets × 120 scopes made a backfill 7 s slower). The keys here are the run's own partition
    keys (each asset's output has exactly those, which the IO manager enforces), so the step's metadata
    accumulator takes them directly; if a Dagster release moves it, the public call is used (same result,
    slower)."""
    step = getattr(context.op_execution_context, "_step_execution_context", None)
    accumulator = getattr(step, "_metadata_accumulator", None)
    if not hasattr(accumulator, "with_additional_asset_metadata"):
        for key, metadata in by_partition.items():
            context.add_asset_metadata(metadata, partition_key=key)
        return
    for key, metadata in by_partition.items():
        accumulator = accumulator.with_additional_asset_metadata(asset_key=context.asset_key, partition_key=key,
                                                                 metadata=metadata)
    step._metadata_accumulator = accumulator


@dg.asset(group_name="corpus", code_version="1", kinds={"markdown"}, **SCOPE_ASSET_KW)
def corpus_documents(context: dg.AssetExecutionContext, claims_config: ClaimsConfig) -> dg.Output[dict[str, Any]]:
    """The scope's markdown files and their content hashes (data version = hash of the scope's files)."""
    from claims_pipeline.corpus.extract import list_scopes

    settings = claims_config.load()
    scopes = list_scopes(settings)
    out: dict[str, Any] = {}
    for scope in context.partition_keys:
        files = scopes.get(scope, [])
        if not files:
            context.log.warning(f"scope {scope!r}: no markdown files under {settings.corpus_dir} (folder removed?)")
        hashes = scope_file_hashes(files, settings.corpus_dir)
        out[scope] = {"corpus_dir": str(settings.corpus_dir), "files": hashes, "hash": combined_hash(hashes)}
    def metadata_of(scopes: list[str]) -> dict[str, Any]:
        return {"files": sum(len(out[s]["files"]) for s in scopes), "file_list": md_list(f for s in scopes for f in out[s]["files"])}

    return dg.Output(out, data_version=_version({s: v["hash"] for s, v in out.items()}),
                     metadata=_scoped(context, out, metadata_of))


@dg.asset(group_name="corpus", code_version="1", kinds={"python"}, **SCOPE_ASSET_KW)
def claims(
    context: dg.AssetExecutionContext, claims_config: ClaimsConfig, corpus_documents: dict[str, Any]
) -> dg.Output[dict[str, Any]]:
    """Claims (a sentence stating figures + the primary source it links) extracted from the scope's files."""
    from claims_pipeline.corpus.extract import extract_corpus

    settings = claims_config.load()
    scopes = list(context.partition_keys)
    extraction = extract_corpus(settings, scopes=scopes)
    by_scope: dict[str, dict[str, Any]] = {s: {"claims": [], "warnings": []} for s in scopes}
    for c in extraction.claims:
        by_scope.setdefault(c.scope, {"claims": [], "warnings": []})["claims"].append(c.to_dict())
    scope_of_file = {f: s for s, files in extraction.scopes.items() for f in files}
    for w in extraction.warnings:
        scope = scope_of_file.get(w.file)
        if scope in by_scope:
            by_scope[scope]["warnings"].append(str(w))
        context.log.warning(str(w))  # bad input: named by file and line, never fatal
    data_hash = {
        s: hashlib.sha256(repr(v["claims"]).encode()).hexdigest()[:16] for s, v in by_scope.items()
    }
    claims_of: dict[str, list[Any]] = defaultdict(list)
    for c in extraction.claims:
        claims_of[c.scope].append(c)

    def metadata_of(subset: list[str]) -> dict[str, Any]:
        rows = [c for s in subset for c in claims_of[s]]
        meta: dict[str, Any] = {
            "claims": len(rows),
            "by_tier": dg.MetadataValue.json(counts(c.source_tier for c in rows)),
            "never_verified": sum(1 for c in rows if not c.last_verified),
            "warnings": sum(len(by_scope[s]["warnings"]) for s in subset),
            "claims_table": md_table(
                ["id", "section", "figures", "last verified", "url"],
                ([c.id, c.section, ", ".join(v.raw for v in c.salient_values), c.last_verified or "", Link(c.source_url)] for c in rows),
            ),
        }
        if len(subset) == len(by_scope):  # counted per extraction, not per scope
            meta["skipped_pointer_links"] = extraction.skipped_pointer_links
        return meta

    return dg.Output(by_scope, data_version=_version(data_hash), metadata=_scoped(context, by_scope, metadata_of))


@dg.asset(group_name="corpus", code_version="1", kinds={"python"}, **SCOPE_ASSET_KW)
def citation_lint(
    context: dg.AssetExecutionContext, claims_config: ClaimsConfig, corpus_documents: dict[str, Any]
) -> dg.Output[dict[str, Any]]:
    """Citations that point at a primary portal's root next to a figure (advisory, reference §9 linter)."""
    from claims_pipeline.corpus.linter import lint_corpus

    settings = claims_config.load()
    scopes = list(context.partition_keys)
    findings = lint_corpus(settings, scopes=scopes)
    out: dict[str, list[dict[str, Any]]] = {s: [] for s in scopes}
    for f in findings:
        out.setdefault(f.scope, []).append({"file": f.file, "line": f.line, "url": f.url, "context": f.context, "scope": f.scope})
    def metadata_of(subset: list[str]) -> dict[str, Any]:
        rows = [f for s in subset for f in out[s]]
        return {"findings": len(rows),
                "findings_table": md_table(["file", "line", "url", "context"], ([f["file"], f["line"], Link(f["url"]), f["context"]] for f in rows))}

    return dg.Output(out, metadata=_scoped(context, out, metadata_of))


def _pages_hash(pages: dict[str, dict[str, Any]]) -> str:
    """Hash of sorted (url, text hash): changes exactly when a cited page's text (or its set of URLs) changes."""
    h = hashlib.sha256()
    for url in sorted(pages):
        h.update(f"{url}\0{pages[url].get('text_hash') or pages[url].get('fetch_status')}\n".encode())
    return h.hexdigest()[:16]


@dg.asset(group_name="web", code_version="1", kinds={"sqlite"}, **SCOPE_ASSET_KW)
def fetched_pages(
    context: dg.AssetExecutionContext,
    claims_config: ClaimsConfig,
    fetcher: FetcherResource,
    page_cache: PageCacheResource,
    claims: dict[str, Any],
) -> dg.Output[dict[str, Any]]:
    """Every cited page re-fetched politely and recorded in the cache with its history.

    Data version = hash of the sorted (url, text hash) pairs, so downstream assets show as unsynced exactly
    when a cited page really changed (a re-fetch of the same text leaves them synced)."""
    settings = fetcher.settings()
    urls_by_scope = {s: sorted({c["source_url"] for c in v["claims"]}) for s, v in claims.items()}
    all_urls = sorted({u for urls in urls_by_scope.values() for u in urls})  # each URL fetched once per run
    with page_cache.open(settings) as cache:
        fetched = fetcher.refresh(settings, all_urls, cache, claims_config.now(),
                                  run_id=fetch_run_id(context.run)) if all_urls else {}
        identity = cache.identity()
    # keyed by the URL exactly as the corpus cites it (the core's lookups use claim.source_url); a change counts
    # when confirmed after what the last report saw, by this fetch or another (store/recent_changes.py)
    keys = {u: normalize_url(u) for u in all_urls}
    states = mark_unreported({u: fetched[k] for u, k in keys.items() if k in fetched}, keys,
                             load_reported(settings.home_dir, identity))
    out = {s: {u: page_to_json(states[u]) for u in urls if u in states} for s, urls in urls_by_scope.items()}
    for s, urls in urls_by_scope.items():
        for u in urls:
            if u not in states:
                context.log.warning(f"{s}: {u} came back without a page state")
    def metadata_of(subset: list[str]) -> dict[str, Any]:
        pages = [states[u] for u in sorted({u for s in subset for u in out[s]})]
        return {
            "pages": len(pages),
            "by_fetch_status": dg.MetadataValue.json(counts(str(p.fetch_status) for p in pages)),
            "changed": sum(1 for p in pages if p.content_changed),
            "not_ok": md_table(
                ["url", "status", "http", "note"],
                ([Link(p.url), p.fetch_status, p.http_status or "", p.note] for p in pages if str(p.fetch_status) not in ("OK", "NOT_MODIFIED")),
            ),
        }

    return dg.Output(out, data_version=_version({s: _pages_hash(p) for s, p in out.items()}),
                     metadata=_scoped(context, out, metadata_of))


@dg.asset(group_name="web", code_version="1", kinds={"sqlite"}, **SCOPE_ASSET_KW)
def page_changes(
    context: dg.AssetExecutionContext, claims: dict[str, Any], fetched_pages: dict[str, Any]
) -> dg.Output[dict[str, Any]]:
    """Per scope: cited pages whose change the audit reports (CONTENT_CHANGED, with the text diff), and the
    claims whose page changed after they were last verified (stale_changed, the audit's rule): re-verify those
    first."""
    from claims_pipeline.audit import is_stale_changed

    out: dict[str, Any] = {}
    for scope, pages in fetched_pages.items():
        changed = {u: p for u, p in pages.items() if p.get("content_changed")}
        scope_claims = claims_from_json(claims.get(scope, {}).get("claims", []))
        stale = []
        for c in scope_claims:
            page = pages.get(c.source_url)
            if page and is_stale_changed(c.last_verified, page.get("changed_at"), bool(page.get("content_changed"))):
                stale.append({"id": c.id, "file": c.file, "line_no": c.line_no, "claim": c.claim_text, "url": c.source_url,
                              "last_verified": c.last_verified, "changed_at": page.get("changed_at")})
        out[scope] = {
            "changed_pages": [{"url": u, "changed_at": p.get("changed_at"), "diff": p.get("diff")} for u, p in sorted(changed.items())],
            "stale_changed": stale,
        }
    def metadata_of(subset: list[str]) -> dict[str, Any]:
        changed_rows = [(s, c) for s in subset for c in out[s]["changed_pages"]]
        stale_rows = [(s, c) for s in subset for c in out[s]["stale_changed"]]
        diffs = "\n\n".join(f"**{md_cell(c['url'], 300)}** (changed {md_cell(str(c['changed_at'])[:10])})\n"
                             f"{md_code_block(c['diff'] or '', 'diff')}" for _, c in changed_rows)
        return {
            "changed_pages": len(changed_rows),  # pages; the audit's content_changed counts claims
            "stale_changed": len(stale_rows),
            "stale_changed_claims": md_table(
                ["scope", "where", "claim", "verified", "changed", "url"],
                ([s, where(c.get("file"), c["line_no"]), prose(c["claim"]), c["last_verified"] or "never", str(c["changed_at"])[:10],
                  Link(c["url"])] for s, c in stale_rows),
            ),
            "changed_pages_diffs": dg.MetadataValue.md(diffs or "_(no confirmed change)_"),
        }

    return dg.Output(out, metadata=_scoped(context, out, metadata_of))


@dg.asset(group_name="audit", code_version="1", kinds={"python"}, **SCOPE_ASSET_KW)
def priors(
    context: dg.AssetExecutionContext,
    claims_config: ClaimsConfig,
    page_cache: PageCacheResource,
    claims: dict[str, Any],
    fetched_pages: dict[str, Any],
) -> dg.Output[dict[str, Any]]:
    """Per claim: does the cited page still carry the figure? TOKENS_PRESENT / WEAK_MATCH / TOKENS_ABSENT /
    SOURCE_BINARY / PDF_NO_TEXT / SOURCE_UNAVAILABLE, with matched and missing figures and excerpts."""
    from claims_pipeline.priors import build_prior

    settings = claims_config.load()
    out: dict[str, list[dict[str, Any]]] = {}
    table: list[tuple[str, Any, dict[str, Any]]] = []
    with page_cache.open(settings) as cache:
        for scope, v in claims.items():
            pages = {u: page_from_json(p, cache) for u, p in fetched_pages.get(scope, {}).items()}
            rows = []
            for c in claims_from_json(v["claims"]):
                prior = build_prior(c, pages.get(c.source_url), settings).to_dict()
                rows.append({"id": c.id, **prior})
                table.append((scope, c, prior))
            out[scope] = rows
    def metadata_of(subset: list[str]) -> dict[str, Any]:
        wanted = set(subset)
        rows = [(s, c, p) for s, c, p in table if s in wanted]
        absent = [(s, c, p) for s, c, p in rows if p["prior"] == "TOKENS_ABSENT"]
        return {
            "claims": len(rows),
            "by_prior": dg.MetadataValue.json(counts(p["prior"] for _, _, p in rows)),
            "tokens_absent": len(absent),
            "tokens_absent_claims": md_table(
                ["scope", "where", "claim", "missing", "url"],
                ([s, where(c.file, c.line_no), prose(c.claim_text), ", ".join(p["missing_tokens"][:6]), Link(c.source_url)]
                 for s, c, p in absent),
            ),
        }

    return dg.Output(out, metadata=_scoped(context, out, metadata_of))
