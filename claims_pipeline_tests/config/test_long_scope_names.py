"""A legal 245-character folder name, or a front matter's `scope:` of any length, is a scope like any other: the
files named after it under the home are bounded (issue 35: every audit failed with `File name too long` on an
internal file). The real command, a real home; the cited host is excluded, so nothing is fetched."""

from __future__ import annotations

import json

import yaml

from claims_pipeline.config.home import HomeLayout, bounded_file_name
from claims_pipeline_tests.support.hostile import cli_env, run_cli

LINE = "- VAT **18 %** ([t](https://tax.gov.xa/v))\n"


def test_an_audit_of_scopes_named_at_the_file_systems_limits(tmp_path):
    kb = tmp_path / "kb"
    long_folder = "x" * 245  # legal: NAME_MAX is 255 bytes
    (kb / long_folder).mkdir(parents=True)
    (kb / long_folder / "a.md").write_text(LINE, encoding="utf-8")
    front = "/".join(["part" * 20] * 40) + "/" + "é" * 300  # 3,600 bytes in 41 parts, one of 600 bytes
    (kb / "other").mkdir()
    (kb / "other" / "b.md").write_text(f"---\nscope: {front}\n---\n{LINE}", encoding="utf-8")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "extraction": {"corpus_dir": str(kb)},
                                   "fetch": {"excluded_hosts": ["tax.gov.xa"]}}), encoding="utf-8")
    run = run_cli("audit", "--config", str(cfg), cwd=tmp_path, env=cli_env(tmp_path), timeout=300)
    assert "File name too long" not in run.stderr, run.stderr[-2000:]
    report_dir = HomeLayout(tmp_path / "home").latest_report_dir()
    assert report_dir is not None, run.stderr[-2000:]
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert report["headline"]["total"] == 2 and set(report["scopes"]) == {long_folder, front}


def test_bounded_file_names_keep_short_names_and_part_long_ones():
    assert bounded_file_name("shared/exit/nordics") == "shared/exit/nordics"
    long_a, long_b = "a" * 245, "a" * 244 + "b"
    assert bounded_file_name(long_a) != bounded_file_name(long_b)  # cut alike, told apart by the hash
    for name in (long_a, "é" * 200, "/".join(["p" * 100] * 100)):
        bounded = bounded_file_name(name)
        assert all(len(p.encode()) + len(".json") + 14 <= 255 for p in bounded.split("/")), bounded
        assert len(bounded.encode()) <= 1024
