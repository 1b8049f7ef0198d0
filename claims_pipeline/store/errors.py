"""Errors of the page cache a person can act on (no SQLAlchemy import: the CLI catches them cheaply)."""

from __future__ import annotations


class CacheError(Exception):
    """The cache index cannot be used as it is: not a database, unreadable, or made by another version. The
    message names the file (or URL) and what to do."""
