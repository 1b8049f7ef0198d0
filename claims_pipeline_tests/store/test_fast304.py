"""The warm-run write path: append() of a 304 with its basis (SQLite fast path) must leave exactly the rows the
generic record() path leaves, and fall back to it for the cases it does not handle."""

from sqlalchemy import select

from claims_pipeline.store import schema
from claims_pipeline.store.cache import PageCache
from claims_pipeline_tests.store.helpers import day, failed, make_cache, not_modified, ok

URL = "https://www.example.gov/tax/rates"


def _rows(cache: PageCache) -> tuple[list[dict], list[dict], list[dict]]:
    """Every row of the three history tables, minus ids and wall-clock bookkeeping."""
    with cache.engine.connect() as conn:
        fetches = [dict(r) for r in conn.execute(select(schema.fetches).order_by(schema.fetches.c.id)).mappings()]
        urls = [dict(r) for r in conn.execute(select(schema.urls).order_by(schema.urls.c.url)).mappings()]
        changes = [dict(r) for r in conn.execute(select(schema.changes).order_by(schema.changes.c.id)).mappings()]
    for r in fetches:
        r.pop("id"), r.pop("recorded_at")
    for r in urls:
        r.pop("latest_fetch_id"), r.pop("last_change_id")
    for r in changes:
        r.pop("id"), r.pop("fetch_id")
    return fetches, urls, changes


def _replay(cache: PageCache, *, bulk: bool) -> None:
    """One history with every 304 case: plain, after a failure, during a pending change, confirming it."""
    steps = [
        (ok(URL, "VAT 18 %", etag='"a"', last_modified="Mon, 02 Mar 2026 10:00:00 GMT"), 1),
        (not_modified(URL), 2),
        (failed(URL), 3),
        (not_modified(URL, etag='"a"'), 4),
        (ok(URL, "VAT 20 %", etag='"b"'), 5),  # pending
        (not_modified(URL), 6),  # second sighting: confirms (fast path must hand over)
        (not_modified(URL), 7),
    ]
    for result, d in steps:
        if bulk:
            basis = cache.conditional_bases([URL]).get(URL)
            cache.append(result, now=day(d), run_id="r", basis=basis)
        else:
            cache.record(result, now=day(d), run_id="r")


def test_bulk_append_writes_the_same_rows_as_record(tmp_path):
    generic, bulk = make_cache(tmp_path / "g"), make_cache(tmp_path / "b")
    _replay(generic, bulk=False)
    _replay(bulk, bulk=True)
    g_rows, b_rows = _rows(generic), _rows(bulk)
    assert b_rows == g_rows
    fetches, _, changes = b_rows
    assert [f["fetch_status"] for f in fetches].count("NOT_MODIFIED") == 4
    assert [f["changed"] for f in fetches] == [False, False, False, False, False, True, False]
    assert len(changes) == 1 and changes[0]["changed_at"].day == 5 and "+VAT 20 %" in changes[0]["diff"]
    assert bulk.state(URL) == generic.state(URL)


def test_a_304_stands_for_the_copy_whose_validators_were_sent(tmp_path):
    # Another process records a newer copy between our validators read and our 304: the 304 answered OUR
    # validators, so it reuses the hashes of the basis, not of whatever is latest.
    cache = make_cache(tmp_path)
    first = cache.record(ok(URL, "old", etag='"a"'), now=day(1))
    basis = cache.conditional_bases([URL])[URL]
    cache.record(ok(URL, "new", etag='"b"'), now=day(2))  # the other process
    cache.append(not_modified(URL), now=day(3), basis=basis)
    last = cache.history(URL)[-1]
    assert last.fetch_status == "NOT_MODIFIED" and last.text_hash == first.text_hash and last.etag == '"a"'
    state = cache.state(URL)
    assert state.text == "old" and not state.content_changed  # "new" was seen once, then the old text again
    again = cache.record(ok(URL, "new", etag='"b"'), now=day(4))
    assert not again.content_changed  # the 304 broke the streak: "new" needs two sightings in a row again


def test_append_of_a_304_for_an_unknown_url_takes_the_generic_path(tmp_path):
    cache = make_cache(tmp_path)
    cache.append(not_modified(URL), now=day(1), basis=None)
    state = cache.state(URL)
    assert state.fetch_status == "UNAVAILABLE" and "304 without a cached copy" in state.note

