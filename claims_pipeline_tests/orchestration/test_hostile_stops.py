"""Stopping a real `claims-pipeline audit` (issue 26): SIGINT or SIGTERM sent to its process group at each stage of
a run against the fixture web — Dagster starting, mid-fetch, in a long robots.txt Crawl-delay, in the priors, in
the report — and a termination asked from Dagster (what the UI's Terminate does to a run it cannot reach). Each
time: the command ends with one line and 130 / 143 (1 for Dagster's), within a generous bound, the Dagster run is
recorded CANCELED, the page cache passes its consistency check, and the next run carries on; the last run
completes and writes its report. Real processes, real signals, a real Dagster instance and page cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest
import yaml

from claims_pipeline.config.settings import load_settings
from claims_pipeline.orchestration.instance import prepare_dagster_home
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.consistency import verify_cache
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.corpus.conftest import COUNTRIES_LAYOUT
from claims_pipeline_tests.support.fixture_settings import fixture_config
from claims_pipeline_tests.support.hostile import assert_no_raw_controls, cli_env
from claims_pipeline_tests.support.stopped_audit import (
    CRAWL_DELAY_S,
    SLOW_PAGES,
    Audit,
    instance_at,
    newest_run,
    step_started,
    until,
    write_corpus,
)
from claims_pipeline_tests.time_scale import scaled

# generous: the figures themselves are printed (pytest -s) and by benchmarks/bench_stops.py; scaled for a busy
# machine, but below the Crawl-delay, which a stop that sat it out would take
STOP_BOUND_S = min(scaled(15.0), CRAWL_DELAY_S - 2)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sites = tmp_path / "sites"
    (sites / "polite.fixture").mkdir(parents=True)
    with FixtureWeb(sites) as web:
        # host_lease_s 0: the Crawl-delay of one stage is not handed to the next run through the shared host lease
        data = fixture_config(web, tmp_path / "home", concurrency=2, run_budget_s=120, robots_cache_hours=0,
                              host_lease_s=0)
        data["extraction"] = {"corpus_dir": str(write_corpus(tmp_path / "corpus")),
                              "primary_allowlist": ["slow.fixture", "polite.fixture"], **COUNTRIES_LAYOUT}  # scopes xa, xb
        cfg = tmp_path / "audit.yaml"
        cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
        env = cli_env(tmp_path)
        monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))  # the instance this test reads, as the CLI's
        prepare_dagster_home(load_settings(cfg).home_dir)
        with instance_at(tmp_path / "dagster"):  # its tables made once, before any command and this test read it
            pass
        yield web, sites, cfg, env, tmp_path


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_audit_stops_at_every_stage_cleanly_and_the_next_run_resumes(setup):
    web, sites, cfg, env, tmp_path = setup
    dagster_home = tmp_path / "dagster"
    robots = sites / "polite.fixture" / "robots.txt"
    seen: set[str] = set()

    def slow_done() -> bool:  # a page of this stage's run came back (its run exists: not a late one of the last)
        return any("/_/slow" in e["path"] for e in web.requests(settle_s=0)) and \
            (run := newest_run(dagster_home)) is not None and run.run_id not in seen

    def in_crawl_delay() -> bool:
        return any(e["host"] == "polite.fixture" and e["path"] == "/robots.txt" for e in web.requests(settle_s=0))

    # (stage, signal, when to send it); None: a termination asked from Dagster (the run marked CANCELING)
    stages: list[tuple[str, int | None, Callable[[], bool]]] = [
        ("Dagster starting, before the fetch", signal.SIGINT, lambda: step_started(dagster_home, "claims", seen)),
        ("mid-fetch", signal.SIGTERM, slow_done),
        ("mid-fetch, terminated from Dagster", None, slow_done),
        ("in a 30 s robots.txt Crawl-delay", signal.SIGINT, in_crawl_delay),
        ("in the priors", signal.SIGTERM, lambda: step_started(dagster_home, "priors", seen)),
        ("in the report", signal.SIGINT, lambda: step_started(dagster_home, "audit_report", seen)),
    ]
    figures = []
    latest_file = tmp_path / "home" / "reports" / "LATEST"
    for stage, sig, ready in stages:
        web.requests(settle_s=3)  # the previous stage's requests still in the server's hands end first
        web.clear_log()
        latest_before = latest_file.read_text(encoding="utf-8") if latest_file.exists() else None
        if "Crawl-delay" in stage:
            robots.write_text(f"User-agent: *\nCrawl-delay: {CRAWL_DELAY_S}\n", encoding="utf-8")
        audit = Audit(cfg, env, tmp_path)
        until(ready, audit, stage)
        if "Crawl-delay" in stage:
            time.sleep(1.0)  # well inside the wait
        if sig is None:
            run = newest_run(dagster_home)
            assert run is not None and run.run_id not in seen
            with instance_at(dagster_home) as instance:
                instance.report_run_canceling(run, message="Terminate asked from the test")
            sent = time.monotonic()
        else:
            sent = audit.signal(sig)
        code, err = audit.wait(timeout=60)
        took = time.monotonic() - sent
        print(f"{stage}: exit {code} in {took:.2f} s", flush=True)
        robots.unlink(missing_ok=True)
        figures.append((stage, sig, code, took))
        if stage == "in the report" and code == 0:
            # the report's step is short: the stop may come when it has already published; then the run says so,
            # completed, and the report it names is whole
            assert "SIGINT received as the run was ending: it completed" in err, err[-3000:]
            done = newest_run(dagster_home)
            assert done is not None and done.status == dg.DagsterRunStatus.SUCCESS
            seen.add(done.run_id)
            assert (tmp_path / "home" / latest_file.read_text(encoding="utf-8").strip() / "report.html").is_file()
            continue
        # a stopped run publishes no report: LATEST names the report it named before
        assert (latest_file.read_text(encoding="utf-8") if latest_file.exists() else None) == latest_before, stage
        expected = 128 + sig if sig else 1
        assert code == expected, (stage, code, err[-3000:])
        assert took < STOP_BOUND_S, (stage, took)
        assert "Traceback" not in err and "Exception in callback" not in err, (stage, err[-3000:])
        last = err.strip().splitlines()[-1]
        why = f"{signal.Signals(sig).name} received" if sig else "the run was terminated from Dagster"
        assert last.startswith(f"claims-pipeline: stopped ({why})") and "the next run resumes" in last, (stage, err)
        assert_no_raw_controls(err)
        run = newest_run(dagster_home)
        assert run is not None and run.run_id not in seen
        assert run.status == dg.DagsterRunStatus.CANCELED, (stage, run.status)
        seen.add(run.run_id)
        with PageCache.at(load_settings(cfg).page_cache) as cache:
            report = verify_cache(cache)
        assert report.ok, (stage, report.problems)
        if "Crawl-delay" in stage:  # the wait was said, and not sat out: the host's pages were never asked for
            assert "claims-pipeline: waiting 30 s before the next request to polite.fixture" in err, err[-2000:]
            assert not any(e["host"] == "polite.fixture" and "/_/page/" in e["path"] for e in web.requests(settle_s=0))
    for stage, sig, code, took in figures:
        print(f"{stage:40s} {signal.Signals(sig).name if sig else 'terminate':10s} exit {code:3d}  stopped in {took:5.2f} s")

    final = Audit(cfg, env, tmp_path)
    code, err = final.wait()
    assert code == 0, err[-3000:]
    assert "audit done → " in err
    assert newest_run(dagster_home).status == dg.DagsterRunStatus.SUCCESS
    with PageCache.at(load_settings(cfg).page_cache) as cache:
        assert verify_cache(cache).ok
    latest = (tmp_path / "home" / "reports" / "LATEST").read_text(encoding="utf-8").strip()
    assert ((tmp_path / "home" / latest) / "report.json").is_file()


def test_a_dagster_run_terminated_mid_fetch_ends_canceled_without_a_swallowed_interrupt(setup):
    """A run executed by Dagster itself in its main thread (`dagster job execute`, as a run worker executes a run
    the UI launched), terminated as Dagster terminates one: the run marked CANCELING, then SIGINT to the process
    (dagster's run-cancellation thread). The fetch loop hears it, stops cleanly and hands the interrupt to
    Dagster's handler: the run ends CANCELED (the interrupt used to be logged inside the event loop's callback and
    swallowed, and the run went on)."""
    from claims_pipeline.orchestration.runner import sync_scope_partitions

    web, _, cfg, env, tmp_path = setup
    dagster_home = tmp_path / "dagster"
    with instance_at(dagster_home) as instance:
        sync_scope_partitions(instance, ["xa", "xb"])
    env = {**env, "CLAIMS_PIPELINE_CONFIG": str(cfg)}
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "dagster", "job", "execute", "-m", "claims_pipeline.definitions",
                                 "-j", "audit_scope", "--tags", '{"dagster/partition": "xa"}'],
                                cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            end = time.monotonic() + scaled(120)
            while not any("/_/slow" in e["path"] for e in web.requests(settle_s=0)):
                assert proc.poll() is None and time.monotonic() < end, "the run never reached the fetch"
                time.sleep(0.05)
            run = newest_run(dagster_home)
            assert run is not None
            with instance_at(dagster_home) as instance:
                instance.report_run_canceling(run, message="Terminate asked from the test")
            os.kill(proc.pid, signal.SIGINT)  # what the run worker's cancellation thread sends itself
            sent = time.monotonic()
            proc.wait(scaled(60))
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        out.seek(0)
        log = out.read().decode("utf-8", "replace")
    print(f"dagster job execute, terminated mid-fetch: exit {proc.returncode}, stopped in {took:.2f} s")
    assert took < STOP_BOUND_S, took
    assert "Exception in callback" not in log, log[-3000:]
    done = newest_run(dagster_home)
    assert done is not None and done.run_id == run.run_id and done.status == dg.DagsterRunStatus.CANCELED, done
    with instance_at(dagster_home) as instance:
        steps = [r.event_log_entry for r in instance.get_records_for_run(
            run.run_id, of_type=dg.DagsterEventType.STEP_START).records]
    assert [e.step_key for e in steps][-1] == "fetched_pages"  # nothing ran after the stopped step
    with PageCache.at(load_settings(cfg).page_cache) as cache:
        assert verify_cache(cache).ok
    slow_done = [e for e in web.requests() if "/_/slow" in e["path"]]
    assert len(slow_done) < SLOW_PAGES  # the fetch did not run to its end


@pytest.mark.slow
def test_a_second_signal_ends_the_process_at_once_and_the_run_is_still_recorded_canceled(setup):
    """An operator who presses Ctrl-C twice does not wait for the run's next safe point: the process ends, the run
    recorded CANCELED first, the cache as consistent as after a kill, and the next run completes."""
    web, _, cfg, env, tmp_path = setup
    dagster_home = tmp_path / "dagster"
    audit = Audit(cfg, env, tmp_path)
    until(lambda: any("/_/slow" in e["path"] for e in web.requests(settle_s=0)), audit, "mid-fetch")
    sent = audit.signal(signal.SIGINT)
    time.sleep(0.01)  # both arrive before the run could end (a clean stop takes about a second)
    audit.signal(signal.SIGINT)
    code, err = audit.wait(timeout=60)
    took = time.monotonic() - sent
    print(f"two SIGINTs mid-fetch: exit {code} in {took:.2f} s")
    assert code == 130, err[-3000:]
    assert took < STOP_BOUND_S
    assert "Traceback" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("claims-pipeline: stopped (SIGINT received)"), err[-2000:]
    print(f"  {'forced: ' + last.rsplit('(', 1)[-1] if 'the process ended it' in last else 'the run had ended first'}")
    run = newest_run(dagster_home)
    assert run is not None and run.status == dg.DagsterRunStatus.CANCELED, run
    with PageCache.at(load_settings(cfg).page_cache) as cache:
        assert verify_cache(cache).ok
    final = Audit(cfg, env, tmp_path)
    code, err = final.wait()
    assert code == 0, err[-3000:]
