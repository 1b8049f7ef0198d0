"""What the page cache records for one fetch, decided apart from the database: the decision is a pure function of
the URL's change state and what was fetched, so each rule is checked here without a transaction."""

from __future__ import annotations

from datetime import UTC, datetime

from claims_pipeline.store.change_confirmation import ChangeState
from claims_pipeline.store.record_decision import _decide, _fetched, _Needed, _Recording
from claims_pipeline.store.records import Basis
from claims_pipeline.web.records import FetchResult, FetchStatus

URL = "https://example.org/page"
T1 = datetime(2026, 1, 1, tzinfo=UTC)
T2 = datetime(2026, 1, 2, tzinfo=UTC)
STABLE = ChangeState(stable_hash="old", stable_since=T1)


def ok(text_hash: str | None = "new", raw_hash: str | None = "raw-new"):
    return _fetched(FetchResult(url=URL, status=FetchStatus.OK, content_type="text/html"), FetchStatus.OK,
                    raw_hash, text_hash, None)


def test_a_first_fetch_sets_the_baseline() -> None:
    decided = _decide(URL, ok(), ChangeState(), T1, same_bytes_as_stable=False, rereads=None, diffs={}, may_wait=True)
    assert isinstance(decided, _Recording)
    assert decided.settled.state.stable_hash == "new" and decided.settled.state.stable_since == T1
    assert not decided.settled.confirmed and decided.diff_key is None


def test_a_confirming_sighting_asks_for_its_diff_then_records_it() -> None:
    pending = ChangeState(stable_hash="old", stable_since=T1, pending_hash="new", pending_since=T1)
    needed = _decide(URL, ok(), pending, T2, same_bytes_as_stable=False, rereads=None, diffs={}, may_wait=True)
    assert needed == _Needed(diff=("old", "new"))
    decided = _decide(URL, ok(), pending, T2, same_bytes_as_stable=False, rereads=None,
                      diffs={("old", "new"): "-a\n+b"}, may_wait=True)
    assert isinstance(decided, _Recording)
    assert decided.settled.confirmed and decided.diff_key == ("old", "new")
    assert decided.settled.state.changed_at == T1 and decided.settled.state.change_confirmed_at == T2
    # past the waits, the record goes on without the diff made yet (the caller makes it under the lock)
    late = _decide(URL, ok(), pending, T2, same_bytes_as_stable=False, rereads=None, diffs={}, may_wait=False)
    assert isinstance(late, _Recording) and late.diff_key == ("old", "new")


def test_the_same_bytes_read_anew_are_no_page_change() -> None:
    decided = _decide(URL, ok(), STABLE, T2, same_bytes_as_stable=True, rereads=None, diffs={}, may_wait=True)
    assert isinstance(decided, _Recording)
    assert decided.before.stable_hash == "new" and decided.settled.state.pending_hash is None
    assert not decided.settled.confirmed
    assert decided.fetched.note == "same bytes as the stable text's fetch, read anew by this version"


def test_other_bytes_ask_for_the_stable_bytes_read_anew() -> None:
    needed = _decide(URL, ok(), STABLE, T2, same_bytes_as_stable=False, rereads={}, diffs={}, may_wait=True)
    assert needed == _Needed(reread=(URL, "old"))
    same = _decide(URL, ok(), STABLE, T2, same_bytes_as_stable=False, rereads={(URL, "old"): "new"}, diffs={},
                   may_wait=True)
    assert isinstance(same, _Recording) and same.before.stable_hash == "new"
    assert "read anew by this version, give this text" in same.fetched.note
    other = _decide(URL, ok(), STABLE, T2, same_bytes_as_stable=False, rereads={(URL, "old"): "old"}, diffs={},
                    may_wait=True)
    assert isinstance(other, _Recording) and other.settled.state.pending_hash == "new"
    assert other.fetched.note == ""
    # past the waits: judged without the re-reading, a first sighting of a new text
    late = _decide(URL, ok(), STABLE, T2, same_bytes_as_stable=False, rereads={}, diffs={}, may_wait=False)
    assert isinstance(late, _Recording) and late.settled.state.pending_hash == "new"
    # a cache that does not re-read never asks
    plain = _decide(URL, ok(), STABLE, T2, same_bytes_as_stable=False, rereads=None, diffs={}, may_wait=True)
    assert isinstance(plain, _Recording) and plain.settled.state.pending_hash == "new"


def test_a_304_stands_for_its_basis_or_says_there_is_none() -> None:
    result = FetchResult(url=URL, status=FetchStatus.NOT_MODIFIED, etag='"e2"')
    basis = Basis(raw_hash="raw-old", text_hash="old", content_type="text/html", content_kind="html", etag='"e1"',
                  last_modified="Mon, 01 Jan 2026 00:00:00 GMT")
    fetched = _fetched(result, FetchStatus.NOT_MODIFIED, None, None, basis)
    assert (fetched.raw_hash, fetched.text_hash, fetched.content_kind, fetched.etag, fetched.usable) == \
        ("raw-old", "old", "html", '"e2"', True)
    assert fetched.last_modified == basis.last_modified
    decided = _decide(URL, fetched, STABLE, T2, same_bytes_as_stable=False, rereads={}, diffs={}, may_wait=True)
    assert isinstance(decided, _Recording) and decided.settled.state == STABLE
    bare = _fetched(result, FetchStatus.NOT_MODIFIED, None, None, None)
    assert bare.text_hash is None and not bare.usable and bare.note == "304 without a cached copy"


def test_a_failed_fetch_is_no_sighting() -> None:
    failed = _fetched(FetchResult(url=URL, status=FetchStatus.UNAVAILABLE, note="http 503"), FetchStatus.UNAVAILABLE,
                      None, None, None)
    pending = ChangeState(stable_hash="old", stable_since=T1, pending_hash="new", pending_since=T1)
    decided = _decide(URL, failed, pending, T2, same_bytes_as_stable=False, rereads={}, diffs={}, may_wait=True)
    assert isinstance(decided, _Recording) and decided.settled.state == pending and decided.fetched.note == "http 503"
