"""Any folder of markdown files is a corpus: scopes from the folder tree, from rules, from a file's front matter;
and a run that reads nothing, or finds no claim, says why in one line. Corpora written per test, in many layouts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from claims_pipeline.config.corpus_source import CorpusSource, corpus_source
from claims_pipeline.config.settings import ConfigError, settings_from_dict
from claims_pipeline.corpus.extract import extract_corpus, list_scopes
from claims_pipeline.corpus.scopes import clean_scope, front_matter_scope, glob_regex, nothing_read_message, walk_corpus
from claims_pipeline_tests.time_scale import scaled

LINE = "The levy is **0.8 %** of the value ([levy](https://www.tax.gov.xa/levy.html)).\n"


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def corpus_of(root: Path, **extraction) -> CorpusSource:
    return corpus_source(settings_from_dict({"extraction": {"corpus_dir": str(root), **extraction}}))


def scopes_of(root: Path, **extraction) -> dict[str, list[str]]:
    return {s: [p.relative_to(root).as_posix() for p in ps] for s, ps in list_scopes(corpus_of(root, **extraction)).items()}


def test_a_flat_folder_is_one_root_scope(tmp_path):
    root = tree(tmp_path, {"a.md": LINE, "b.md": LINE, "notes.txt": LINE})
    assert scopes_of(root) == {"root": ["a.md", "b.md"]}
    ex = extract_corpus(corpus_of(root))
    assert [(c.file, c.scope) for c in ex.claims] == [("a.md", "root"), ("b.md", "root")]
    assert len({c.id for c in ex.claims}) == 2  # two files of one scope: ids name the file


def test_nested_guides_one_scope_per_top_level_folder_root_files_apart(tmp_path):
    root = tree(tmp_path, {"README.md": LINE, "guides/tax/levy.md": LINE, "guides/intro.md": LINE,
                           "policies/2026/x.md": LINE})
    assert scopes_of(root) == {"root": ["README.md"], "guides": ["guides/intro.md", "guides/tax/levy.md"],
                               "policies": ["policies/2026/x.md"]}
    assert scopes_of(root, scope_depth=2) == {"root": ["README.md"], "guides": ["guides/intro.md"],
                                              "guides/tax": ["guides/tax/levy.md"], "policies/2026": ["policies/2026/x.md"]}
    assert scopes_of(root, scope_depth=0, root_scope="kb") == {
        "kb": ["README.md", "guides/intro.md", "guides/tax/levy.md", "policies/2026/x.md"]}


def test_the_whole_folder_as_scope_dir_gives_no_leading_slash(tmp_path):
    """scope_dirs ["."] named scopes '/guides/…' (not a usable partition key nor a relative file name)."""
    root = tree(tmp_path, {"guides/a.md": LINE, "b.md": LINE})
    scopes = scopes_of(root, scope_dirs=["."])
    assert scopes == {"guides": ["guides/a.md"], "root": ["b.md"]}
    assert not any(s.startswith("/") for s in scopes)


def test_front_matter_names_a_files_scope_over_rules_and_tree(tmp_path):
    root = tree(tmp_path, {
        "guides/a.md": "---\ntitle: A guide\nscope: 'Tax guide'  # the team's name\n---\n\n" + LINE,
        "guides/b.md": "---\ntitle: no scope key\n---\n" + LINE,
        "guides/c.md": "---\nscope: never closed\n" + LINE,  # no closing '---': not front matter
        "guides/d.md": "Text\n---\nscope: not at the top\n---\n" + LINE,
        "other/e.md": "---\r\nscope: guides/../../etc\r\n---\r\n" + LINE,  # no way out of the tree's names
        "other/f.md": "\ufeff---\nscope: with a BOM\n---\n" + LINE,
    })
    assert front_matter_scope(root / "guides/a.md") == "Tax guide"
    scopes = scopes_of(root, scope_rules=[{"glob": "guides/**", "scope": "handbook"}])
    assert scopes == {"Tax guide": ["guides/a.md"], "handbook": ["guides/b.md", "guides/c.md", "guides/d.md"],
                      "guides/etc": ["other/e.md"], "with a BOM": ["other/f.md"]}
    claims = extract_corpus(corpus_of(root)).claims
    assert {c.scope for c in claims} == {"Tax guide", "guides", "guides/etc", "with a BOM"}


def test_glob_rules_name_scopes_first_match_wins(tmp_path):
    root = tree(tmp_path, {"countries/fr/playbook.md": LINE, "countries/fr/tax/levy.md": LINE,
                           "shared/exit/nordics.md": LINE, "blog/2026-01-05-rates.md": LINE, "top.md": LINE})
    rules = [{"glob": "countries/*/**", "scope": "{1}"}, {"glob": "blog/*-*-*-*.md", "scope": "blog/{1}"},
             {"glob": "shared/", "scope": "{path}"}, {"glob": "**/*.md", "scope": "misc/{stem}"}]
    assert scopes_of(root, scope_rules=rules) == {
        "blog/2026": ["blog/2026-01-05-rates.md"], "fr": ["countries/fr/playbook.md", "countries/fr/tax/levy.md"],
        "shared/exit/nordics": ["shared/exit/nordics.md"], "misc/top": ["top.md"]}
    # a file no rule matches falls back to the tree
    assert scopes_of(root, scope_rules=[{"glob": "countries/*/**", "scope": "{1}"}])["shared"] == ["shared/exit/nordics.md"]
    assert glob_regex("**/x.md").fullmatch("x.md") and glob_regex("**/x.md").fullmatch("a/b/x.md")
    assert not glob_regex("guides/*.md").fullmatch("guides/sub/a.md")


def test_the_countries_preset_is_the_demos_layout(tmp_path):
    root = tree(tmp_path, {"countries/xa/playbook.md": LINE, "countries/xa/more/x.md": LINE,
                           "shared/exit/regional.md": LINE, "elsewhere/a.md": LINE})
    preset = {"scope_dirs": ["countries", "shared"],
              "scope_rules": [{"glob": "countries/*/**", "scope": "{1}"}, {"glob": "**", "scope": "{path}"}]}
    assert scopes_of(root, **preset) == {"xa": ["countries/xa/more/x.md", "countries/xa/playbook.md"],
                                         "shared/exit/regional": ["shared/exit/regional.md"]}
    # the bundled demo corpus, in the demo deployment with no configuration at all, keeps its scopes
    assert list(list_scopes(corpus_source(settings_from_dict({}, deployment="demo")))) == ["xa", "xb", "xc", "shared/exit/regional"]


@pytest.mark.parametrize(("name", "clean"), [
    ("/guides/a", "guides/a"), ("a//b/", "a/b"), ("../../etc", "etc"), ("a/./b", "a/b"), ("x...y", "x.y"),
    ("a,b|c[d]", "a-b-c-d-"), ("fr:tax", "fr-tax"), ("evil\x1b[2J\u202e", "evil-2J-"), ("", "root"), ("/", "root"),
])
def test_scope_names_stay_valid_partition_keys(name, clean):
    import dagster as dg

    assert clean_scope(name) == clean
    dg.StaticPartitionsDefinition([clean_scope(name)])  # Dagster's own check of a partition key


@pytest.mark.parametrize(("data", "key"), [
    ({"scope_rules": [{"glob": "/abs/**", "scope": "x"}]}, "extraction.scope_rules.0.glob"),
    ({"scope_rules": [{"glob": "a/**", "scope": "{nope}"}]}, "extraction.scope_rules.0.scope"),
    ({"scope_rules": [{"glob": "a/**"}]}, "extraction.scope_rules.0.scope"),
    ({"root_scope": "/x"}, "extraction.root_scope"),
])
def test_bad_scope_settings_are_refused_at_load_naming_the_key(data, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        settings_from_dict({"extraction": data})


# ---- a run that reads nothing, or finds nothing, says why --------------------------------------------------------

def test_why_nothing_was_read(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    s = corpus_of(empty)
    assert nothing_read_message(s, walk_corpus(s)).startswith(f"no markdown files (*.md) under {empty}: nothing to read")
    flat = tree(tmp_path / "flat", {"a.md": LINE, "b.md": LINE, "drafts/c.md": LINE})
    s = corpus_of(flat, scope_dirs=["countries", "shared"])
    msg = nothing_read_message(s, walk_corpus(s))
    assert msg.startswith(f"3 markdown files under {flat}, none read: 3 outside the folders read "
                          "(extraction.scope_dirs: countries, shared; countries, shared not found); hint: ")
    assert "[" not in msg and "\n" not in msg  # no Python list, one line
    s = corpus_of(flat, exclude_dirs=["drafts"], skip_files=["a.md", "b.md"])
    # an excluded folder is never entered, so its files are not counted: the folder is named instead
    assert ("2 markdown files under" in (msg := nothing_read_message(s, walk_corpus(s)))
            and "none read: 1 folder not entered (extraction.exclude_dirs: drafts); 2 left out by extraction.skip_files"
            in msg)


def cli(tmp_path: Path, *args: str, config: dict | None = None) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), **(config or {})}), encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "CLAIMS_PIPELINE_HOME": str(tmp_path / "home")}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "claims_pipeline.cli", *args, "--config", str(cfg)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=scaled(120), env=env)


@pytest.mark.parametrize("command", ["extract", "lint", "audit", "worklist"])
def test_a_run_that_reads_nothing_says_why_in_one_line_and_fails(command, tmp_path):
    flat = tree(tmp_path / "kb", {"a.md": LINE})
    r = cli(tmp_path, command, config={"extraction": {"corpus_dir": str(flat), "scope_dirs": ["countries", "shared"]}})
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 2, r.stderr
    assert lines[1].startswith(f"claims-pipeline: 1 markdown file under {flat}, none read: 1 outside the folders read")
    assert "hint: leave extraction.scope_dirs out" in lines[1] and "['" not in lines[1]
    assert r.stdout == ""


def test_files_read_without_a_claim_are_named_with_what_a_claim_needs(tmp_path):
    kb = tree(tmp_path / "kb", {"a.md": "A figure without a source: 12 %.\n[a link without a figure](https://x.gov.xa/)\n"})
    r = cli(tmp_path, "extract", config={"extraction": {"corpus_dir": str(kb)}})
    assert r.returncode == 0
    assert r.stderr.splitlines()[-1].startswith("1 file read, no claim found: a claim is a line that states a figure")
    lint = cli(tmp_path, "lint", config={"extraction": {"corpus_dir": str(kb)}})
    assert lint.returncode == 0 and lint.stdout.startswith("1 file read, no claim found") and "✓" not in lint.stdout
    # restricted to official sources, the figures it left out are counted
    tree(kb, {"b.md": "Rent rose **4 %** ([blog](https://blog.example.com/rents)).\n"})
    r = cli(tmp_path, "extract", config={"extraction": {"corpus_dir": str(kb), "primary_only": True}})
    assert "2 files read, no claim found: 1 figure cites sources that are not official, left out by " \
           "extraction.primary_only: true" in r.stderr


def test_any_layout_scopes_are_the_sensors_partitions(tmp_path):
    """The corpus sensor makes one dynamic partition per scope, whatever the layout."""
    import dagster as dg

    from claims_pipeline.defs.automation import corpus_sensor
    from claims_pipeline.defs.resources import ClaimsConfig

    kb = tree(tmp_path / "kb", {"README.md": LINE, "guides/tax/a.md": LINE, "guides/b.md": LINE,
                                "teams/x.md": "---\nscope: Team X, Berlin\n---\n" + LINE})
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "extraction": {"corpus_dir": str(kb)}}), encoding="utf-8")
    with dg.instance_for_test() as instance:
        ctx = dg.build_sensor_context(instance=instance, cursor=None,
                                      resources={"claims_config": ClaimsConfig(config_path=str(cfg))})
        result = corpus_sensor(ctx)
        keys = sorted(result.dynamic_partitions_requests[0].partition_keys)
        assert keys == ["Team X- Berlin", "guides", "root"]
        assert {r.partition_key for r in result.run_requests} == set(keys)
        instance.add_dynamic_partitions("scope", keys)  # Dagster accepts every key
        assert sorted(instance.get_dynamic_partitions("scope")) == keys


def test_an_audit_that_finds_no_claim_runs_and_says_why(tmp_path):
    kb = tree(tmp_path / "kb", {"a.md": "No figure here, [a link](https://x.gov.xa/).\n"})
    r = cli(tmp_path, "audit", config={"extraction": {"corpus_dir": str(kb)}})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stderr.splitlines()[-1].startswith("claims-pipeline: 1 file read, no claim found: a claim is a line")
