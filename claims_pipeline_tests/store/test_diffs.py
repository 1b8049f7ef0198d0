import difflib
import random
from collections import Counter

import pytest

from claims_pipeline.store import diffs
from claims_pipeline.store.diffs import text_diff


def test_diff_shows_removed_and_added_lines_with_context():
    old = "\n".join(f"line {i}" for i in range(20)) + "\nrate 6.32 %\n" + "\n".join(f"tail {i}" for i in range(20))
    new = old.replace("rate 6.32 %", "rate 6.50 %")
    diff = text_diff(old, new, context_lines=2, max_lines=50)
    lines = diff.splitlines()
    assert "-rate 6.32 %" in lines and "+rate 6.50 %" in lines
    assert " line 19" in lines and " tail 1" in lines  # two lines of context each side
    assert " line 17" not in lines and " tail 2" not in lines


def test_diff_is_capped():
    old = "\n".join(f"a{i}" for i in range(500))
    new = "\n".join(f"b{i}" for i in range(500))
    diff = text_diff(old, new, context_lines=2, max_lines=30).splitlines()
    assert len(diff) == 31 and "more diff lines not kept" in diff[-1]


# ---- bounded cost: common ends stripped, difflib metered, a linear approximation past the bounds ----------------
def _unified(old: str, new: str, n: int) -> str:
    """What text_diff returned before the cost bounds: difflib over every line of both texts."""
    return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", n=n, lineterm=""))


def _page(rng: random.Random, n: int) -> list[str]:
    """Lines of an extracted page: distinct sentences, a few headings and figures."""
    return [f"§ {i} heading" if i % 37 == 0 else f"para {i}: rate {rng.randrange(1000) / 100} % per {rng.randrange(10**6)}"
            for i in range(n)]


def _edit(rng: random.Random, lines: list[str], edits: int) -> list[str]:
    out = list(lines)
    for k in range(edits):
        i = rng.randrange(len(out) + 1)
        op = rng.randrange(3)
        if op == 0 or not out:
            out.insert(i, f"inserted {k}")
        elif op == 1:
            del out[min(i, len(out) - 1)]
        else:
            out[min(i, len(out) - 1)] = f"replaced {k}"
    return out


@pytest.mark.parametrize("seed", range(40))
def test_realistic_changes_read_exactly_as_difflib_over_the_whole_texts(seed):
    rng = random.Random(seed)
    a = _page(rng, rng.choice([1, 3, 30, 400, 3000]))
    b = _edit(rng, a, rng.choice([1, 2, 5, 20]))
    n = rng.choice([0, 1, 2, 3])
    old, new = "\n".join(a), "\n".join(b)
    assert diffs.text_diff(old, new, context_lines=n, max_lines=10**6) == _unified(old, new, n)


@pytest.mark.parametrize(("old", "new"), [
    ("", "a\nb"), ("a\nb", ""), ("a\nb\nc", "x\nb\nc"), ("a\nb\nc", "a\nb\nx"), ("a\nb\nc", "b\nc"),
    ("a\nb\nc", "a\nb"), ("a\nb", "a\nb\nc\nd"), ("a", "a"), ("a\nb", "a\nb\n"),
])
def test_edits_at_the_ends_read_exactly_as_difflib(old, new):
    for n in (0, 2, 5):
        assert diffs.text_diff(old, new, context_lines=n, max_lines=100) == _unified(old, new, n)


def test_common_prefix_and_suffix_are_stripped_but_hunks_count_lines_in_the_whole_texts():
    head = [f"intro {i}" for i in range(50_000)]
    tail = [f"annex {i}" for i in range(50_000)]
    old = "\n".join([*head, "VAT 18 %", "reduced 5 %", *tail])
    new = "\n".join([*head, "VAT 20 %", "reduced 5 %", "new line", *tail])
    diff = diffs.text_diff(old, new, context_lines=2, max_lines=200)
    assert diff.splitlines() == [
        "--- before", "+++ after",
        "@@ -49999,6 +49999,7 @@",
        " intro 49998", " intro 49999", "-VAT 18 %", "+VAT 20 %", " reduced 5 %", "+new line", " annex 0", " annex 1",
    ]
    assert diff == _unified(old, new, 2)


def test_a_large_changed_region_of_distinct_lines_still_gets_an_exact_diff():
    rng = random.Random(7)
    a = _page(rng, 8000)
    b = list(a)
    b[0], b[-1] = "changed header", "changed footer"  # the changed region spans the whole text
    for i in range(100, 8000, 80):
        b[i] = f"edited {i}"
    old, new = "\n".join(a), "\n".join(b)
    diff = diffs.text_diff(old, new, context_lines=2, max_lines=10**6)
    assert diffs.APPROXIMATED not in diff and diff == _unified(old, new, 2)


