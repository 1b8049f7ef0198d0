"""Time helpers: the database holds naive UTC; records carry ISO-8601 strings with an explicit offset."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def to_utc(value: str | datetime | None) -> datetime | None:
    """Naive UTC from an ISO string or datetime (naive input is taken as UTC); None/"" -> None."""
    if value is None or value == "":
        return None
    dt = datetime.fromisoformat(value) if isinstance(value, str) else value
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return dt


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.replace(tzinfo=UTC).isoformat()
