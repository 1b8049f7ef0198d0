"""The corpus walk survives any tree (issue 35): a folder nested 1,000 levels deep, a node_modules/ of any size, a
scope rule of many '**' on a deep path, links and hard links to other corpus files, folder names that clean to
one scope. Real folders, links and files on disk."""

from __future__ import annotations

import os
import random
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from claims_pipeline.config.settings import LinterSettings
from claims_pipeline.corpus.extract import extract_corpus
from claims_pipeline.corpus.linter import lint_corpus
from claims_pipeline.corpus.scopes import GlobRule, _dp_match, _glob_tokens, glob_regex, walk_corpus
from claims_pipeline_tests.corpus.test_layouts import LINE, corpus_of, tree
from claims_pipeline_tests.support.hostile import cli_env, run_cli

_NESTED: list[Path] = []


@pytest.fixture(autouse=True)
def _remove_nested_trees() -> Iterator[None]:
    """pytest's own clean-up of old temporary folders (shutil.rmtree) recurses once per level: a tree of 1,000 levels
    left behind would crash a later session's start. Each test removes the trees it nested."""
    yield
    while _NESTED:
        remove_tree(_NESTED.pop())


def remove_tree(top: Path) -> None:
    """Remove a tree of any depth without recursion: each sub-folder is first moved up beside `top`, so every path
    used stays short."""
    pending, lifted = [top], 0
    while pending:
        folder = pending.pop()
        for entry in list(os.scandir(folder)):
            if entry.is_dir(follow_symlinks=False):
                lifted += 1
                moved = top.parent / f"{top.name}.lifted-{lifted}"
                os.rename(entry.path, moved)
                pending.append(moved)
            else:
                os.unlink(entry.path)
        os.rmdir(folder)


