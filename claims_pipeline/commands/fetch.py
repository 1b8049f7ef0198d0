"""`claims-pipeline fetch URL...`: fetch pages through the same fetcher and cache as the audit, and show what
each one reads as (status, HTTP status, note, kind, text hash, change, first characters). Never imports Dagster.

The text output is terminal-safe: a page (or a server's headers) cannot send escape sequences to the terminal
(window title, screen clearing, colours, hyperlinks, a faked status line) nor reorder what is shown with bidi
controls. Every string shown passes through ``visible``; ``--json`` carries the same strings with every control
and bidi character as a \\uXXXX escape (json_escaped: JSON itself leaves DEL, C1 and bidi characters raw).
On a terminal, stderr shows the run's progress (pages fetched of total, hosts waiting); nothing in a pipe or CI.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from claims_pipeline.commands import options
from claims_pipeline.common.text_safety import terminal_escaped

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings

PREVIEW_CHARS = 200
JSON_HELP = """\
--json prints one JSON list, one object per URL (docs/cli-json.md). What happened to each URL:
  outcome          what this fetch did: a FetchStatus value (OK, NOT_MODIFIED for a conditional
                   re-fetch answered 304, DEAD, BLOCKED, UNAVAILABLE, ...) or NOT_FETCHED when no
                   result could be recorded. Read this one.
  fetch_status     how the audit reads the page now: a 304 reads as OK (the cached text stands).
"""


def visible(value: Any) -> str:
    """value as text safe to print on a terminal: control and bidi characters shown escaped (ESC as \\x1b)."""
    return terminal_escaped(str(value))


OPTIONS = [options.JSON]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="*", metavar="URL", help="one or more http(s) URLs")
    parser.add_argument("--reset", action="append", metavar="HOST", default=[],
                        help="close HOST's circuit breaker (repeatable; 'all': every host's) before fetching, so the "
                             "next run reads it: after fixing its route (fetch.address_map) or when it is back up")
    parser.epilog = JSON_HELP
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def run(args: argparse.Namespace, settings: Settings) -> int:
    from claims_pipeline.steps.pages.progress import FetchProgressDisplay
    from claims_pipeline.steps.pages.refresh import refresh_pages, unique_urls
    from claims_pipeline.store.cache import PageCache

    if not args.urls and not args.reset:
        from claims_pipeline.commands.inputs import InputError

        raise InputError("fetch: name one or more URLs, or --reset HOST")
    fetching = settings.page_fetching
    if args.reset:
        closed = reset(args, fetching.cache)
        if not args.urls:
            options.Result(args.json).document({"reset": [{"host": h, "was": w} for h, w in closed]})
            return 0
    urls = unique_urls(args.urls)
    with PageCache.at(fetching.cache) as cache:
        with FetchProgressDisplay() as progress:  # draws on a terminal's stderr only
            states = refresh_pages(fetching, urls, cache=cache, force=True, progress=progress)
        rows = [describe(url, states.get(url), cache) for url in urls]
    output = options.Result(args.json)
    output.document(rows)
    for row in rows:
        output.line(format_row(row))
    return 0 if all(r["fetch_status"] != "NOT_FETCHED" for r in rows) else 1


def reset(args: argparse.Namespace, spec: Any) -> list[tuple[str, str]]:
    """Close the named hosts' circuit breakers in the page cache's shared record (store/host_leases.py); one line
    on stderr per host (or none open)."""
    import sys

    from claims_pipeline.store.cache import PageCache
    from claims_pipeline.store.host_leases import reset_breakers

    hosts = None if any(h.lower() == "all" for h in args.reset) else [h.strip().lower().rstrip(".") for h in args.reset]
    with PageCache.at(spec) as cache:  # creates or upgrades the tables the record lives in
        closed = reset_breakers(cache.engine, hosts)
    for host, what in closed:
        print(f"circuit breaker of {visible(host)} closed (was {visible(what)})", file=sys.stderr)
    if not closed:
        print(f"no open circuit breaker for {'any host' if hosts is None else ', '.join(map(visible, hosts))}",
              file=sys.stderr)
    return closed


def describe(url: str, state: Any, cache: Any) -> dict[str, Any]:
    """The facts a user needs to see why a source reads as it does."""
    if state is None:
        return {"url": url, "outcome": "NOT_FETCHED", "fetch_status": "NOT_FETCHED",
                "note": "no result was recorded (see the log above)"}
    latest = cache.history(url)[-1]
    preview_source = "text"
    preview = state.text
    if preview is None and latest.raw_hash:  # a wall or an error page: its body says why
        raw = cache.blobs.get(latest.raw_hash, "raw")
        if raw is not None and not raw.startswith(b"%PDF"):
            preview, preview_source = raw.decode("utf-8", "replace"), "body"
    return {
        "url": url,
        "outcome": latest.fetch_status,  # what this fetch did: NOT_MODIFIED for a 304
        "fetch_status": state.fetch_status,  # how the page reads now: OK for a 304
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
        "unconfirmed_since": state.unconfirmed_since,
        "text_chars": len(state.text) if state.text is not None else None,
        "preview_source": preview_source if preview is not None else None,
        "preview": _squash(preview)[:PREVIEW_CHARS] if preview is not None else None,
        "diff": state.diff if state.content_changed else None,
    }


def format_row(row: dict[str, Any]) -> str:
    """The human-readable block of one row; every value shown goes through ``visible``."""
    v = {k: visible(x) if isinstance(x, str) else x for k, x in row.items()}
    if row["fetch_status"] == "NOT_FETCHED":
        return f"{v['url']}\n  status:  NOT_FETCHED  {v['note']}\n"
    status = v["fetch_status"]
    if row["outcome"] != row["fetch_status"]:
        status += f" (recorded {v['outcome']})"
    lines = [
        v["url"],
        f"  status:  {status}   http: {visible(row['http_status']) if row['http_status'] is not None else '-'}",
        f"  note:    {v['note'] or '-'}",
        f"  kind:    {v['content_kind'] or '-'}   type: {v['content_type'] or '-'}",
    ]
    if row["final_url"] and row["final_url"] != row["url"]:
        lines.append(f"  final:   {v['final_url']}")
    changed = "yes, confirmed now" if row["content_changed"] else "no"
    if row.get("unconfirmed_since"):
        changed = f"new text since {v['unconfirmed_since']}, not confirmed yet (the next fetch that reads it confirms)"
    if row["changed_at"]:
        changed += f" (latest change first seen {v['changed_at']})"
    lines += [
        f"  hash:    {v['text_hash'] or '-'}" + (f"   {row['text_chars']} chars" if row["text_chars"] is not None else ""),
        f"  changed: {changed}",
    ]
    if row["preview"] is not None:
        lines.append(f"  {v['preview_source']}:    {v['preview']}" + ("…" if len(row["preview"]) >= PREVIEW_CHARS else ""))
    if row["diff"]:  # split on newlines only: a CR, form feed or NEL inside a line is shown escaped, not obeyed
        diff_lines = row["diff"].split("\n")
        if diff_lines[-1] == "":
            diff_lines.pop()
        lines.append("  diff:\n" + "\n".join("    " + visible(line) for line in diff_lines))
    return "\n".join(lines) + "\n"


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
