"""`claims-pipeline fetch URL...`: fetch pages through the same fetcher and cache as the audit, and show what
each one reads as (status, HTTP status, note, kind, text hash, change, first characters). Never imports Dagster.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

PREVIEW_CHARS = 200


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="+", metavar="URL", help="one or more http(s) URLs")
    parser.add_argument("--json", action="store_true", help="print one JSON list instead of text")


def run(args: argparse.Namespace) -> int:
    from claims_pipeline.pages import refresh_pages, unique_urls
    from claims_pipeline.settings import load_settings
    from claims_pipeline.store.cache import PageCache

    settings = load_settings(args.config)
    urls = unique_urls(args.urls)
    with PageCache.from_settings(settings) as cache:
        states = refresh_pages(settings, urls, cache=cache, force=True)
        rows = [describe(url, states.get(url), cache) for url in urls]
    if args.json:
        json.dump(rows, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        for row in rows:
            sys.stdout.write(format_row(row) + "\n")
    return 0 if all(r["fetch_status"] != "NOT_FETCHED" for r in rows) else 1


def describe(url: str, state: Any, cache: Any) -> dict[str, Any]:
    """The facts a user needs to see why a source reads as it does."""
    if state is None:
        return {"url": url, "fetch_status": "NOT_FETCHED", "note": "no result was recorded (see the log above)"}
    latest = cache.history(url)[-1]
    preview_source = "text"
    preview = state.text
    if preview is None and latest.raw_hash:  # a wall or an error page: its body says why
        raw = cache.blobs.get(latest.raw_hash, "raw")
        if raw is not None and not raw.startswith(b"%PDF"):
            preview, preview_source = raw.decode("utf-8", "replace"), "body"
    return {
        "url": url,
        "fetch_status": state.fetch_status,
        "recorded_status": latest.fetch_status,  # e.g. NOT_MODIFIED where fetch_status says OK
        "http_status": state.http_status,
        "note": state.note,
        "content_type": latest.content_type,
        "content_kind": state.content_kind,
        "final_url": latest.final_url,
        "fetched_at": state.fetched_at,
        "text_hash": state.text_hash,
        "content_changed": state.content_changed,
        "changed_at": state.changed_at,
        "stable_since": state.stable_since,
        "text_chars": len(state.text) if state.text is not None else None,
        "preview_source": preview_source if preview is not None else None,
        "preview": _squash(preview)[:PREVIEW_CHARS] if preview is not None else None,
        "diff": state.diff if state.content_changed else None,
    }


def format_row(row: dict[str, Any]) -> str:
    if row["fetch_status"] == "NOT_FETCHED":
        return f"{row['url']}\n  status:  NOT_FETCHED  {row['note']}\n"
    status = row["fetch_status"]
    if row["recorded_status"] != status:
        status += f" (recorded {row['recorded_status']})"
    lines = [
        row["url"],
        f"  status:  {status}   http: {row['http_status'] if row['http_status'] is not None else '-'}",
        f"  note:    {row['note'] or '-'}",
        f"  kind:    {row['content_kind'] or '-'}   type: {row['content_type'] or '-'}",
    ]
    if row["final_url"] and row["final_url"] != row["url"]:
        lines.append(f"  final:   {row['final_url']}")
    changed = "yes, confirmed now" if row["content_changed"] else "no"
    if row["changed_at"]:
        changed += f" (latest change first seen {row['changed_at']})"
    lines += [
        f"  hash:    {row['text_hash'] or '-'}" + (f"   {row['text_chars']} chars" if row["text_chars"] is not None else ""),
        f"  changed: {changed}",
    ]
    if row["preview"] is not None:
        lines.append(f"  {row['preview_source']}:    {row['preview']}" + ("…" if len(row["preview"]) >= PREVIEW_CHARS else ""))
    if row["diff"]:
        lines.append("  diff:\n" + "\n".join("    " + line for line in row["diff"].splitlines()))
    return "\n".join(lines) + "\n"


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
