from claims_pipeline.store.blobs import text_hash
from claims_pipeline.web.records import FetchResult, FetchStatus
from claims_pipeline_tests.store.helpers import day, failed, make_cache, not_modified, ok

URL = "https://www.example.gov/tax/rates"


def test_first_fetch_is_stored_with_text_and_stable_since(tmp_path):
    cache = make_cache(tmp_path)
    state = cache.record(ok(URL, "VAT 18 %", etag='"v1"'), now=day(1))
    assert state.fetch_status == "OK" and state.http_status == 200 and state.content_kind == "html"
    assert state.text == "VAT 18 %" and state.text_hash == text_hash("VAT 18 %")
    assert state.fetched_at == day(1) and state.stable_since == day(1)  # the earlier verifier left this empty
    assert state.changed_at is None and state.content_changed is False and state.diff is None
    assert cache.blobs.get(state.raw_hash, "raw").startswith(b"<html>")


def test_real_change_flags_once_on_second_sighting_with_first_sighting_date_and_diff(tmp_path):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, "intro\nVAT 18 %\nend"), now=day(1))
    s2 = cache.record(ok(URL, "intro\nVAT 20 %\nend"), now=day(2))
    # the figures are read on the new text at once; its change awaits the second sighting
    assert s2.content_changed is False and s2.text == "intro\nVAT 20 %\nend" and s2.unconfirmed_since == day(2)
    assert s2.changed_at is None and s2.diff is None
    s3 = cache.record(ok(URL, "intro\nVAT 20 %\nend"), now=day(3))
    assert s3.content_changed is True and s3.unconfirmed_since is None
    assert s3.changed_at == day(2) and s3.stable_since == day(2)
    assert s3.text == "intro\nVAT 20 %\nend"
    assert "-VAT 18 %" in s3.diff and "+VAT 20 %" in s3.diff
    s4 = cache.record(ok(URL, "intro\nVAT 20 %\nend"), now=day(4))
    assert s4.content_changed is False and s4.changed_at == day(2) and "+VAT 20 %" in s4.diff
    [change] = cache.changes(URL)
    assert (change.changed_at, change.confirmed_at) == (day(2), day(3))
    assert change.old_hash == text_hash("intro\nVAT 18 %\nend") and change.new_hash == s3.text_hash


def test_page_that_changes_on_every_fetch_never_flags(tmp_path):
    cache = make_cache(tmp_path)
    states = [cache.record(ok(URL, f"rate 5 %\nrendered at {i}"), now=day(i)) for i in range(1, 7)]
    assert not any(s.content_changed for s in states)
    # each audit reads the text it fetched; none of them is a confirmed change
    assert states[-1].changed_at is None and states[-1].text == "rate 5 %\nrendered at 6"
    assert states[-1].unconfirmed_since == day(6) and states[0].unconfirmed_since is None
    assert cache.changes(URL) == []


def test_304_reuses_the_cached_text_and_is_reported_ok(tmp_path):
    cache = make_cache(tmp_path)
    first = cache.record(ok(URL, "VAT 18 %", etag='"v1"', last_modified="Mon, 02 Mar 2026 10:00:00 GMT"), now=day(1))
    assert cache.validators([URL, "https://other.example/"]) == {URL: ('"v1"', "Mon, 02 Mar 2026 10:00:00 GMT")}
    state = cache.record(not_modified(URL), now=day(2))
    assert state.fetch_status == "OK" and state.http_status == 304
    assert state.text == "VAT 18 %" and state.text_hash == first.text_hash and state.fetched_at == day(2)
    last = cache.history(URL)[-1]
    assert last.fetch_status == "NOT_MODIFIED" and last.reused_text
    assert last.text_hash == first.text_hash and last.raw_hash == first.raw_hash and last.etag == '"v1"'
    assert cache.validators([URL]) == {URL: ('"v1"', "Mon, 02 Mar 2026 10:00:00 GMT")}


def test_304_confirms_a_pending_change(tmp_path):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, "old", etag='"a"'), now=day(1))
    cache.record(ok(URL, "new", etag='"b"'), now=day(2))
    assert cache.validators([URL])[URL][0] == '"b"'  # validators follow the latest text, not the stable one
    state = cache.record(not_modified(URL), now=day(3))
    assert state.content_changed and state.text == "new" and state.changed_at == day(2)


def test_304_without_a_cached_copy_is_unavailable_with_a_note(tmp_path):
    cache = make_cache(tmp_path)
    state = cache.record(not_modified(URL), now=day(1))
    assert state.fetch_status == "UNAVAILABLE" and "304 without a cached copy" in state.note and state.text is None


def test_failed_latest_fetch_reports_its_status_but_keeps_the_last_good_hash(tmp_path):
    cache = make_cache(tmp_path)
    good = cache.record(ok(URL, "VAT 18 %", etag='"v1"'), now=day(1))
    state = cache.record(failed(URL), now=day(2))
    assert state.fetch_status == "DEAD" and state.http_status == 404 and state.note == "http 404"
    assert state.text is None and state.text_hash == good.text_hash and state.fetched_at == day(2)
    assert cache.validators([URL]) == {URL: ('"v1"', None)}  # the last good copy can still be revalidated
    assert cache.fresh_urls([URL], ttl_days=30, now=day(3)) == set()  # a failed latest fetch is never fresh


