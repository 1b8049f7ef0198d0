"""The configuration as hostile input (issue 17): infinite and huge numbers, a file that is not text, a device or
a huge file given as --config, a key given twice. Each is refused at load with `<file>: <key>: <reason>` and exit
2, in bounded time and memory, before anything is read or fetched."""

from __future__ import annotations

import os
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from claims_pipeline.config.settings import MAX_CONFIG_BYTES, ConfigError, Settings, load_settings
from claims_pipeline_tests.support.hostile import assert_no_raw_controls, cli_env, run_cli
from claims_pipeline_tests.time_scale import scaled

DURATIONS = ["fetch.request_timeout_s", "fetch.connect_timeout_s", "fetch.run_budget_s", "fetch.robots_timeout_s",
             "fetch.retry_after_cap_s", "fetch.robots_cache_hours", "pdf.timeout_s", "cache.ttl_days"]


def yaml_for(dotted: str, value: str) -> str:
    section, key = dotted.split(".")
    return f"{section}:\n  {key}: {value}\n"


def write(tmp_path: Path, text: str | bytes, name: str = "cp.yaml") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


@pytest.mark.parametrize("value", [".inf", "1e400", ".nan", "-.inf"])
@pytest.mark.parametrize("key", DURATIONS)
def test_infinite_durations_are_refused_at_load(tmp_path, key, value):
    p = write(tmp_path, yaml_for(key, value))
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert str(e.value).startswith(f"{p}: {key}: "), str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("key", "value", "bound"), [
    ("fetch.request_timeout_s", "3600", "600"), ("fetch.connect_timeout_s", "1e9", "600"),
    ("fetch.run_budget_s", "1e12", "604800"), ("fetch.req_per_sec", "1e9", "10000"),
    ("fetch.max_html_bytes", "10000000000000", "1000000000"), ("fetch.breaker_failures", "100000000", "1000"),
    ("extraction.max_file_bytes", "100000000000", "1000000000"), ("sampling.default_sample", "10000000000", "1000000"),
    ("pdf.max_pages", "100000000", "100000"), ("cache.max_diff_lines", "1000000000000", "1000000"),
])
def test_huge_values_are_refused_naming_the_bound(tmp_path, key, value, bound):
    p = write(tmp_path, yaml_for(key, value))
    with pytest.raises(ConfigError, match=rf"^{p}: {key}: .*less than or equal to {bound}$"):
        load_settings(p)


def _numeric(annotation: object) -> bool:
    return annotation in (int, float) or any(a in (int, float) for a in typing.get_args(annotation))


# numbers that are no duration, size, rate or count: a seed, and weights that are only checked finite
UNBOUNDED_BY_DESIGN = {"sampling.seed", *(f"sampling.priority_weights.{k}" for k in
                                          ("stale_marker", "never_verified", "stamp_age_per_30d",
                                           "salient_statute_or_money", "changed_after_verified", "official_source",
                                           "secondary_source"))}


BOUNDED_BY_VALIDATOR = {"fetch.retry_backoff_s"}  # a list: at most 20 waits of at most 3600 s (its own test below)


def _fields(model: type[BaseModel], prefix: str = ""):
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _fields(annotation, f"{prefix}{name}.")
        elif _numeric(annotation):
            yield f"{prefix}{name}", info


def test_every_number_of_the_settings_has_an_upper_bound():
    """The siblings: no duration, size, rate or count of any section is left without a finite upper bound."""
    unbounded = [key for key, info in _fields(Settings) if key not in UNBOUNDED_BY_DESIGN | BOUNDED_BY_VALIDATOR
                 and not any(getattr(m, "le", None) is not None or getattr(m, "lt", None) is not None
                             for m in info.metadata)]
    assert unbounded == []
    assert Settings.model_config.get("allow_inf_nan") is False  # weights, backoffs, seeds: finite too


@pytest.mark.parametrize("value", ["[1e9]", "[" + ", ".join(["1"] * 21) + "]"])
def test_retry_waits_are_bounded(tmp_path, value):
    p = write(tmp_path, yaml_for("fetch.retry_backoff_s", value))
    with pytest.raises(ConfigError, match=rf"^{p}: fetch.retry_backoff_s: at most 20 waits of at most 3600 seconds each$"):
        load_settings(p)


