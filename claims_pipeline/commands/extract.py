"""`claims-pipeline extract`: corpus → claims. The statistics are the result (stdout; --json: one JSON document),
warnings on stderr, and --out FILE writes every claim record. No network."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from claims_pipeline.commands import options
from claims_pipeline.commands.inputs import checked_corpus, chosen_scopes, corpus_origin
from claims_pipeline.common.text_safety import terminal_escaped

OPTIONS = [options.CORPUS, options.SCOPE, options.SECTION, options.INCLUDE_SECONDARY, options.JSON]

if TYPE_CHECKING:
    from claims_pipeline.config.corpus_source import CorpusSource
    from claims_pipeline.config.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, metavar="FILE", help="write every claim record to this JSON file")
    parser.add_argument("--explain", metavar="FILE:LINE", help="show how one line is read: its block, sentences, "
                        "figures, each link and why it was or was not taken, and the claims made there")


def corpus_for(args: argparse.Namespace, settings: Settings) -> CorpusSource:
    """The corpus the command reads: --corpus DIR by the configured rules, else the configured one. Raises
    InputError when the corpus directory is missing."""
    if args.corpus:
        ex = settings.extraction.model_copy(update={"corpus_dir": Path(args.corpus).expanduser().resolve()})
        settings = settings.model_copy(update={"extraction": ex})
    return checked_corpus(settings, corpus_origin(settings.source_file, override=bool(args.corpus)))


def scopes_for(corpus: CorpusSource, name: str | None) -> list[str] | None:
    """The scopes --scope selects (None: every scope). Raises InputError when no file is read (saying why) or
    when no scope matches."""
    from claims_pipeline.commands.inputs import InputError
    from claims_pipeline.corpus.scopes import nothing_read_message, walk_corpus

    walk = walk_corpus(corpus)
    if not walk.files:
        for _scope, warning in walk.skipped:  # the files it could not read, named before the one-line reason
            print(f"warning: {warning}", file=sys.stderr)
        raise InputError(nothing_read_message(corpus, walk))
    return chosen_scopes(list(walk.scopes), name)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from claims_pipeline.corpus.extract import extract_corpus, extraction_stats

    corpus = corpus_for(args, settings)
    if args.explain:
        from claims_pipeline.commands.inputs import InputError
        from claims_pipeline.corpus.explain import explain_line

        try:
            lines = explain_line(corpus, args.explain, include_secondary=args.include_secondary)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        for line in lines:
            print(terminal_escaped(line))
        return 0
    scopes = scopes_for(corpus, args.scope)
    extraction = extract_corpus(corpus, scopes=scopes, section=args.section, include_secondary=args.include_secondary)
    for warning in extraction.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    official_only = corpus.extraction.primary_only and not args.include_secondary
    mode = "official sources only" if official_only else "every source"
    print(f"[extract] {len(extraction.claims)} claim↔citation pairs ({mode}) from {len(extraction.files)} files", file=sys.stderr)
    if not extraction.claims:
        from claims_pipeline.corpus.explain import no_claim_message

        print(terminal_escaped(no_claim_message(corpus, len(extraction.files), scopes=scopes,
                                                include_secondary=args.include_secondary)), file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps([c.to_dict() for c in extraction.claims], indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(terminal_escaped(f"[extract] claim records → {args.out}"), file=sys.stderr)
    stats = extraction_stats(extraction)
    stats["hosts_by_tier"] = hosts_by_tier(extraction.claims)
    for line in tier_lines(stats["hosts_by_tier"]):
        print(terminal_escaped(line), file=sys.stderr)
    output = options.Result(args.json)
    output.document(stats)
    for line in stats_lines(stats):
        output.line(line)
    return 0


def stats_lines(stats: dict) -> list[str]:
    """The statistics for a person: claims, files and scopes, how they are stamped, the scopes with most claims."""
    top = ", ".join(f"{scope} ({n})" for scope, n in list(stats.get("top_scopes", {}).items())[:8])
    return [f"claims: {stats.get('total_claims', 0)} in {stats.get('files', 0)} files, "
            f"{stats.get('scopes_covered', 0)} scopes" + (f": {top}" if top else ""),
            f"stamped: {stats.get('stamped', 0)} · stale-marked: {stats.get('stale_marked', 0)} · "
            f"never verified: {stats.get('never_verified', 0)}",
            "by tier: " + ", ".join(f"{tier} {n}" for tier, n in stats.get("by_tier", {}).items())]


HOSTS_SHOWN = 20  # per tier, in the JSON; a corpus may cite thousands of hosts
TIER_WORDS = {"primary-gov": "official (government name)", "primary-allowlist": "official (listed)",
              "secondary": "secondary", "own": "own pages"}


def hosts_by_tier(claims) -> dict[str, dict[str, int]]:
    """tier → {cited host: claims}, the hosts citing most first (at most HOSTS_SHOWN per tier)."""
    from collections import Counter

    counts: dict[str, Counter[str]] = {}
    for c in claims:
        counts.setdefault(c.source_tier, Counter())[c.source_host] += 1
    return {tier: dict(counts[tier].most_common(HOSTS_SHOWN)) for tier in TIER_WORDS if tier in counts}


def tier_lines(by_tier: dict[str, dict[str, int]]) -> list[str]:
    """One line per tier: the tier of each cited host, so a missing official host is seen at once."""
    out = []
    for tier, hosts in by_tier.items():
        shown = ", ".join(f"{h} ({n})" for h, n in list(hosts.items())[:6])
        more = " …" if len(hosts) > 6 else ""
        out.append(f"[extract] {TIER_WORDS.get(tier, tier)}: {shown}{more}")
    return out