def test_fresh_urls_respects_ttl_and_clock(tmp_path):
    cache = make_cache(tmp_path)
    other = "https://b.example/p"
    cache.record(ok(URL, "x"), now=day(1))
    cache.record(ok(other, "y"), now=day(10))
    assert cache.fresh_urls([URL, other, "https://never.example/"], ttl_days=5, now=day(12)) == {other}
    assert cache.fresh_urls([URL, other], ttl_days=30, now=day(12)) == {URL, other}


def test_validators_skip_pages_without_validators_or_without_their_text_blob(tmp_path):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, "no validators"), now=day(1))
    other = "https://b.example/p"
    s = cache.record(ok(other, "has etag", etag='"e"'), now=day(1))
    assert cache.validators([URL, other]) == {other: ('"e"', None)}
    cache.blobs.path(s.text_hash, "text").unlink()
    assert cache.validators([other]) == {}  # a 304 would leave us without the text
    state = cache.state(other)
    assert state.fetch_status == "UNAVAILABLE" and "cached text blob missing" in state.note


def test_history_is_append_only_and_survives_reopening(tmp_path):
    cache = make_cache(tmp_path)
    cache.record(ok(URL, "one", etag='"1"'), now=day(1), run_id="r1")
    cache.record(FetchResult(url=URL, status=FetchStatus.BLOCKED, http_status=403, note="challenge: cf-mitigated"), now=day(2), run_id="r2")
    cache.record(ok(URL, "one", etag='"1"'), now=day(3), run_id="r3")
    cache.close()
    reopened = make_cache(tmp_path)
    hist = reopened.history(URL)
    assert [h.fetch_status for h in hist] == ["OK", "BLOCKED", "OK"]
    assert [h.run_id for h in hist] == ["r1", "r2", "r3"]
    assert hist[1].note == "challenge: cf-mitigated" and hist[1].text_hash is None
    assert reopened.state(URL).fetch_status == "OK" and reopened.state(URL).fetched_at == day(3)


def test_runs_support_resuming(tmp_path):
    cache = make_cache(tmp_path)
    run = cache.start_run("run-1", now=day(1), url_count=2)
    assert cache.start_run("run-1", now=day(5)) == "run-1"
    assert cache.run_info("run-1")["started_at"] == day(1)  # idempotent: the first start stands
    cache.record(ok(URL, "x"), now=day(1), run_id=run)
    assert cache.urls_done_in_run(run, [URL, "https://b.example/"]) == {URL}
    assert cache.urls_done_in_run("other-run", [URL]) == set()
    cache.finish_run(run, now=day(2))
    assert cache.run_info(run)["finished_at"] == day(2)


def test_states_returns_only_fetched_urls_in_bulk(tmp_path):
    cache = make_cache(tmp_path)
    urls = [f"https://h{i}.example/p" for i in range(1200)]  # more than one IN (...) chunk
    for u in urls[:600:3]:
        cache.record(ok(u, f"text {u}"), now=day(1))
    states = cache.states(urls)
    assert set(states) == set(urls[:600:3])
    assert all(s.text == f"text {u}" for u, s in states.items())


def test_states_without_text_check_the_blob_exists_and_leave_the_reading_to_the_caller(tmp_path):
    cache = make_cache(tmp_path)
    s = cache.record(ok(URL, "VAT 18 %", etag='"v1"'), now=day(1))
    other = "https://b.example/p"
    gone = cache.record(ok(other, "stamp duty 5 %"), now=day(1))
    cache.blobs.path(gone.text_hash, "text").unlink()
    states = cache.states([URL, other], with_text=False)
    assert states[URL].fetch_status == "OK" and states[URL].text is None and states[URL].text_hash == s.text_hash
    assert cache.text(states[URL].text_hash) == "VAT 18 %"
    assert states[other].fetch_status == "UNAVAILABLE" and "cached text blob missing" in states[other].note
    with_text = cache.states([URL, other])
    assert with_text[URL].text == "VAT 18 %" and with_text[other].fetch_status == "UNAVAILABLE"


