"""The `claims-pipeline` command. Each subcommand lives in claims_pipeline/commands/<name>.py and is imported
only when chosen, so `extract`, `lint` and `fetch` never import Dagster (they start fast)."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings

DESCRIPTION = ("Keeps a cited markdown corpus honest: re-reads every cited page and says which figures are no longer "
               "on the page they cite, and which pages changed after the claim was last verified.")
EPILOG = "Run `claims-pipeline COMMAND --help` for a command's options."
# demo always runs on its own copy of the bundled demo.yaml; --config stays accepted (and ignored) so scripts keep working
CONFIG_HELP_OF = {"demo": "ignored by demo: it always runs on the bundled demo.yaml (a copy under --home)",
                  "init": "the file to write (default: ./config/claims_pipeline.yaml, which every command then reads)"}

# name -> (module, one-line help). A module exposes OPTIONS (the shared options it takes, commands/options.py),
# add_arguments(parser) for its own, and run(args) -> int.
COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("claims_pipeline.commands.extract", "parse the corpus into claims (no network)"),
    "lint": ("claims_pipeline.commands.lint", "flag citations that point at a primary portal's root next to a figure"),
    "fetch": ("claims_pipeline.commands.fetch", "fetch URLs through the fetcher and cache; show why a source reads as it does"),
    "audit": ("claims_pipeline.commands.audit", "materialize the audit assets (all scopes, or one) in-process"),
    "worklist": ("claims_pipeline.commands.worklist", "sample claims fetch-free and write the LLM worklist"),
    "verify": ("claims_pipeline.commands.verify", "ask the judge about the audited claims; code checks every answer"),
    "demo": ("claims_pipeline.commands.demo", "start the bundled fixture web and audit the bundled demo corpus"),
    "init": ("claims_pipeline.commands.init", "write a configuration for an existing knowledge base and say what it holds"),
}


class _VersionAction(argparse.Action):
    """--version: the installed package's version, looked up only when asked (the other commands start fast)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from claims_pipeline.config.settings import package_version

        sys.stdout.write(f"{parser.prog} {package_version()}\n")  # stdout, as argparse's own version action
        parser.exit()


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="claims-pipeline", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if a in COMMANDS), None)
    from claims_pipeline.commands import options

    for name, (module, help_text) in COMMANDS.items():
        shared = [options.config(CONFIG_HELP_OF.get(name, options.CONFIG_HELP))]
        command = importlib.import_module(module) if name == chosen else None  # only the chosen one is imported
        if command is not None:
            shared += command.OPTIONS
        p = sub.add_parser(name, help=help_text, description=help_text, parents=shared)
        if command is not None:
            command.add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    from claims_pipeline.commands.inputs import InputError
    from claims_pipeline.common.text_safety import terminal_escaped
    from claims_pipeline.config.deployments import DeploymentNotReady
    from claims_pipeline.config.settings import ConfigError, CorpusNotSet
    from claims_pipeline.store.errors import CacheError, InstanceError
    from claims_pipeline.store.writable import StorageError

    def say(message: str) -> None:  # messages quote file names and config values: nothing a terminal obeys
        print(terminal_escaped(message), file=sys.stderr)

    module = importlib.import_module(COMMANDS[args.command][0])
    from claims_pipeline.common import stopping

    previous_handlers = stop_on_signals()
    log_escaped(say)
    settings = None
    try:
        say_which_config(args, say)
        settings = command_settings(args)
        if getattr(args, "now", None):  # a bad --now is a usage error: told before anything under the home is made
            from claims_pipeline.commands.inputs import check_clock

            check_clock(args.now)
        if settings is None:
            return int(module.run(args) or 0)
        check_home_writable(args, settings)
        return int(module.run(args, settings) or 0)
    except CorpusNotSet as exc:  # how to set one, in one line
        say(f"claims-pipeline: {exc}")
        return 2
    except DeploymentNotReady as exc:  # what the deployment lacks, one line per setting
        for line in exc.problems:
            say(f"claims-pipeline: {line}")
        return 2
    except ConfigError as exc:
        say(f"claims-pipeline: config error:\n{exc}")
        return 2
    except (InputError, CacheError, InstanceError) as exc:  # a missing corpus, an unmatched --scope, an unusable cache: one line
        say(f"claims-pipeline: {exc}")
        return 2
    except StorageError as exc:  # a read-only home, a full disk: refused before anything is written
        say(f"claims-pipeline: {exc}")
        return 1
    except stopping.CommandStopped as exc:  # a run stopped by a signal or from Dagster, and ended cleanly
        say(f"claims-pipeline: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:  # a stop outside a run (StopRequested is one): one line, 128 + the signal
        say(f"claims-pipeline: {stopping.stopped_message()}")
        return stopping.exit_code() if stopping.requested() else 130
    except BrokenPipeError:
        # the reader went away (`claims-pipeline extract | head`): stop quietly, as Unix tools do; stdout is
        # pointed at devnull so the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it
    except OSError as exc:  # a file or folder that could not be written or read (--json OUT, the home folder)
        # the corpus is only ever read: a failure there is the user's input
        if settings is not None and (unread := _corpus_unreadable(settings, exc)) is not None:
            say(f"claims-pipeline: {unread}")
            return 2
        from claims_pipeline.store.errors import write_failure_advice

        verb = "cannot write" if exc.errno in _WRITE_ERRNOS else "cannot use"
        where = exc.filename or (f"a file under {settings.home_dir}" if settings is not None else "a file")
        advice = write_failure_advice(f"{exc.strerror} [errno {exc.errno}]", str(where))
        say(f"claims-pipeline: {verb} {where}: {exc.strerror or exc}" + (f"; {advice}" if advice else ""))
        return 1
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "sqlalchemy":
            raise
        # the disk filled or the folder turned read-only after the check: the database's own words, one line
        from claims_pipeline.store.errors import database_problem, unreachable, write_failure_advice

        problem = database_problem(exc)
        home = str(settings.home_dir) if settings is not None else "the home folder"
        check = ("is the database server running, and reachable from here?" if unreachable(problem)
                 else write_failure_advice(problem, home) or f"is {home} writable, with free space?")
        say(f"claims-pipeline: database error: {problem} ({check})")
        return 1
    finally:
        import signal

        for sig, handler in previous_handlers.items():  # main() called in a process that goes on (tests)
            signal.signal(sig, handler)


def log_escaped(say) -> None:
    """The core's log lines (a judge's warning naming a claim by its corpus file, a page that could not be stored)
    go through the same neutralising as every line the CLI prints: without a handler, Python's last-resort one
    wrote them raw, ESC and bidi controls of a file name included."""
    import logging

    class _Say(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                say(f"[{record.levelname.lower()}] {self.format(record)}")
            except Exception:  # noqa: BLE001 - a log line must never stop the command
                self.handleError(record)

    logger = logging.getLogger("claims_pipeline")
    for earlier in [h for h in logger.handlers if getattr(h, "claims_pipeline_cli", False)]:
        logger.removeHandler(earlier)  # main() called again in one process (tests): one handler, the newest
    handler = _Say(logging.WARNING)
    handler.claims_pipeline_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)  # with a handler found, Python's last-resort one no longer writes them raw


def stop_on_signals() -> dict:
    """SIGINT and SIGTERM stop the command: outside a run at once (StopRequested); a run replaces these while it
    runs (orchestration/stops.py) and the fetch loop hears them first (stopping.signals_heard). Returns the
    handlers replaced."""
    import signal

    from claims_pipeline.common import stopping

    def stop_now(signum: int, _frame: object) -> None:
        stopping.request(f"{signal.Signals(signum).name} received", signum)
        raise stopping.StopRequested(stopping.reason())

    import threading

    stopping.reset()
    previous: dict[signal.Signals, object] = {}
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        return previous
    for sig in stopping.STOP_SIGNALS:
        before = signal.getsignal(sig)
        if before is not signal.SIG_IGN and before is not None:  # an ignored signal (a background job's) stays so
            previous[sig] = before
            signal.signal(sig, stop_now)
    return previous


def _corpus_unreadable(settings: Settings, exc: OSError) -> str | None:
    """'cannot read <path>' when the failing file or folder is inside the corpus (it is never written)."""
    if not exc.filename:
        return None
    try:
        corpus = settings.corpus_dir.resolve()
        failed = os.path.abspath(os.fsdecode(exc.filename))
    except Exception:  # noqa: BLE001 - the error being reported is the one that matters
        return None
    if failed != str(corpus) and not failed.startswith(str(corpus) + os.sep):
        return None
    return f"cannot read {failed}: {exc.strerror or exc} (the corpus folder is only read: check its permissions)"


_WRITE_ERRNOS = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EFBIG}
# commands that write the page cache under the home folder; audit and worklist also Dagster's instance
_WRITES_HOME = ("fetch", "audit", "worklist", "verify")
_OWN_CONFIG = ("init", "demo")  # commands that read no configuration of the user's


