"""`claims-pipeline demo`: start the bundled fixture web on 127.0.0.1, audit the bundled (fictional) demo
corpus three times — as monthly runs would — and print where the report is and its headline numbers.

Audit 1 reads every page (epoch 1). Then one cited page changes on the fixture web (epoch 2): audit 2 sees the
new text once and checks the figures on it (the levy's 0.8 % is TOKENS_ABSENT, "not confirmed yet"), but it is
not yet a change (dynamic pages must not flag); audit 3 sees it again and confirms it, so the report shows
CONTENT_CHANGED and the claims verified before the change as stale_changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from claims_pipeline.commands import options

if TYPE_CHECKING:
    from claims_pipeline.config.settings import Settings

DEMO_STEPS = [(1, "epoch 1: every cited page as it was"), (2, "epoch 2: a cited page changed (first sighting)"),
              (2, "epoch 2 again: the change is confirmed")]


OPTIONS = [options.JSON]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", type=Path, metavar="DIR", help="demo outputs (default <claims_pipeline home>/demo)")
    parser.add_argument("--keep", action="store_true", help="keep the previous demo's cache (default: start fresh)")


def demo_home(explicit: Path | None) -> Path:
    from claims_pipeline.config.settings import demo_home_dir

    return explicit.expanduser().resolve() if explicit else demo_home_dir()


def write_runtime_config(home: Path, address: str) -> Path:
    """demo.yaml with absolute paths, the demo home, and the demo hosts routed to the fixture web."""
    from claims_pipeline_demo.routes import DEMO_CONFIG, fixture_routes

    data: dict[str, Any] = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
    data["home"] = str(home)
    data.setdefault("extraction", {})["corpus_dir"] = str((DEMO_CONFIG.parent / "corpus").resolve())
    fetch = data.setdefault("fetch", {})
    fetch.update(fixture_routes(fetch.get("address_map") or {}, address))
    path = home / "demo.yaml"
    path.write_text("# written by `claims-pipeline demo`. The *.xa/*.xb/*.xc routes name the demo's fixture web (a new port\n"
                    "# every demo, closed when it ends); a later run on this file (the UI, `audit --config`) starts a\n"
                    "# fixture web of its own, and its routes replace these.\n"
                    + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def demo_verdicts(settings: Settings) -> int:
    """The verdict step on the demo's audit: the scripted demo judge (a local server speaking the Anthropic
    wire format to the real SDK) answers; code checks every answer; the verdicts land next to the report."""
    from claims_pipeline.commands.audit import latest_summary
    from claims_pipeline.commands.verify import verify
    from claims_pipeline.corpus.scopes import list_scopes

    print("[demo] verdicts — the scripted demo judge (the project's figure readers, not a model), every answer checked by code",
          file=sys.stderr)
    from claims_pipeline.config.corpus_source import corpus_source

    scopes = list(list_scopes(corpus_source(settings)))
    code = verify(settings, scopes, None, quiet=True, trigger="demo", name="demo verify")
    latest = latest_summary(settings.reports_dir)
    verdicts = Path(latest["dir"]) / "verdicts.json" if latest else None
    if code == 0 and verdicts is not None and verdicts.is_file():
        doc = json.loads(verdicts.read_text(encoding="utf-8"))
        by = {k: v for k, v in doc["counts"]["by_verdict"].items() if v}
        print(f"[demo]   {sum(by.values())} verdicts: " + " · ".join(f"{k} {v}" for k, v in by.items()), file=sys.stderr)
        print(f"[demo]   {doc['verification']}", file=sys.stderr)
        print(f"verdicts → {verdicts.with_suffix('.md')}", file=sys.stderr)
    elif code:
        print(f"[demo] the verdict step failed (exit {code})", file=sys.stderr)
    return code


def ui_command(config: Path, dagster_home: str, deployment: str = "demo") -> str:
    """The shell line that opens the UI on the demo's instance: the venv's `dg dev` (so it works without activating
    it), in the project folder of a checkout, on the module for an installed package (`dagster dev` is superseded)."""
    import shlex

    from claims_pipeline.config.settings import ENV_DEPLOYMENT, PACKAGE_DIR

    env = f"CLAIMS_PIPELINE_CONFIG={shlex.quote(str(config))} DAGSTER_HOME={shlex.quote(dagster_home)}"
    if deployment != "local":  # local is what an unset variable means
        env += f" {ENV_DEPLOYMENT}={deployment}"
    project = PACKAGE_DIR.parent
    dg_cli = shlex.quote(str(Path(sys.executable).with_name("dg")))
    if "[tool.dg" in _read(project / "pyproject.toml"):
        return f"cd {shlex.quote(str(project))} && {env} {dg_cli} dev"
    return f"{env} {dg_cli} dev -m claims_pipeline.definitions"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def run(args: argparse.Namespace) -> int:
    """The demo's settings are read once, from the copy of demo.yaml it writes, for its three audits and its
    verdicts (the fixture web's port, in that copy, stays the same throughout)."""
    from claims_pipeline.commands.audit import audit, headline_line, latest_signature, latest_summary
    from claims_pipeline.config.settings import load_settings
    from claims_pipeline_demo.fixture_web.server import FixtureWeb
    from claims_pipeline_demo.routes import save_epoch

    home = demo_home(args.home)
    home.mkdir(parents=True, exist_ok=True)
    if not args.keep:  # the story needs an empty cache: the first audit is the baseline
        for sub in ("cache", "assets", "audit"):
            shutil.rmtree(home / sub, ignore_errors=True)
    code, wrote_one = 0, False
    with FixtureWeb() as web:
        config = write_runtime_config(home, f"127.0.0.1:{web.port}")
        settings = load_settings(config, deployment="demo")
        print(f"[demo] fixture web on http://127.0.0.1:{web.port} · outputs under {home}", file=sys.stderr)
        for i, (epoch, what) in enumerate(DEMO_STEPS, 1):
            web.set_epoch(epoch)
            save_epoch(home, epoch)  # a UI run after the demo serves the pages its last audit saw
            print(f"[demo] audit {i}/{len(DEMO_STEPS)} — {what}", file=sys.stderr)
            before = latest_signature(home / "reports")
            code = audit(settings, fixture_web=False, quiet=True, trigger="demo",
                         name=f"demo audit {i}/{len(DEMO_STEPS)}")
            summary = latest_summary(home / "reports") if latest_signature(home / "reports") != before else None
            if summary:
                wrote_one = True
                print(f"[demo]   {headline_line(summary['headline'])}", file=sys.stderr)
            else:
                print(f"[demo]   no report written by audit {i}", file=sys.stderr)
            if code:
                print(f"[demo] audit {i} failed (exit {code}); stopping", file=sys.stderr)
                break
    if code == 0 and wrote_one:
        code = demo_verdicts(settings)
    summary = latest_summary(home / "reports") if wrote_one else None  # never an earlier demo's report
    output = options.Result(args.json)
    output.document(summary["headline"] if summary else {})  # {}: no audit of this demo wrote a report
    if summary:
        output.line(headline_line(summary["headline"]))
        print(f"report → {summary['report']}", file=sys.stderr)
        if summary.get("html"):
            print(f"report for people → {summary['html']}", file=sys.stderr)
    print(f"UI: {ui_command(config, os.environ.get('DAGSTER_HOME') or str(home / 'dagster'))}", file=sys.stderr)
    return code