def test_the_cli_refuses_an_infinite_timeout_in_one_line_with_exit_2(tmp_path):
    p = write(tmp_path, f"home: {tmp_path / 'home'}\n" + yaml_for("fetch.request_timeout_s", ".inf"))
    run = run_cli("fetch", "--config", str(p), "http://127.0.0.1:9/", cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert (run.returncode, run.err_lines) == (
        2, ["claims-pipeline: config error:", f"{p}: fetch.request_timeout_s: Input should be a finite number"])
    assert not (tmp_path / "home").exists()  # nothing opened, nothing fetched


def test_a_config_that_is_not_text_is_one_line_and_exit_2(tmp_path):
    p = write(tmp_path, b"\xff\xfe\x00f\x00e\x00t\x00c\x00h\x00:")  # UTF-16 with a BOM
    run = run_cli("extract", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert (run.returncode, run.err_lines) == (
        2, ["claims-pipeline: config error:", f"{p}:1: not UTF-8 text (byte 0xff): not a config file"])
    assert "Traceback" not in run.stderr


def test_a_huge_file_as_config_is_read_only_to_the_bound(tmp_path):
    p = tmp_path / "huge.yaml"
    p.write_text("# padding\n" * (MAX_CONFIG_BYTES // 10 + 10), encoding="utf-8")  # valid YAML, only bigger
    run = run_cli("lint", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert (run.returncode, run.err_lines) == (2, ["claims-pipeline: config error:", f"{p}: larger than 4 MB: not a config file"])
    assert run.max_rss_mb < 200 and run.seconds < scaled(30), (run.max_rss_mb, run.seconds)


@pytest.mark.parametrize("how", ["--config", "env"])
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder"])
def test_a_config_that_is_no_regular_file_is_refused_at_once(tmp_path, kind, how):
    """A FIFO nobody writes to (issue 26: the command blocked for ever), a device, a folder: one line, exit 2, no
    read. The same through $CLAIMS_PIPELINE_CONFIG."""
    if kind == "fifo":
        p = tmp_path / "cfg.yaml"
        os.mkfifo(p)
        what = "a FIFO"
    elif kind == "folder":
        p = tmp_path / "cfgdir"
        p.mkdir()
        what = "a folder"
    else:
        p, what = Path(kind), "a character device"
    env = cli_env(tmp_path)
    args = ["lint"]
    if how == "env":
        env["CLAIMS_PIPELINE_CONFIG"] = str(p)
    else:
        args += ["--config", str(p)]
    run = run_cli(*args, cwd=tmp_path, env=env, timeout=60)
    assert (run.returncode, run.err_lines) == (2, ["claims-pipeline: config error:",
                                                   f"{p}: not a regular file ({what}): not a config file"])
    assert run.seconds < scaled(30)


@pytest.mark.parametrize(("char", "message"), [
    ("\x1b", ":3:7: not valid YAML: character U+001B is not allowed (a control or bidi character; remove it)"),
    ("\x07", ":3:7: not valid YAML: character U+0007 is not allowed (a control or bidi character; remove it)"),
    # YAML reads U+202E (printable to it): the key is then unknown, and written out in the line
    ("\u202e", ": fetch.time\\u202eout_s: unknown key, did you mean robots_timeout_s or request_timeout_s?"),
])
def test_a_control_or_bidi_character_in_a_key_is_one_line_with_line_and_column(tmp_path, char, message):
    p = write(tmp_path, f"fetch:\n  concurrency: 4\n  time{char}out_s: 3\n")
    run = run_cli("lint", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert (run.returncode, run.err_lines) == (2, ["claims-pipeline: config error:", f"{p}{message}"])
    assert "Traceback" not in run.stderr
    assert_no_raw_controls(run.stderr)


def test_a_syntax_error_names_line_and_column(tmp_path):
    p = write(tmp_path, "fetch:\n  concurrency: [1, 2\n  x: 3\n")
    with pytest.raises(ConfigError, match=rf"^{p}:3:4: not valid YAML: "):
        load_settings(p)


def test_an_alias_bomb_inside_a_valid_list_is_five_lines_and_a_count(tmp_path):
    bomb = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    p = write(tmp_path, f"x:\n  {bomb.replace(chr(10), chr(10) + '  ')}\nlinter:\n  root_url_allowlist: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n")
    run = run_cli("lint", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.err_lines[0] == "claims-pipeline: config error:"
    assert len(run.err_lines) == 1 + 5 + 1, run.err_lines  # the first five, then the count
    assert run.err_lines[-1].startswith(f"{p}: … and ") and run.err_lines[-1].endswith("fix these first")


def test_a_config_just_under_the_bound_still_loads(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text("sampling:\n  seed: 7\n" + "# padding\n" * ((MAX_CONFIG_BYTES - 100) // 10), encoding="utf-8")
    assert load_settings(p).sampling.seed == 7


@pytest.mark.parametrize(("text", "message"), [
    ("fetch:\n  concurrency: 3\nextraction:\n  workers: 1\nfetch:\n  concurrency: 4\n",
     "fetch: given twice (lines 1 and 5); keep one"),
    ("fetch:\n  concurrency: 3\n  req_per_sec: 2\n  concurrency: 4\n",
     "fetch.concurrency: given twice (lines 2 and 4); keep one"),
    ("fetch:\n  default_host: {concurrency: 2, concurrency: 3, interval_ms: 1}\n",
     "fetch.default_host.concurrency: given twice (lines 2 and 2); keep one"),
    ("home: /a\nhome: /b\n", "home: given twice (lines 1 and 2); keep one"),
], ids=["top-level", "nested", "flow-mapping", "scalar"])
def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path, text, message):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert str(e.value) == f"{p}: {message}"


def test_the_cli_refuses_a_duplicate_section_with_exit_2(tmp_path):
    p = write(tmp_path, "fetch:\n  concurrency: 3\nfetch:\n  concurrency: 4\n")
    run = run_cli("extract", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert (run.returncode, run.err_lines) == (
        2, ["claims-pipeline: config error:", f"{p}: fetch: given twice (lines 1 and 3); keep one"])


def test_equal_values_under_different_keys_and_anchors_still_load(tmp_path):
    p = write(tmp_path, "fetch:\n  default_host: &h {concurrency: 2, interval_ms: 5}\n  gov_host: *h\n"
                        "  connect_timeout_s: 600\n  request_timeout_s: 600\n  run_budget_s: 604800\n")
    s = load_settings(p)
    assert s.fetch.gov_host == s.fetch.default_host and s.fetch.run_budget_s == 604800


def test_a_billion_laughs_config_is_refused_quickly(tmp_path):
    """Nested aliases share their anchors' nodes: the duplicate-key check looks at each node once (walking the
    aliases would visit 10^12 nodes)."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    p = write(tmp_path, "\n".join(lines) + "\n")
    run = run_cli("extract", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=30)
    assert run.returncode == 2 and run.err_lines[:2] == ["claims-pipeline: config error:", f"{p}: a0: unknown key"]
    assert run.seconds < scaled(20) and run.max_rss_mb < 200, (run.seconds, run.max_rss_mb)


def test_a_config_nested_thousands_deep_is_one_line(tmp_path):
    p = write(tmp_path, "[" * 50_000 + "]" * 50_000 + "\n")
    run = run_cli("extract", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert (run.returncode, run.err_lines) == (2, ["claims-pipeline: config error:", f"{p}: nested too deeply: not a config file"])


@pytest.mark.parametrize("content", [b"gov.example\n" + b"# padding\n" * (MAX_CONFIG_BYTES // 10 + 10), b"\xffhost\n"],
                         ids=["huge", "not-utf8"])
def test_the_allowlist_file_is_read_bounded_and_as_text(tmp_path, content):
    (tmp_path / "allow.txt").write_bytes(content)
    p = write(tmp_path, "extraction:\n  primary_allowlist_file: allow.txt\n")
    with pytest.raises(ConfigError, match=rf"^{p}: extraction.primary_allowlist_file: {tmp_path / 'allow.txt'}.*not a host list$"):
        load_settings(p)


@pytest.mark.parametrize("url", ["http://x y/v1", "http://[::1/v1", "http://h:99999/v1", "http://h/v1\x1b[2J",
                                 "http://h:abc/v1"])
def test_a_judge_base_url_the_http_client_cannot_parse_is_refused_at_load(tmp_path, url):
    """judge.base_url was checked by its start only: a space, a control character, a bad port or an unclosed
    [IPv6] loaded, and verify then failed with httpx's InvalidURL (a traceback on --dry-run)."""
    p = write(tmp_path, yaml.safe_dump({"judge": {"provider": "openai-compatible", "base_url": url}}))
    run = run_cli("verify", "--dry-run", "--config", str(p), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert run.returncode == 2 and run.err_lines[0] == "claims-pipeline: config error:", run.stderr[-2000:]
    assert len(run.err_lines) == 2 and run.err_lines[1].startswith(f"{p}: judge.base_url: "), run.stderr[-2000:]
    assert_no_raw_controls(run.stderr)
    assert "Traceback" not in run.stderr and not (tmp_path / "home").exists()


@pytest.mark.parametrize("url", ["json://${TOKEN", "slack://${SLACK_TOKEN/#audits", "json://${A}/${B"])
def test_an_unclosed_variable_reference_is_a_config_error_naming_the_key(tmp_path, url):
    """`${TOKEN` was accepted and sent as it is: the secret never read, the literal text at the channel."""
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"notify": {"urls": ["json://ok.example/x", url]}}))
    with pytest.raises(ConfigError) as exc:
        load_settings(config)
    assert "notify.urls: entry 2: a '${' without its closing '}'" in str(exc.value)
    run = run_cli("extract", "--config", str(config), cwd=tmp_path, env=cli_env(tmp_path), timeout=60)
    assert run.returncode == 2 and "notify.urls: entry 2: a '${' without its closing '}'" in run.stderr
