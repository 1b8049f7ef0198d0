"""The docs cannot drift from the code: docs/configuration.md is the generator's output, every key has a meaning,
links between the docs resolve, and no file of the repository names a folder of one machine."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from claims_pipeline.config import settings_doc
from claims_pipeline_tests.time_scale import scaled

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "decisions").glob("*.md")),
        ROOT / "benchmarks" / "README.md"]


def test_configuration_reference_is_the_generators_output():
    shown = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert shown == settings_doc.render(), (
        "docs/configuration.md is out of date: run\n"
        "  .venv/bin/python -m claims_pipeline.config.settings_doc > docs/configuration.md")


def test_generator_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "claims_pipeline.config.settings_doc"], capture_output=True, text=True,
                          timeout=scaled(120), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == settings_doc.render()


def test_every_key_has_a_meaning_and_the_extra_meanings_name_real_keys():
    keys = settings_doc.config_keys()
    assert "fetch.concurrency" in keys and "fetch.default_host" in keys and "judge.prices" in keys
    fields = dict(settings_doc._dotted_fields(settings_doc.Settings))
    missing = [k for k in keys if not settings_doc.meaning(k, fields[k])]
    assert not missing, f"give these keys a description in their section's model, config/sections/ (or a line in settings_doc.MEANINGS): {missing}"
    stale = sorted(set(settings_doc.MEANINGS) - set(keys))
    assert not stale, f"settings_doc.MEANINGS names keys the settings models do not have: {stale}"
    table = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert all(f"| `{k}` |" in table for k in keys)


LINK_RE = re.compile(r"\]\(([^)\s]+)\)")


def test_links_between_the_docs_resolve():
    broken = []
    for doc in DOCS:
        for target in LINK_RE.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, broken


# built from parts so that this file does not name them itself
MACHINE_PATH_RE = re.compile("|".join(["/" + "work/", "/" + r"home/[a-z]", "/" + "Users/", "/" + "root/",
                                       r"[A-Z]:\\" + r"\\?Users"]))


def test_no_file_names_a_folder_of_one_machine():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(60)).stdout.split()
    if not tracked:  # not a git checkout (an sdist): the files at hand
        tracked = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file() and ".venv" not in p.parts]
    hits = []
    for name in tracked:
        path = ROOT / name
        if path.suffix in (".png", ".pdf", ".gz", ".zip", ".parquet", ".sqlite") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH_RE.search(line):
                hits.append(f"{name}:{no}: {line.strip()[:120]}")
    assert not hits, "\n".join(hits)


def test_every_dagster_name_is_in_the_docs():
    """Every asset, check, job, schedule and sensor the UI shows is named in the docs (a rename shows up here)."""
    import warnings

    from claims_pipeline.definitions import defs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        repo = defs().get_repository_def()
    names = {key.to_user_string() for key in repo.asset_graph.get_all_asset_keys()}
    names |= {check.name for check in repo.asset_graph.asset_check_keys}
    names |= {job.name for job in repo.get_all_jobs() if not job.name.startswith("__")}
    names |= {s.name for s in repo.schedule_defs} | {s.name for s in repo.sensor_defs}
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)
    missing = sorted(n for n in names if f"`{n}`" not in text)
    assert not missing, f"not named in README.md or docs/: {missing}"