def _adversarial(n: int) -> tuple[list[str], list[str]]:
    """The security probe's page (repro_diff_superlinear.py): lines from 150 values, each under difflib's 1 %
    autojunk threshold, in two different orders. Unmetered difflib: 1.6 s at 8 000 lines, 11 s at 16 000."""
    return [f"l{i % 150}" for i in range(n)], [f"l{(i * 7 + i // 150) % 150}" for i in range(n)]


def _check_approximated(diff: str, old: list[str], new: list[str], max_lines: int) -> list[str]:
    lines = diff.splitlines()
    assert len(lines) <= max_lines
    assert lines[:2] == ["--- before", "+++ after"]
    assert lines[2].startswith("@@ approximated diff of lines ") and "too large or too repetitive for an exact diff" in lines[2]
    body = lines[3:]
    removed = Counter(line[1:] for line in body if line.startswith("-"))
    added = Counter(line[1:] for line in body if line.startswith("+"))
    # honest: a line shown removed is one the old text has more often than the new one, and vice versa
    assert removed <= Counter(old) - Counter(new) and added <= Counter(new) - Counter(old)
    return body


@pytest.mark.parametrize("n", [8_000, 16_000])  # under MAX_EXACT_LINES: the metered difflib gives up; over: never tried
def test_adversarial_change_gets_a_bounded_approximated_diff(n):
    old, new = _adversarial(n)
    assert (n <= diffs.MAX_EXACT_LINES) == (n == 8_000)
    diff = diffs.text_diff("\n".join(old), "\n".join(new), context_lines=2, max_lines=200)
    body = _check_approximated(diff, old, new, 200)
    assert body and all(line[0] in "+-" for line in body[:-1])
    wanted = (Counter(old) - Counter(new)).total() + (Counter(new) - Counter(old)).total()
    shown = sum(1 for line in body if line[0] in "+-")
    if wanted > 200 - 3:
        assert len(diff.splitlines()) == 200 and body[-1].startswith("… (") and body[-1].endswith("lines not kept)")
        assert any(line.startswith("-") for line in body) and any(line.startswith("+") for line in body)
    else:
        assert shown == wanted


def test_adversarial_region_with_a_real_edit_shows_that_edit_and_where_the_region_is():
    old, _ = _adversarial(16_000)
    shuffled = [old[(i * 7919 + 1) % len(old)] for i in range(len(old))]  # same lines, another order
    assert shuffled[0] != old[0] and shuffled[-1] != old[-1]
    head, tail = [f"intro {i}" for i in range(10)], [f"annex {i}" for i in range(5)]
    a = [*head, *old[:8000], "VAT 18 %", *old[8000:], *tail]
    b = [*head, *shuffled[:100], "VAT 20 %", "new note", *shuffled[100:], *tail]
    diff = diffs.text_diff("\n".join(a), "\n".join(b), context_lines=2, max_lines=200)
    body = _check_approximated(diff, a, b, 200)
    assert diff.splitlines()[2].startswith("@@ approximated diff of lines -11,16001 +11,16002:")
    assert body == ["-VAT 18 %", "+VAT 20 %", "+new note"]


def test_approximated_diff_keeps_both_sides_within_the_cap():
    old = [f"l{i % 150}" for i in range(16_000)] + [f"old only {i}" for i in range(500)]
    new = [f"l{(i * 7 + i // 150) % 150}" for i in range(16_000)] + [f"new only {i}" for i in range(500)]
    for max_lines in (200, 10, 4):
        diff = diffs.text_diff("\n".join(old), "\n".join(new), context_lines=2, max_lines=max_lines)
        body = _check_approximated(diff, old, new, max_lines)
        assert len(diff.splitlines()) == max_lines and "not kept" in body[-1]
        if max_lines >= 6:
            assert any(line.startswith("-") for line in body) and any(line.startswith("+") for line in body)
    # no room for more than the header: the header alone, still saying what it is
    [only] = diffs.text_diff("\n".join(old), "\n".join(new), context_lines=2, max_lines=2).splitlines()
    assert only.startswith("@@ approximated diff")


def test_a_reordered_region_says_so():
    old, _ = _adversarial(16_000)
    shuffled = [old[(i * 7919) % len(old)] for i in range(len(old))]
    diff = diffs.text_diff("\n".join(old), "\n".join(shuffled), context_lines=2, max_lines=200)
    assert _check_approximated(diff, old, shuffled, 200) == ["  (the same lines, in another order)"]


def test_long_lines_are_clipped_in_the_approximated_diff_too():
    old, new = _adversarial(16_000)
    new.append("x" * 5000)
    diff = diffs.text_diff("\n".join(old), "\n".join(new), context_lines=2, max_lines=10**6)
    assert "+" + "x" * diffs.MAX_LINE_CHARS + "…" in diff.splitlines()
