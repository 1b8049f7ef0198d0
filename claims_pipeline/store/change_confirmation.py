"""Change detection over the fetch history: a new text is confirmed on its second sighting, and dated at its first.

A new text hash becomes the stable one only when it is seen on two usable fetches in a row (fetches that
failed are not sightings and do not break the streak). A page whose text differs on every fetch therefore never
flags. The confirmed change is dated at the FIRST sighting of the new text (when the page changed, as near as
we know), and the first fetch of a page sets stable_since (so a page never changed still says since when it
has read the same).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ChangeState:
    stable_hash: str | None = None
    stable_since: datetime | None = None
    pending_hash: str | None = None
    pending_since: datetime | None = None
    changed_at: datetime | None = None
    change_confirmed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Settlement:
    state: ChangeState
    confirmed: bool  # this sighting confirmed a change
    old_hash: str | None  # the stable hash replaced (when confirmed)


def settle(state: ChangeState, new_hash: str | None, seen_at: datetime) -> Settlement:
    """Fold one fetch into the change state. new_hash is None for a fetch without usable text."""
    if not new_hash:
        return Settlement(state, False, None)
    if state.stable_hash is None:  # baseline
        return Settlement(replace(state, stable_hash=new_hash, stable_since=seen_at, pending_hash=None, pending_since=None), False, None)
    if new_hash == state.stable_hash:  # back to (or still on) the stable text: any candidate is dropped
        return Settlement(replace(state, pending_hash=None, pending_since=None), False, None)
    if new_hash == state.pending_hash:  # second sighting in a row: confirmed
        first_seen = state.pending_since or seen_at
        new_state = ChangeState(
            stable_hash=new_hash,
            stable_since=first_seen,
            pending_hash=None,
            pending_since=None,
            changed_at=first_seen,
            change_confirmed_at=seen_at,
        )
        return Settlement(new_state, True, state.stable_hash)
    return Settlement(replace(state, pending_hash=new_hash, pending_since=seen_at), False, None)  # in flux
