"""The options several commands share, each declared once as an argparse parent parser: a command lists the ones
it takes in its OPTIONS, and `cli.build_parser` adds them, so `--scope` (or `--json`) reads and means the same
in every command's --help. Also the one place a command's result reaches stdout (docs/cli-json.md):

- stdout carries the command's result: lines for a person, or with `--json` one JSON document and nothing else;
- stderr carries the rest (the configuration used, progress, warnings, where files were written, what to do
  next), the same with or without `--json`;
- a file a command produces (extract's claims, the worklist) is named by its `--out FILE`; `--json` never
  takes a value.

Never imports Dagster (extract, lint and fetch start fast)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from claims_pipeline.common.text_safety import json_escaped, terminal_escaped


def _shared(*flags: str, **kwargs: Any) -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(*flags, **kwargs)
    return parent


CONFIG_HELP = ("config file (default: $CLAIMS_PIPELINE_CONFIG, then ./config/claims_pipeline.yaml, else the built-in "
               "defaults; the command says which on stderr)")


def config(help_text: str = CONFIG_HELP) -> argparse.ArgumentParser:
    """--config FILE; every command takes it (demo and init read it otherwise, and say how in its help)."""
    return _shared("--config", metavar="FILE", help=help_text)


SCOPE = _shared("--scope", metavar="X",
                help="only the scopes named X or ending in /X (fr, shared/exit/x, x); default: every scope")
NOW = _shared("--now", metavar="ISO",
              help="pin the clock (fetch times, audit and verdict dates), e.g. 2026-06-01T00:00:00Z")
CORPUS = _shared("--corpus", metavar="DIR", help="corpus root (overrides extraction.corpus_dir)")
SECTION = _shared("--section", metavar="S", help="only claims under headings containing S (case-insensitive)")
INCLUDE_SECONDARY = _shared("--include-secondary", action="store_true",
                            help="also citations of sources that are not official when extraction.primary_only "
                            "restricts them (the default reads every source)")
JSON = _shared("--json", action="store_true",
               help="print the result as one JSON document on stdout, and nothing else there (docs/cli-json.md); "
               "messages stay on stderr")


@dataclass(frozen=True)
class Result:
    """Where a command's result goes: lines for a person on stdout, or with --json one JSON document there."""

    as_json: bool

    def line(self, text: str) -> None:
        """Lines of the result for a person (dropped under --json: the document holds the same facts). They may
        quote file names and page text: nothing a terminal would obey is printed raw."""
        if not self.as_json:
            print("\n".join(terminal_escaped(part) for part in text.split("\n")))

    def document(self, doc: Any) -> None:
        """The result as one JSON document on stdout, under --json. Every control and bidi character in its strings
        is a \\u escape (json_escaped: JSON itself leaves DEL, C1 and bidi characters raw)."""
        if self.as_json:
            sys.stdout.write(json_escaped(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n")