def say_which_config(args: argparse.Namespace, say) -> None:
    """One line on stderr: the configuration this command runs on (the demo always runs on its own copy)."""
    from claims_pipeline.config.settings import deployment_from_env, find_config_file, settings_source

    if args.command == "init":
        return  # init writes a configuration; the file it writes is its first line
    if args.command == "demo":
        say("claims-pipeline: config: the bundled demo.yaml (a copy under the demo's home)")
    else:
        say(f"claims-pipeline: {settings_source(find_config_file(args.config), deployment_from_env())}")


def command_settings(args: argparse.Namespace) -> Settings | None:
    """The settings the command runs on, read once here and passed down (None for init, which writes a
    configuration, and demo, which runs on its own copy of the bundled one). A command that fetches or runs the
    pipeline first checks them against what its deployment requires (production: config/deployments.py)."""
    if args.command in _OWN_CONFIG:
        return None
    from claims_pipeline.config.deployments import check_deployment
    from claims_pipeline.config.settings import load_settings

    settings = load_settings(args.config)
    if args.command in _WRITES_HOME:
        check_deployment(settings)
    return settings


def check_home_writable(args: argparse.Namespace, settings: Settings) -> None:
    """Before a command that writes under the home folder runs: StorageError when a folder it writes cannot be
    (read-only, full), so the run never starts instead of failing with a database traceback halfway."""
    if args.command not in _WRITES_HOME:
        return

    from claims_pipeline.store.writable import check_writable, home_folders

    if args.command == "fetch":
        check_writable(home_folders(settings.home_dir, settings.page_cache))
        return
    from claims_pipeline.orchestration.instance import dagster_home_for

    check_writable(home_folders(settings.home_dir, settings.page_cache, dagster_home_for(settings.home_dir), outputs=True))
    from claims_pipeline.store.cache import PageCache

    # the page cache's database answers and is whole (CacheError: one line) before a run starts, not in its steps
    PageCache.at(settings.page_cache).close()


if __name__ == "__main__":
    sys.exit(main())
