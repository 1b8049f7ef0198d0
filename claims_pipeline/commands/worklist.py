"""`claims-pipeline worklist`: sample claims fetch-free, fetch only the sample's pages (TTL cache), write the
LLM worklist JSON (--out). Runs the `worklist` asset in-process against the Dagster instance. The sample's
statistics are the result (stdout; --json: one JSON document)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from claims_pipeline.commands import options
from claims_pipeline.common.text_safety import terminal_escaped

OPTIONS = [options.SCOPE, options.SECTION, options.INCLUDE_SECONDARY, options.NOW, options.JSON]

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sample", type=int, default=0, metavar="N", help="how many claims (default sampling.default_sample)")
    parser.add_argument("--seed", type=int, default=-1, help="sampling tie-break seed (default sampling.seed)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the worklist to this JSON file (default <home>/worklist.json)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from claims_pipeline.commands.inputs import InputError, check_clock, checked_corpus, chosen_scopes, corpus_origin
    from claims_pipeline.config.home import HomeLayout
    from claims_pipeline.corpus.scopes import nothing_read_message, walk_corpus
    from claims_pipeline.orchestration.instance import open_instance
    from claims_pipeline.orchestration.runner import resources_for, run_failures, run_worklist
    from claims_pipeline.steps.pages.progress import FetchProgressDisplay, installed

    if args.sample < 0:
        print("claims-pipeline: --sample must be ≥ 0", file=sys.stderr)
        return 2
    check_clock(args.now)
    # before any run: a missing corpus or an unmatched --scope must not overwrite the last worklist with 0 items
    corpus = checked_corpus(settings, corpus_origin(settings.source_file))
    walk = walk_corpus(corpus)
    if not walk.files:  # say which setting left the files out (exit 2), before any run
        raise InputError(nothing_read_message(corpus, walk))
    chosen_scopes(list(walk.scopes), args.scope)
    out = (args.out.expanduser().resolve() if args.out else HomeLayout(settings.home_dir).worklist_file)
    run_config = {
        "sample": args.sample, "scope": args.scope or "", "section": args.section or "",
        "include_secondary": bool(args.include_secondary), "seed": args.seed, "out": str(out),
    }
    instance = open_instance(settings.home_dir)
    with FetchProgressDisplay(label="fetching the sample's pages") as show, installed(show):  # drawn on a terminal only
        result = run_worklist(instance, resources_for(settings, clock=args.now or ""), run_config)
    for f in run_failures([result]):
        print(terminal_escaped(f"claims-pipeline: {f}"), file=sys.stderr)
    if not result.success:
        options.Result(args.json).document({})  # --json: one document even when the run failed, as audit's
        return 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    stats = doc.get("stats", {})
    shown = {k: v for k, v in stats.items() if k != "tokens_absent"}  # the absent claims themselves: in the file
    output = options.Result(args.json)
    output.document(shown)  # scope names come from file names: Result escapes what a terminal would obey
    by_prior = ", ".join(f"{prior} {n}" for prior, n in (shown.get("by_prior") or {}).items())
    output.line(f"sampled {shown.get('total', 0)} claims" + (f" ({by_prior})" if by_prior else "")
                + f" · TOKENS_ABSENT {shown.get('tokens_absent_count', 0)} · stale_changed {shown.get('stale_changed_count', 0)}")
    print(f"worklist → {out}  ({len(doc.get('items', []))} items)", file=sys.stderr)
    print("NEXT: `claims-pipeline verify` asks the judge about the audited claims (docs/verification.md).", file=sys.stderr)
    n_absent = stats.get("tokens_absent_count", 0)
    if n_absent:
        print(f"⚠️ {n_absent} claim(s) whose figure is ABSENT from the cited page — check them first.", file=sys.stderr)
    return 0
