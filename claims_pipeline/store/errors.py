"""Errors of the stores a person can act on: the page cache, the Dagster instance (no SQLAlchemy or Dagster import:
the CLI catches them cheaply). Each message is one line naming the database or file, where it was configured,
and what to check."""

from __future__ import annotations

import errno


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


def file_size_limit() -> int | None:
    """The largest file this process may write, in bytes, when a limit is set (`ulimit -f`), else None. Over it a
    write fails with EFBIG ("File too large"; SQLite says "disk I/O error"): nothing is damaged, the limit is the
    cause."""
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else soft


def write_failure_advice(problem: str, where: str) -> str | None:
    """What to do when a write to `where` (a file or folder) failed for want of room or of a file size limit,
    from the error's words or errno; None when the failure is of another kind."""
    words = problem.lower()
    limit = file_size_limit()
    if limit is not None and ("disk i/o error" in words or "file too large" in words or "disk is full" in words
                              or f"[errno {errno.EFBIG}]" in words):
        return (f"this process may not write files larger than {limit:,} bytes (ulimit -f): raise the limit "
                "(`ulimit -f unlimited`) and run again; nothing needs to be moved aside")
    if "disk is full" in words or "no space left" in words or "quota exceeded" in words:
        return f"the file system holding {where} is full: free space there and run again"
    return None
