"""Config loading: defaults, lookup order, and errors that name the file and the key."""

import re
from pathlib import Path

import pytest

from claims_pipeline.config.settings import (
    DEMO_CONFIG_FILE,
    DEMO_CORPUS_DIR,
    ConfigError,
    CorpusNotSet,
    Settings,
    load_settings,
    settings_from_dict,
)
from claims_pipeline_tests.time_scale import scaled

REPO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "claims_pipeline.example.yaml"


def write(tmp_path: Path, text: str, name: str = "cp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_repo_config_is_valid_and_matches_defaults_where_documented():
    s = load_settings(REPO_CONFIG)
    assert s.extraction.claim_window_chars == 360
    assert s.fetch.per_host_overrides["eur-lex.europa.eu"].interval_ms == 10_000
    assert "eccb-centralbank.org" in s.primary_allowlist() and ".admin.ch" in s.primary_allowlist()
    # no default corpus outside the demo deployment: one line says where to set it
    with pytest.raises(CorpusNotSet) as no_corpus:
        _ = s.corpus_dir
    assert f"set extraction.corpus_dir in {REPO_CONFIG}" in str(no_corpus.value) and "\n" not in str(no_corpus.value)
    assert load_settings(REPO_CONFIG, deployment="demo").corpus_dir == DEMO_CORPUS_DIR


def test_the_deployment_comes_from_its_variable_and_only_the_demo_has_a_corpus_of_its_own(tmp_path, monkeypatch):
    monkeypatch.delenv("CLAIMS_PIPELINE_CONFIG", raising=False)
    monkeypatch.setenv("CLAIMS_PIPELINE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAIMS_PIPELINE_DEPLOYMENT", raising=False)
    assert load_settings().deployment == "local"
    for deployment in ("local", "production"):
        monkeypatch.setenv("CLAIMS_PIPELINE_DEPLOYMENT", deployment)
        with pytest.raises(CorpusNotSet, match=r"^no corpus: set extraction\.corpus_dir in a config file"):
            _ = load_settings().corpus_dir
    monkeypatch.setenv("CLAIMS_PIPELINE_DEPLOYMENT", "staging")
    with pytest.raises(ConfigError, match=r"CLAIMS_PIPELINE_DEPLOYMENT='staging': expected one of demo, local, production"):
        load_settings()
    # the demo without a config file: the bundled demo.yaml, its outputs under <home>/demo ...
    monkeypatch.setenv("CLAIMS_PIPELINE_DEPLOYMENT", "demo")
    demo = load_settings()
    assert (demo.source_file, demo.corpus_dir, demo.home_dir) == (DEMO_CONFIG_FILE, DEMO_CORPUS_DIR, tmp_path / "home" / "demo")
    # ... or the copy the last `claims-pipeline demo` wrote there, whose runs and instance the UI then shows
    (tmp_path / "home" / "demo").mkdir(parents=True)
    copy = write(tmp_path / "home" / "demo", "extraction:\n  corpus_dir: /srv/kb\n", "demo.yaml")
    assert (load_settings().source_file, load_settings().corpus_dir) == (copy, Path("/srv/kb"))


def test_unknown_key_names_file_and_dotted_key(tmp_path):
    p = write(tmp_path, "fetch:\n  concurency: 4\n")
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert str(e.value) == f"{p}: fetch.concurency: unknown key, did you mean concurrency?"


def test_a_misspelt_key_gets_the_closest_keys_of_its_own_section(tmp_path):
    p = write(tmp_path, "extraction:\n  scope_dept: 2\n  scope_rules:\n    - {glob: 'a/**', scope: '{1}', scop: x}\n"
              "fetch:\n  per_host_overrides:\n    x.org: {concurrency: 1, interval_ms: 3, intervl_ms: 3}\n"
              "zzzz: 1\n")
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert str(e.value).splitlines() == [
        f"{p}: extraction.scope_rules.0.scop: unknown key, did you mean scope?",
        f"{p}: extraction.scope_dept: unknown key, did you mean scope_depth or scope_dirs?",
        f"{p}: fetch.per_host_overrides.x.org.intervl_ms: unknown key, did you mean interval_ms?",
        f"{p}: zzzz: unknown key",  # nothing close: no guess
    ]


def test_wrong_type_names_key(tmp_path):
    p = write(tmp_path, "extraction:\n  claim_window_chars: wide\n")
    with pytest.raises(ConfigError, match=r"extraction\.claim_window_chars"):
        load_settings(p)


def test_out_of_range_value_names_key(tmp_path):
    p = write(tmp_path, "fetch:\n  default_host: {concurrency: 0, interval_ms: 10}\n")
    with pytest.raises(ConfigError, match=r"fetch\.default_host\.concurrency"):
        load_settings(p)


def test_bad_yaml_names_file_line_and_column(tmp_path):
    p = write(tmp_path, "fetch:\n  concurrency: [1,\n")
    with pytest.raises(ConfigError, match=rf"{p.name}:\d+:\d+: not valid YAML"):
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


# ---- values that only a later step would reject fail at load time, naming the file and the key ------------------
# Each file is loaded as the CLI loads it (load_settings(path), which `fetch`, `extract`, `lint` call directly and
# `audit`/`worklist` through ClaimsConfig.load); the error must read "<file>: <dotted.key>: <reason>".

LATE_FAILURES = [
    # (yaml, dotted key, words the reason must hold)
    ("fetch:\n  allow_networks: [not-a-net]\n", "fetch.allow_networks", "not-a-net"),
    ('fetch:\n  address_map: {a.example: "localhost:80"}\n', "fetch.address_map", "localhost:80"),
    ('fetch:\n  address_map: {a.example: "10.0.0.1:http"}\n', "fetch.address_map", "10.0.0.1:http"),
    ('fetch:\n  address_map: {a.example: "10.0.0.1:70000"}\n', "fetch.address_map", "1-65535"),
    ('fetch:\n  address_map: {"https://a.example/": "10.0.0.1:80"}\n', "fetch.address_map", "not a URL"),
    ('cache:\n  db_url: "not a url"\n', "cache.db_url", "not a database URL"),
    ('cache:\n  db_url: "nosuchdb://h/x"\n', "cache.db_url", "unknown database"),
    ('cache:\n  db_url: "postgresql+asyncpg://u@h/db"\n', "cache.db_url", "synchronous"),
    ("source_file: /x\n", "source_file", "unknown key"),
    ("fetch:\n  user_agent: \"bot\\u00e9/1\"\n", "fetch.user_agent", "ASCII"),
    ("fetch:\n  user_agent: \" bot/1\"\n", "fetch.user_agent", "spaces"),
    ("fetch:\n  excluded_hosts: [\"https://linkedin.com/\"]\n", "fetch.excluded_hosts", "not a URL"),
    ("fetch:\n  js_spa_hosts: [\"spa.example:443\"]\n", "fetch.js_spa_hosts", "port"),
    ("fetch:\n  per_host_overrides: {\"a b.example\": {concurrency: 1, interval_ms: 1}}\n",
     "fetch.per_host_overrides", "spaces"),
    ("fetch:\n  allow_hosts: [\"*.example\"]\n", "fetch.allow_hosts", "wildcard"),
    ("fetch:\n  challenge_titles: [\"\"]\n", "fetch.challenge_titles", "empty entry"),
    ("fetch:\n  binary_content_prefixes: [\"\"]\n", "fetch.binary_content_prefixes", "empty entry"),
    ("fetch:\n  blocked_status_codes: [4030]\n", "fetch.blocked_status_codes.0", "999"),
    ("fetch:\n  retry_backoff_s: [1, .nan]\n", "fetch.retry_backoff_s.1", "finite"),
    ("fetch:\n  retry_backoff_s: [.inf]\n", "fetch.retry_backoff_s.0", "finite"),
    ("fetch:\n  robots_cache_hours: .inf\n", "fetch.robots_cache_hours", "finite"),
    ("cache:\n  ttl_days: 1.0e+9\n", "cache.ttl_days", "less than or equal to 36500"),
    ("pdf:\n  timeout_s: .inf\n", "pdf.timeout_s", "finite"),
    ("sampling:\n  priority_weights: {stamp_age_per_30d: .inf}\n", "sampling.priority_weights.stamp_age_per_30d",
     "finite"),
    ("extraction:\n  scope_dirs: [countries, ../elsewhere]\n", "extraction.scope_dirs", "inside corpus_dir"),
    ("extraction:\n  scope_dirs: [/etc]\n", "extraction.scope_dirs", "inside corpus_dir"),
    ("extraction:\n  primary_allowlist: [\"*.go.jp\"]\n", "extraction.primary_allowlist", "wildcard"),
    ("extraction:\n  primary_allowlist_file: nope.txt\n", "extraction.primary_allowlist_file", "no such file"),
    ("extraction:\n  primary_allowlist_file: .\n", "extraction.primary_allowlist_file", "not a file"),
    ("linter:\n  root_url_allowlist: [\"https://www.gov.example/tax\"]\n", "linter.root_url_allowlist", "root URL"),
    ("home: cp.yaml\n", "home", "not a folder"),
    ("cache:\n  blob_dir: cp.yaml\n", "cache.blob_dir", "not a folder"),
]


@pytest.mark.parametrize(("text", "key", "reason"), LATE_FAILURES, ids=[f"{k}:{r}" for _, k, r in LATE_FAILURES])
def test_values_rejected_later_fail_at_load_naming_file_and_key(tmp_path, text, key, reason):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    message = str(e.value)
    assert message.startswith(f"{p}: {key}: "), message
    assert reason in message and "Value error" not in message


def test_uvloop_chosen_but_missing_fails_at_load(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    p = write(tmp_path, "fetch:\n  event_loop: uvloop\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(p))}: fetch\.event_loop: .*not installed"):
        load_settings(p)


def test_source_file_is_not_a_config_key_but_is_still_recorded(tmp_path):
    p = write(tmp_path, "source_file: /x\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(p))}: source_file: unknown key$"):
        load_settings(p)
    good = write(tmp_path, "sampling:\n  seed: 3\n", name="good.yaml")
    s = load_settings(good)
    assert s.source_file == good and "source_file" not in s.model_dump()
    # kept through the copies the pipeline makes (the fixture routes, --corpus)
    assert s.model_copy(update={"fetch": s.fetch}).source_file == good
    assert Settings().source_file is None and settings_from_dict({}).source_file is None


def test_every_accepted_form_still_loads_and_parses_where_it_is_used(tmp_path):
    """The valid forms of the checked keys keep loading, and what loads is accepted by the code that uses it."""
    from claims_pipeline.store.engine import make_engine
    from claims_pipeline.web.ssrf import AddressGuard
    from claims_pipeline.web.transport import parse_address_map

    (tmp_path / "allow.txt").write_text("example.org\n", encoding="utf-8")
    (tmp_path / "home").mkdir()
    p = write(tmp_path, f"""
home: home
extraction:
  scope_dirs: [countries, shared, "a/../b"]
  primary_allowlist_file: allow.txt
  primary_allowlist: [Example.org, .go.jp, " spaced.example "]
fetch:
  user_agent: "my-bot/{{version}} (+mailto:ops@example.org)"
  event_loop: asyncio
  excluded_hosts: [linkedin.com, "*.tracker.example", .ads.example, "fqdn.example."]
  js_spa_hosts: [spa.example]
  per_host_overrides: {{"*.europa.eu": {{concurrency: 1, interval_ms: 9000}}}}
  allow_hosts: [named.example, "127.0.0.1", "[::1]"]
  allow_networks: ["127.0.0.1/32", " 10.0.0.0/8", "::1", "192.168.1.7/24"]
  address_map: {{tax.gov.xa: "127.0.0.1:8765", "*.fixture": "[::1]:9", plain: "10.0.0.1", v6: "::1", b6: "[::1]"}}
  blocked_status_codes: [403, 429, 503, 999]
  retry_backoff_s: [0, 0.05]
  robots_cache_hours: 0
  connect_timeout_s: 600
linter:
  root_url_allowlist: [gov.example, "https://www.gov.example/", "http://tax.example"]
cache:
  db_url: "sqlite:///{tmp_path / 'idx.sqlite'}"
  ttl_days: 36500
""")
    s = load_settings(p)
    assert parse_address_map(s.fetch.address_map)["*.fixture"] == ("::1", 9)
    AddressGuard.from_lists(s.fetch.allow_hosts, s.fetch.allow_networks)
    make_engine(s.cache_db_url).dispose()
    assert s.primary_allowlist() == frozenset({"example.org", ".go.jp", "spaced.example"})
    for url in ("sqlite://", "sqlite:///:memory:", "postgresql+psycopg://postgres@127.0.0.1:5432/claims",
                "postgresql://user@db.example/claims", ""):
        assert settings_from_dict({"cache": {"db_url": url}}).cache.db_url == url
    assert load_settings(REPO_CONFIG) == load_settings(REPO_CONFIG)  # the shipped files stay valid
    load_settings(DEMO_CONFIG_FILE)


@pytest.mark.parametrize(("text", "key"), [
    ("fetch:\n  allow_networks: [not-a-net]\n", "fetch.allow_networks"),
    ('fetch:\n  address_map: {a.example: "localhost:80"}\n', "fetch.address_map"),
    ('cache:\n  db_url: "not a url"\n', "cache.db_url"),
    ("source_file: /x\n", "source_file"),
], ids=["allow_networks", "address_map", "db_url", "source_file"])
def test_cli_fails_on_the_config_with_exit_2_before_any_network_use(tmp_path, capsys, monkeypatch, text, key):
    from claims_pipeline.cli import main
    from claims_pipeline.steps.pages import refresh as pages

    def no_fetch(*args, **kwargs):
        raise AssertionError("the fetch ran with a bad config")

    monkeypatch.setattr(pages, "refresh_pages", no_fetch)
    cfg = write(tmp_path, f"home: {tmp_path / 'home'}\n{text}", name="bad.yaml")
    assert main(["fetch", "--config", str(cfg), "http://127.0.0.1:1/"]) == 2
    err = capsys.readouterr().err
    assert "claims-pipeline: config error:" in err and f"{cfg}: {key}: " in err
    assert not (tmp_path / "home").exists()  # no cache was opened


def test_the_command_exits_2_with_the_message_on_stderr(tmp_path):
    """As a user runs it: `claims-pipeline fetch --config bad.yaml http://127.0.0.1:1/` (a real process)."""
    import subprocess
    import sys

    cfg = write(tmp_path, f"home: {tmp_path / 'home'}\nfetch:\n  allow_networks: [not-a-net]\n", name="bad.yaml")
    p = subprocess.run([sys.executable, "-m", "claims_pipeline.cli", "fetch", "--config", str(cfg), "http://127.0.0.1:1/"],
                       capture_output=True, text=True, timeout=scaled(60))
    assert p.returncode == 2, p.stderr
    assert f"{cfg}: fetch.allow_networks: 'not-a-net' is not an IP address or CIDR range" in p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("entry, reason", [("*.go.kr", "wildcard"), ("https://www.snb.ch/", "not a URL"),
                                           ("snb.ch:443", "without a port")])
def test_allowlist_file_entries_are_checked_at_load_naming_file_and_line(tmp_path, entry, reason):
    (tmp_path / "allow.txt").write_text(f"# issuers\nboj.or.jp\n{entry}  # bad\n")
    p = write(tmp_path, "extraction:\n  primary_allowlist_file: allow.txt\n")
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert "extraction.primary_allowlist_file" in str(e.value) and "allow.txt:3" in str(e.value)
    assert reason in str(e.value)


def test_allowlist_entries_with_www_or_a_final_dot_match_the_site():
    from claims_pipeline.corpus.tiers import PrimaryHosts

    hosts = PrimaryHosts(["www.boj.or.jp", "snb.ch.", ".go.jp"])
    assert all(h in hosts for h in ("boj.or.jp", "www.boj.or.jp", "snb.ch", "www.snb.ch", "nta.go.jp", "snb.ch."))
    assert "evil-boj.or.jp" not in hosts and "boj.or.jp.evil.com" not in hosts