def test_diff_is_made_outside_the_write_transaction_and_used_only_if_the_change_still_confirms(tmp_path):
    # Another writer records the same confirming fetch while this one computes its diff (no lock held, so it can):
    # this one's retry then finds the change already confirmed, and neither its diff nor a second change is kept.
    cache, other = make_cache(tmp_path), make_cache(tmp_path)
    cache.record(ok(URL, "intro\nVAT 18 %\nend"), now=day(1))
    cache.record(ok(URL, "intro\nVAT 20 %\nend"), now=day(2))
    made = []
    real_diff = cache.diff_between

    def diff_while_another_writer_confirms(old_hash, new_hash, *, new_text=None):
        made.append((old_hash, new_hash))
        if len(made) == 1:
            assert other.record(ok(URL, "intro\nVAT 20 %\nend"), now=day(3)).content_changed
        return real_diff(old_hash, new_hash, new_text=new_text)

    cache.diff_between = diff_while_another_writer_confirms  # type: ignore[method-assign]
    state = cache.record(ok(URL, "intro\nVAT 20 %\nend"), now=day(3))
    assert made == [(text_hash("intro\nVAT 18 %\nend"), text_hash("intro\nVAT 20 %\nend"))]
    assert state.content_changed is False and state.changed_at == day(2) and "+VAT 20 %" in state.diff
    [change] = cache.changes(URL)
    assert (change.changed_at, change.confirmed_at) == (day(2), day(3)) and "-VAT 18 %" in change.diff
    assert [row.changed for row in cache.history(URL)] == [False, False, True, False]
    other.close()


def test_same_bytes_read_differently_after_an_upgrade_is_no_change(tmp_path):
    """A new claims_pipeline may read the same page bytes into a different text (a charset or chrome fix): that
    must not be reported as the page changing. Other bytes with that new text still count as a change."""
    from dataclasses import replace

    cache = make_cache(tmp_path)
    first = ok(URL, "Seuil 300 000 â‚¬")  # the old version misread the page
    cache.record(first, now=day(1))
    reread = replace(first, text="Seuil 300 000 €")  # same raw bytes, the new version's reading
    s2 = cache.record(reread, now=day(2))
    s3 = cache.record(reread, now=day(3))
    assert (s2.content_changed, s3.content_changed) == (False, False) and cache.changes(URL) == []
    assert s3.text == "Seuil 300 000 €" and s3.stable_since == day(1)  # the page has been this since day 1
    assert "read anew by this version" in cache.history(URL)[1].note
    # a real change afterwards (other bytes) still flags on its second sighting
    cache.record(ok(URL, "Seuil 350 000 €"), now=day(4))
    s5 = cache.record(ok(URL, "Seuil 350 000 €"), now=day(5))
    assert s5.content_changed is True and "+Seuil 350 000 €" in s5.diff


def test_a_new_reading_of_a_page_whose_bytes_change_every_fetch_is_no_change(tmp_path):
    """A page with a nonce in its HTML sends other bytes each time, so 'same bytes' cannot tell an upgrade's new
    reading from a real change. The stable fetch's own bytes, read anew by this version, can."""
    import re
    from dataclasses import replace

    def new_reading(raw: bytes, content_type: str, url: str) -> str:
        return re.sub(rb"<!--.*?-->|<[^>]+>", b"", raw).decode().strip()

    def page(body: str, nonce: int, *, old: bool = False):
        raw = f"<p>{body}</p><!--nonce {nonce}-->".encode()
        text = new_reading(raw, "text/html", URL) + (" · Cookie settings" if old else "")  # the old version kept chrome
        return replace(ok(URL, text), raw=raw)

    cache = make_cache(tmp_path)
    cache.reread = new_reading
    cache.record(page("VAT 18 %", 1, old=True), now=day(1))
    s2 = cache.record(page("VAT 18 %", 2), now=day(2))
    s3 = cache.record(page("VAT 18 %", 3), now=day(3))
    assert (s2.content_changed, s3.content_changed) == (False, False) and cache.changes(URL) == []
    assert s3.text == "VAT 18 %" and "read anew by this version" in cache.history(URL)[1].note
    # a real change still flags on its second sighting, whatever the nonce
    cache.record(page("VAT 20 %", 4), now=day(4))
    s5 = cache.record(page("VAT 20 %", 5), now=day(5))
    assert s5.content_changed is True and s5.changed_at == day(4) and "+VAT 20 %" in s5.diff


def test_fetch_statuses_are_the_states_statuses_without_the_states(tmp_path):
    """The statuses a run reads before it fetches (steps/pages/fetched.statuses_before) are what states() says:
    a 304 reads OK, a usable fetch whose text blob is gone UNAVAILABLE, a failure its own status; a URL never
    fetched is absent."""
    cache = make_cache(tmp_path)
    fresh, revalidated, dead, lost = (f"https://www.example.gov/{n}" for n in ("fresh", "revalidated", "dead", "lost"))
    cache.record(ok(fresh, "VAT 18 %", etag='"a"'), now=day(1))
    cache.record(ok(revalidated, "VAT 20 %", etag='"b"'), now=day(1))
    cache.record(not_modified(revalidated, '"b"'), now=day(2))
    cache.record(failed(dead), now=day(1))
    gone = cache.record(ok(lost, "fee EUR 35", etag='"c"'), now=day(1))
    cache.blobs.path(gone.text_hash, "text").unlink()
    urls = [fresh, revalidated, dead, lost, "https://www.example.gov/never"]
    statuses = cache.fetch_statuses(urls)
    assert statuses == {u: s.fetch_status for u, s in cache.states(urls, with_text=False).items()}
    assert statuses == {fresh: "OK", revalidated: "OK", dead: "DEAD", lost: "UNAVAILABLE"}
