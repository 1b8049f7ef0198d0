"""The `claims-pipeline` command. Each subcommand lives in claims_pipeline/commands/<name>.py and is imported
only when chosen, so `extract`, `lint` and `fetch` never import Dagster (they start fast)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

DESCRIPTION = ("Keeps a cited markdown corpus honest: re-reads every cited page and says which figures are no longer "
               "on the page they cite, and which pages changed after the claim was last verified.")
EPILOG = "Run `claims-pipeline COMMAND --help` for a command's options."
CONFIG_HELP = "config file (default: $CLAIMS_PIPELINE_CONFIG, then ./config/claims_pipeline.yaml)"
# demo always runs on its own copy of the bundled demo.yaml; --config stays accepted (and ignored) so scripts keep working
CONFIG_HELP_OF = {"demo": "ignored by demo: it always runs on the bundled demo.yaml (a copy under --home)"}

# name -> (module, one-line help). A module exposes add_arguments(parser) and run(args) -> int.
COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("claims_pipeline.commands.extract", "parse the corpus into claims (no network)"),
    "lint": ("claims_pipeline.commands.lint", "flag citations that point at a primary portal's root next to a figure"),
    "fetch": ("claims_pipeline.commands.fetch", "fetch URLs through the fetcher and cache; show why a source reads as it does"),
    "audit": ("claims_pipeline.commands.audit", "materialize the audit assets (all scopes, or one) in-process"),
    "worklist": ("claims_pipeline.commands.worklist", "sample claims fetch-free and write the LLM worklist"),
    "demo": ("claims_pipeline.commands.demo", "start the bundled fixture web and audit the bundled demo corpus"),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="claims-pipeline", description=DESCRIPTION, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--config", metavar="FILE", help=CONFIG_HELP_OF.get(name, CONFIG_HELP))
        if name == chosen:  # only the chosen command's module is imported
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    from claims_pipeline.commands.inputs import InputError
    from claims_pipeline.settings import ConfigError
    from claims_pipeline.store.errors import CacheError

    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except ConfigError as exc:
        print(f"claims-pipeline: config error:\n{exc}", file=sys.stderr)
        return 2
    except (InputError, CacheError) as exc:  # a missing corpus, an unmatched --scope, an unusable cache: one line
        print(f"claims-pipeline: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`claims-pipeline extract | head`): stop quietly, as Unix tools do; stdout is
        # pointed at devnull so the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it


if __name__ == "__main__":
    sys.exit(main())
