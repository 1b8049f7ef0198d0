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
