"""What every corpus command (extract, lint, audit, worklist) checks before it works: a corpus directory is set
and exists, and `--scope X` names at least one scope. Either failure is the user's input: `cli.main` prints the
InputError as one line (no traceback) and exits 2. Never imports Dagster (extract and lint start fast)."""

from __future__ import annotations

from typing import Any

from claims_pipeline.config.settings import (
    CorpusNotSet,
    corpus_origin,  # noqa: F401  (the commands import it from here)
)
from claims_pipeline.corpus.scopes import no_scope_message


class InputError(Exception):
    """A missing corpus directory or a --scope that matches nothing; the message names the value and its origin."""


def corpus_missing_message(settings: Any, origin: str) -> str | None:
    """The error for a corpus directory that does not exist (None when it does)."""
    if settings.corpus_dir.is_dir():
        return None
    return f"corpus directory not found: {settings.corpus_dir} ({origin})"


def check_corpus_dir(settings: Any, origin: str) -> None:
    try:
        message = corpus_missing_message(settings, origin)
    except CorpusNotSet as exc:  # no corpus configured outside the demo: how to set one, in one line
        raise InputError(str(exc)) from None
    if message:
        raise InputError(message)


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
