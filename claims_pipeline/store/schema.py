"""Tables of the page cache (SQLAlchemy Core). Times are naive UTC DateTime columns (portable across SQLite and
Postgres); hashes are full sha256 hex of the stored bytes.

- urls: one row per URL with the change-detection state (stable text, the pending candidate, last change).
- fetches: append-only history, one row per fetch attempt outcome.
- changes: every confirmed content change with its diff.
- runs: fetch runs, so an interrupted run can be resumed (pages.refresh_pages(run_id=...)).
- robots: robots.txt per origin across runs (store/robots_table.py).
- host_leases: each host's politeness state shared by every process fetching (store/host_leases.py).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

HASH = String(64)

urls = Table(
    "urls",
    metadata,
    Column("url", Text, primary_key=True),
    Column("first_seen", DateTime, nullable=False),
    Column("last_fetched_at", DateTime, nullable=False),
    Column("latest_fetch_id", Integer, nullable=True),  # no FK: fetches already points here; avoids a cycle
    Column("stable_hash", HASH, nullable=True),  # the confirmed text (the figures are read on the latest fetch's)
    Column("stable_since", DateTime, nullable=True),  # first sighting of that text
    Column("pending_hash", HASH, nullable=True),  # a new text seen once, awaiting its second sighting
    Column("pending_since", DateTime, nullable=True),
    Column("changed_at", DateTime, nullable=True),  # first sighting of the text of the latest confirmed change
    Column("change_confirmed_at", DateTime, nullable=True),
    Column("last_change_id", Integer, nullable=True),
)

fetches = Table(
    "fetches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("url", Text, ForeignKey("urls.url"), nullable=False),
    Column("run_id", String(64), nullable=True),
    Column("fetched_at", DateTime, nullable=False),
    Column("recorded_at", DateTime, nullable=False),
    Column("http_status", Integer, nullable=True),
    Column("fetch_status", String(32), nullable=False),
    Column("content_type", Text, nullable=False, default=""),
    Column("content_kind", String(32), nullable=False, default=""),
    Column("raw_hash", HASH, nullable=True),
    Column("text_hash", HASH, nullable=True),
    Column("reused_text", Boolean, nullable=False, default=False),  # a 304: hashes copied from the previous fetch
    Column("etag", Text, nullable=True),
    Column("last_modified", Text, nullable=True),
    Column("note", Text, nullable=False, default=""),
    Column("final_url", Text, nullable=True),
    Column("changed", Boolean, nullable=False, default=False),  # this fetch confirmed a content change
    Column("elapsed_s", Float, nullable=False, default=0.0),
    Column("attempts", Integer, nullable=False, default=0),
    Index("ix_fetches_url_id", "url", "id"),
    Index("ix_fetches_run_url", "run_id", "url"),
)

changes = Table(
    "changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("url", Text, ForeignKey("urls.url"), nullable=False),
    Column("fetch_id", Integer, ForeignKey("fetches.id"), nullable=False),  # the confirming fetch
    Column("changed_at", DateTime, nullable=False),
    Column("confirmed_at", DateTime, nullable=False),
    Column("old_hash", HASH, nullable=False),
    Column("new_hash", HASH, nullable=False),
    Column("diff", Text, nullable=True),  # capped unified diff; None when the old text blob is gone
    Index("ix_changes_url_id", "url", "id"),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime, nullable=True),
    Column("url_count", Integer, nullable=False, default=0),
)

# robots.txt kept across runs (RFC 9309 §2.4), one row per origin ("http://host:port"): the last answer the site
# gave (2xx with its body, or a 4xx = allow all), when it was last confirmed, and its validators for a 304.
robots = Table(
    "robots",
    metadata,
    Column("origin", Text, primary_key=True),
    Column("status", Integer, nullable=False),
    Column("body", Text, nullable=False, default=""),  # capped at 512 kB by the fetcher: inline, no blob
    Column("fetched_at", DateTime, nullable=False),
    Column("etag", Text, nullable=True),
    Column("last_modified", Text, nullable=True),
)

# Politeness shared across processes and machines (store/host_leases.py), one row per host: who holds the host and
# until when, and the throttle state the holder leaves for the next one. Times are epoch seconds on the DATABASE's
# clock (PostgreSQL's clock_timestamp(); SQLite, one machine: time.time()), floats for the lease arithmetic.
host_leases = Table(
    "host_leases",
    metadata,
    Column("host", Text, primary_key=True),
    Column("holder", String(64), nullable=True),  # the holding fetch run's token; None = free
    Column("lease_until", Float, nullable=False, default=0.0),  # the holder may start no request needing longer
    Column("next_start", Float, nullable=False, default=0.0),  # no request to the host starts before
    Column("retry_after_until", Float, nullable=False, default=0.0),  # the host's last Retry-After, until
    Column("interval_s", Float, nullable=True),  # an interval raised by Crawl-delay
    Column("crawl_delay", Float, nullable=True),  # what robots.txt asked (the interval is capped)
    Column("breaker_failures", Integer, nullable=False, default=0),  # the failures that opened the breaker
    Column("breaker_note", Text, nullable=False, default=""),  # the last of them
    Column("breaker_at", Float, nullable=False, default=0.0),  # when the two above were written
    # when a run opened the host's breaker (0: closed); runs that meet it open do not move it (host_leases.py)
    Column("breaker_opened_at", Float, nullable=False, default=0.0, server_default="0"),
    # digest of the settings that routed the host when it opened (address map, allowed networks and hosts): a
    # breaker opened under other routes is closed
    Column("breaker_route", Text, nullable=False, default="", server_default=""),
)
# columns added to host_leases after its first release: a cache made before gets them (engine.add_columns), the
# table's rows being politeness state only
HOST_LEASE_ADDED = ("breaker_opened_at", "breaker_route")
