"""Config loading: defaults, lookup order, and errors that name the file and the key."""

from pathlib import Path

import pytest

from claims_pipeline.settings import (
    DEMO_CORPUS_DIR,
    ConfigError,
    Settings,
    load_settings,
)

REPO_CONFIG = Path(__file__).resolve().parents[1] / "config" / "claims_pipeline.yaml"


def write(tmp_path: Path, text: str, name: str = "cp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_repo_config_is_valid_and_matches_defaults_where_documented():
    s = load_settings(REPO_CONFIG)
    assert s.extraction.claim_window_chars == 360
    assert s.fetch.per_host_overrides["eur-lex.europa.eu"].interval_ms == 10_000
    assert "eccb-centralbank.org" in s.primary_allowlist() and ".admin.ch" in s.primary_allowlist()
    # unset corpus_dir means the bundled demo corpus
    assert s.corpus_dir == DEMO_CORPUS_DIR


def test_unknown_key_names_file_and_dotted_key(tmp_path):
    p = write(tmp_path, "fetch:\n  concurency: 4\n")
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert str(p) in str(e.value) and "fetch.concurency" in str(e.value) and "unknown key" in str(e.value)


def test_wrong_type_names_key(tmp_path):
    p = write(tmp_path, "extraction:\n  claim_window_chars: wide\n")
    with pytest.raises(ConfigError, match=r"extraction\.claim_window_chars"):
        load_settings(p)


def test_out_of_range_value_names_key(tmp_path):
    p = write(tmp_path, "fetch:\n  default_host: {concurrency: 0, interval_ms: 10}\n")
    with pytest.raises(ConfigError, match=r"fetch\.default_host\.concurrency"):
        load_settings(p)


def test_bad_yaml_names_file_and_line(tmp_path):
    p = write(tmp_path, "fetch:\n  concurrency: [1,\n")
    with pytest.raises(ConfigError, match=rf"{p.name}:\d+: not valid YAML"):
        load_settings(p)


def test_relative_paths_resolve_against_config_folder(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "allow.txt").write_text("# comment\nExample.org  # trailing\n\n", encoding="utf-8")
    p = write(tmp_path, "home: out\nextraction:\n  corpus_dir: corpus\n  primary_allowlist_file: allow.txt\n")
    s = load_settings(p)
    assert s.corpus_dir == (tmp_path / "corpus").resolve()
    assert s.home_dir == (tmp_path / "out").resolve()
    assert s.primary_allowlist() == frozenset({"example.org"})


def test_missing_allowlist_file_is_a_config_error(tmp_path):
    p = write(tmp_path, "extraction:\n  primary_allowlist_file: nope.txt\n")
    with pytest.raises(ConfigError, match="primary_allowlist_file"):
        load_settings(p).primary_allowlist()


def test_env_var_lookup(tmp_path, monkeypatch):
    p = write(tmp_path, "sampling:\n  seed: 7\n")
    monkeypatch.setenv("CLAIMS_PIPELINE_CONFIG", str(p))
    assert load_settings().sampling.seed == 7


def test_no_file_gives_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert load_settings() == Settings()


def test_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings(tmp_path / "absent.yaml")
