"""The corpus sensor on a corpus of many scopes: when most of them are due at once (a new deployment), one
audit_corpus run over every scope instead of a run per scope (each of which would end with the cross-scope audit
and its own report); a few due scopes still get a run each."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from claims_pipeline.defs.automation import MANY_DUE, corpus_sensor
from claims_pipeline.defs.partitions import SCOPE_PARTITIONS_NAME
from claims_pipeline.defs.resources import ClaimsConfig
from claims_pipeline_tests.defs.conftest import config_with
from claims_pipeline_tests.support.sensor_results import apply_partition_requests

N_SCOPES = MANY_DUE + 5


def _corpus(root: Path, n: int) -> Path:
    for i in range(n):
        folder = root / "countries" / f"c{i:02d}"
        folder.mkdir(parents=True)
        (folder / "playbook.md").write_text(
            f"# C{i:02d}\n\n- Transfer duty **{i + 1}%** ([Tax](http://www.tax.gov.xa/duty-{i}.html)).\n",
            encoding="utf-8")
    return root


def _tick(instance: dg.DagsterInstance, config: Path, cursor: str | None) -> dg.SensorResult:
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor,
                                  resources={"claims_config": ClaimsConfig(config_path=str(config))})
    result = corpus_sensor(ctx)
    assert isinstance(result, dg.SensorResult)
    return result


def _runs(result: dg.SensorResult) -> list[dg.RunRequest]:
    return list(result.run_requests or [])


def _range(instance: dg.DagsterInstance, request: dg.RunRequest) -> list[str]:
    """The partition keys a run request's range tags cover on this instance (dynamic partitions: in the order
    they were added)."""
    keys = list(instance.get_dynamic_partitions(SCOPE_PARTITIONS_NAME))
    start = keys.index(request.tags["dagster/asset_partition_range_start"])
    return keys[start:keys.index(request.tags["dagster/asset_partition_range_end"]) + 1]


def test_most_scopes_due_at_once_is_one_run_over_every_scope(instance, demo_config, tmp_path: Path):
    corpus = _corpus(tmp_path / "corpus", N_SCOPES)
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))
    scopes = [f"c{i:02d}" for i in range(N_SCOPES)]

    first = _tick(instance, config, None)  # every scope new
    assert [r.job_name for r in _runs(first)] == ["audit_corpus"]
    apply_partition_requests(instance, first)
    assert sorted(_range(instance, _runs(first)[0])) == scopes

    # a few scopes edited: a run each, as before
    for i in (3, 7):
        play = corpus / "countries" / f"c{i:02d}" / "playbook.md"
        play.write_text(play.read_text() + "- Stamp duty **0.5%** ([Tax](http://www.tax.gov.xa/stamp.html)).\n")
    few = _tick(instance, config, first.cursor)
    assert sorted((r.job_name, r.partition_key) for r in _runs(few)) == [
        ("audit_scope", "c03"), ("audit_scope", "c07")]

    # most scopes removed and as many new ones added: one run over the partitions as they will be
    for i in range(N_SCOPES - 3):
        (corpus / "countries" / f"c{i:02d}" / "playbook.md").rename(corpus / "countries" / f"c{i:02d}" / "old.txt")
    for i in range(N_SCOPES, 2 * N_SCOPES):
        folder = corpus / "countries" / f"c{i:02d}"
        folder.mkdir(parents=True)
        (folder / "playbook.md").write_text(f"# C{i}\n\n- Fee **{i}%** ([Tax](http://www.tax.gov.xa/f{i}.html)).\n")
    moved = _tick(instance, config, few.cursor)
    assert [r.job_name for r in _runs(moved)] == ["audit_corpus"]
    apply_partition_requests(instance, moved)
    now = [f"c{i:02d}" for i in range(N_SCOPES - 3, 2 * N_SCOPES)]
    assert sorted(instance.get_dynamic_partitions("scope")) == now
    assert sorted(_range(instance, _runs(moved)[0])) == now
