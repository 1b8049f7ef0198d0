from datetime import datetime

from claims_pipeline.store.change_confirmation import ChangeState, settle


def t(n: int) -> datetime:
    return datetime(2026, 1, n)


def run(hashes):
    state, confirmations = ChangeState(), []
    for i, h in enumerate(hashes, start=1):
        s = settle(state, h, t(i))
        state = s.state
        confirmations.append(s.confirmed)
    return state, confirmations


def test_first_sighting_is_the_baseline_with_stable_since_set():
    state, conf = run(["A"])
    assert state.stable_hash == "A" and state.stable_since == t(1)
    assert conf == [False] and state.changed_at is None


def test_change_confirmed_on_second_sighting_dated_at_the_first():
    state, conf = run(["A", "A", "B", "B", "B"])
    assert conf == [False, False, False, True, False]
    assert state.stable_hash == "B"
    assert state.changed_at == t(3) and state.stable_since == t(3) and state.change_confirmed_at == t(4)


def test_page_changing_on_every_fetch_never_flags():
    state, conf = run(["A", "B", "C", "D", "E", "F"])
    assert not any(conf) and state.stable_hash == "A"


def test_flapping_between_two_texts_never_flags():
    state, conf = run(["A", "B", "A", "B", "A"])
    assert not any(conf) and state.stable_hash == "A"


def test_failed_fetch_between_sightings_neither_counts_nor_breaks_the_streak():
    state, conf = run(["A", "B", None, "B"])
    assert conf == [False, False, False, True]
    assert state.changed_at == t(2)


def test_second_change_replaces_the_first():
    state, conf = run(["A", "B", "B", "C", "C"])
    assert conf == [False, False, True, False, True]
    assert state.stable_hash == "C" and state.changed_at == t(4)
