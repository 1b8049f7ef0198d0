"""What every corpus command (extract, lint, audit, worklist) checks before it works: a corpus directory is set
and exists, and `--scope X` names at least one scope. Either failure is the user's input: `cli.main` prints the
InputError as one line (no traceback) and exits 2. Never imports Dagster (extract and lint start fast)."""

from __future__ import annotations

from claims_pipeline.config.corpus_source import CorpusSource, corpus_source
from claims_pipeline.config.settings import (
    CorpusNotSet,
    Settings,
    corpus_origin,  # noqa: F401  (the commands import it from here)
)
from claims_pipeline.corpus.scopes import no_scope_message


class InputError(Exception):
    """A missing corpus directory or a --scope that matches nothing; the message names the value and its origin."""


def checked_corpus(settings: Settings, origin: str) -> CorpusSource:
    """The corpus the command reads, its folder known to exist; origin says where the folder was named."""
    try:
        corpus = corpus_source(settings)
    except CorpusNotSet as exc:  # no corpus configured outside the demo: how to set one, in one line
        raise InputError(str(exc)) from None
    if not corpus.root.is_dir():
        raise InputError(f"corpus directory not found: {corpus.root} ({origin})")
    return corpus


def chosen_scopes(all_scopes: list[str], name: str | None) -> list[str] | None:
    """The scopes `--scope name` selects (None: no filter, every scope). Raises InputError when none matches."""
    from claims_pipeline.corpus.scopes import resolve_scope_filter

    if name is None:
        return None
    chosen = resolve_scope_filter(all_scopes, name)
    if not chosen:
        raise InputError(no_scope_message(name, all_scopes))
    return chosen


def check_clock(value: str | None) -> None:
    """--now must be an ISO date-time (a date alone is midnight UTC): a usage error before any run, not a failed
    step after the job started writing."""
    if not value:
        return
    from datetime import datetime

    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"--now {value!r}: not an ISO date-time (e.g. 2026-06-01T00:00:00Z)") from None