def nest(top: Path, levels: int, name: str = "d") -> Path:
    """top/d/d/…/d (levels folders), made one level at a time from inside (a path of 1,000 parts is no argument
    for mkdir -p on every system). Returns the deepest folder."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w", encoding="utf-8") as fh:
            fh.write(LINE)
    finally:
        os.close(fd)
    _NESTED.append(top)
    return top


def test_a_folder_nested_1000_levels_deep_is_walked_to_the_bound_and_named(tmp_path):
    root = tree(tmp_path / "kb", {"guides/a.md": LINE})
    nest(root / "deep", 1000)
    walk = walk_corpus(corpus_of(root))  # os.walk: RecursionError
    assert [f.rel for f in walk.files] == ["guides/a.md"]
    [(scope, warning)] = walk.skipped
    assert scope is None and warning.file == "deep/" + "/".join(["d"] * 64)
    assert warning.message == "folder more than extraction.max_depth (64) levels deep; not entered"
    # the bound is a setting: deep enough, the deepest file is read
    shallow = tree(tmp_path / "kb2", {"a.md": LINE})
    nest(shallow / "deep", 30)
    assert len(walk_corpus(corpus_of(shallow, max_depth=40)).files) == 2
    assert len(walk_corpus(corpus_of(shallow, max_depth=20)).files) == 1


def test_init_extract_and_audit_survive_a_folder_nested_1000_levels_deep(tmp_path):
    root = tree(tmp_path / "kb", {"guides/a.md": LINE})
    nest(root / "deep", 1000)
    env = cli_env(tmp_path)
    init = run_cli("init", str(root), cwd=tmp_path, env=env, timeout=120)
    assert init.returncode == 0, init.stderr[-2000:]
    assert "folder more than extraction.max_depth (64) levels deep; not entered" in init.stdout
    extract = run_cli("extract", "--json", cwd=tmp_path, env=env, timeout=120)
    assert extract.returncode == 0, extract.stderr[-2000:]
    assert "RecursionError" not in extract.stderr
    assert any(line.endswith("/d: folder more than extraction.max_depth (64) levels deep; not entered")
               for line in extract.err_lines)
    cfg = tmp_path / "config" / "claims_pipeline.yaml"  # the cited host excluded: the audit fetches nothing
    cfg.write_text(cfg.read_text(encoding="utf-8") + "fetch: {excluded_hosts: [www.tax.gov.xa]}\n", encoding="utf-8")
    audit = run_cli("audit", cwd=tmp_path, env=env, timeout=300)
    assert "RecursionError" not in audit.stderr and "audit done → " in audit.stderr, audit.stderr[-2000:]


def test_exclude_dirs_are_never_entered(tmp_path):
    """A node_modules/ is pruned before it is listed: one 1,000 levels deep (os.walk's RecursionError when it
    was walked and its files dropped afterwards) costs nothing and warns of nothing."""
    root = tree(tmp_path, {"guides/a.md": LINE, "guides/node_modules/pkg/README.md": LINE})
    nest(root / "guides/node_modules/deep", 1000)
    corpus = corpus_of(root)
    walk = walk_corpus(corpus)
    assert [f.rel for f in walk.files] == ["guides/a.md"] and walk.skipped == []
    assert walk.excluded_dirs == ["guides/node_modules"]
    assert [c.file for c in extract_corpus(corpus).claims] == ["guides/a.md"]


def test_a_rule_of_many_double_stars_costs_linear_time_on_a_deep_path(tmp_path):
    glob = "**a**a**a**a**a**a**a**a**b"
    path = "/".join(["a" * 20] * 60) + ".md"  # no 'b': the regex backtracks through every split of the path
    rule = GlobRule(glob)
    start = time.monotonic()
    assert rule.match(path) is None
    assert time.monotonic() - start < 2.0
    root = tree(tmp_path, {"/".join(["aaaa"] * 30) + "/x.md": LINE})
    start = time.monotonic()
    walk = walk_corpus(corpus_of(root, scope_rules=[{"glob": glob, "scope": "x"}, {"glob": "**", "scope": "{top}"}]))
    assert time.monotonic() - start < 5.0 and [f.scope for f in walk.files] == ["aaaa"]


def test_the_linear_matcher_gives_the_regexs_groups():
    """The same match, and the same groups (greedy, leftmost), as the regex, on random globs and paths."""
    rng = random.Random(35)
    alphabet = ["a", "b", "/", "*", "**", "**/", "?"]
    for _ in range(3000):
        glob = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))).lstrip("/")
        path = "/".join("".join(rng.choice("ab") for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 4)))
        m = glob_regex(glob).fullmatch(path)
        assert _dp_match(_glob_tokens(glob), path) == (None if m is None else m.groups()), (glob, path)


def test_a_link_or_a_hard_link_to_another_corpus_file_is_read_once(tmp_path):
    root = tree(tmp_path, {"guides/a.md": LINE, "other/b.md": LINE})
    (root / "guides/0-link.md").symlink_to(root / "guides/a.md")  # sorts before its target
    os.link(root / "other/b.md", root / "other/hard.md")
    corpus = corpus_of(root)
    walk = walk_corpus(corpus)
    assert sorted(f.rel for f in walk.files) == ["guides/a.md", "other/b.md"]
    assert sorted((w.file, w.message.split(";")[0]) for _, w in walk.skipped) == [
        ("guides/0-link.md", "the same file as guides/a.md (a link to it, or a hard link)"),
        ("other/hard.md", "the same file as other/b.md (a link to it, or a hard link)")]
    assert len(extract_corpus(corpus).claims) == 2


def test_folder_names_that_clean_to_one_scope_are_named(tmp_path):
    root = tree(tmp_path, {"a,b/x.md": LINE, "a|b/y.md": LINE, "a\u200bb/z.md": LINE, "plain/p.md": LINE})
    corpus = corpus_of(root)
    walk = walk_corpus(corpus)
    assert {f.scope for f in walk.files} == {"a-b", "plain"}
    [(scope, note)] = walk.notes
    assert scope == "a-b" and "'a,b' (a,b/x.md) and 'a|b' and 1 more are one scope, 'a-b'" in note.message
    assert "rename a folder" in note.message
    assert str(note) in {str(w) for w in extract_corpus(corpus).warnings}
    said: list = []
    lint_corpus(corpus, LinterSettings(), skipped=said)
    assert str(note) in {str(w) for w in said}


def test_a_folder_name_in_nfc_and_nfd_is_one_scope_and_said(tmp_path):
    nfc, nfd = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
    root = tree(tmp_path, {f"{nfc}/x.md": LINE, f"{nfd}/y.md": LINE})
    walk = walk_corpus(corpus_of(root))
    assert {f.scope for f in walk.files} == {nfc}
    [(scope, note)] = walk.notes
    assert scope == nfc and "are one scope" in note.message
