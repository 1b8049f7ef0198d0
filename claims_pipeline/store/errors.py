"""Errors of the stores a person can act on: the page cache, the Dagster instance (no SQLAlchemy or Dagster import:
the CLI catches them cheaply). Each message is one line naming the database or file, where it was configured,
and what to check."""

from __future__ import annotations


class CacheError(Exception):
    """The cache index cannot be used as it is: not a database, unreadable, or made by another version. The
    message names the file (or URL) and what to do."""


class InstanceError(Exception):
    """The Dagster instance cannot be opened: its dagster.yaml is damaged, or its database does not answer."""


def database_problem(exc: BaseException) -> str:
    """The first line of a database driver's error, without SQLAlchemy's '(Background on this error at: …)'
    and '[SQL: …]' lines, and what it most likely means."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines()]
    lines = [line for line in lines if line and not line.startswith(("(Background on this error", "[SQL:", "[parameters:"))]
    return lines[0] if lines else type(exc).__name__


def unreachable(problem: str) -> bool:
    """A server that does not answer (refused, timed out, unknown host), as drivers word it."""
    words = ("could not connect", "connection refused", "connection to server", "could not translate host name",
             "timeout expired", "name or service not known", "no route to host", "server closed the connection")
    return any(w in problem.lower() for w in words)
