"""PageCache.append_many: the fetches a run's writer thread finds waiting together are recorded in one write
transaction, and must leave exactly the rows and states that appending them one at a time leaves; a fetch that
needs a diff made with no lock held, and one the database refuses, are each handled alone without losing the rest."""

from sqlalchemy import select

from claims_pipeline.store import schema
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.clock import to_utc
from claims_pipeline_tests.store.helpers import day, failed, make_cache, not_modified, ok

URLS = [f"https://www.example.gov/tax/m{i}" for i in range(8)]


def _seeded(path) -> PageCache:
    cache = make_cache(path)
    for u in URLS[:6]:
        cache.record(ok(u, f"text of {u}", etag='"a"'), now=day(1))
    cache.record(ok(URLS[2], f"new text of {URLS[2]}", etag='"b"'), now=day(2))  # pending: the next sighting confirms
    return cache


def _run(cache: PageCache) -> list[tuple]:
    """One run's results: 304s, a new page, a dead page, a changed page and the sighting that confirms a change
    (its diff is made with no lock held), with their fetch time and basis."""
    bases = cache.conditional_bases(URLS)
    when = to_utc(day(3))
    results = [not_modified(URLS[0]), not_modified(URLS[1]), ok(URLS[2], f"new text of {URLS[2]}", etag='"b"'),
               failed(URLS[3]), ok(URLS[4], f"another text of {URLS[4]}", etag='"c"'), not_modified(URLS[5]),
               ok(URLS[6], "a first page"), failed(URLS[7])]
    return [(r, when, bases.get(r.url)) for r in results]


def _history(cache: PageCache) -> tuple[list[dict], ...]:
    with cache.engine.connect() as conn:
        tables = [[dict(r) for r in conn.execute(select(t).order_by(*t.primary_key.columns)).mappings()]
                  for t in (schema.fetches, schema.urls, schema.changes)]
    for r in tables[0]:
        r.pop("recorded_at")
    return tuple(tables)


def test_a_batch_leaves_the_rows_and_states_of_one_at_a_time(tmp_path):
    one, many = _seeded(tmp_path / "one"), _seeded(tmp_path / "many")
    run = _run(one)
    # one at a time, in the order append_many stores them: the batch first, then the fetch that needed a diff
    for result, when, basis in [i for i in run if i[0].url != URLS[2]] + [i for i in run if i[0].url == URLS[2]]:
        one.append(result, now=when, run_id="r", basis=basis)
    assert many.append_many(_run(many), run_id="r") == []
    assert _history(many) == _history(one)  # ids too: nothing lost, nothing written twice
    assert len(_history(many)[0]) == 7 + len(URLS)
    assert len(_history(many)[2]) == 1  # the confirmed change, with its diff
    assert many.states(URLS) == one.states(URLS)


def test_a_fetch_the_database_refuses_costs_only_itself(tmp_path):
    cache = _seeded(tmp_path)
    with cache.engine.begin() as c:  # a real failure inside SQLite: the fetch row of URLS[3] cannot be written
        c.exec_driver_sql(f"CREATE TRIGGER no_m3 BEFORE INSERT ON fetches WHEN NEW.url = '{URLS[3]}' "
                          "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    refused = cache.append_many(_run(cache), run_id="r")
    assert [r.url for r, _ in refused] == [URLS[3]] and "disk says no" in str(refused[0][1])
    assert cache.urls_done_in_run("r", URLS) == set(URLS) - {URLS[3]}
