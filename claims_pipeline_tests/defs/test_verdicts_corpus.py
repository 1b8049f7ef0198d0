"""The verdict step never writes the corpus, and corpus_untouched proves it after the verdict report too (the audit
report's check ran before the verdicts, so it could not see what the verdict step did)."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest

from claims_pipeline.config.settings import DEMO_CORPUS_DIR
from claims_pipeline.orchestration.runner import sync_scope_partitions
from claims_pipeline_tests.defs.conftest import ALL_ASSETS, ALL_CHECKS, QUIET, config_with, resources_for

SCOPES = ["xa", "xb", "xc", "shared/exit/regional"]


def _run(instance, config, selection):
    return dg.materialize([*ALL_ASSETS, *ALL_CHECKS], instance=instance, resources=resources_for(config),
                          selection=selection, partition_key="xb", run_config=QUIET, raise_on_error=False)


@pytest.mark.parametrize("writes_corpus", [False, True])
def test_corpus_untouched_is_checked_after_the_verdict_report(instance, demo_config, tmp_path, monkeypatch, writes_corpus):
    import claims_pipeline.steps.verdicts as verdicts_core

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS_DIR, corpus)
    config = config_with(demo_config, extraction__corpus_dir=str(corpus))
    sync_scope_partitions(instance, SCOPES)
    assert _run(instance, config, dg.AssetSelection.groups("scopes", "audit")).success
    if writes_corpus:  # a buggy verdict step that applies its suggestion to the corpus
        real = verdicts_core.publish_verdict_report

        def applying(*args, **kwargs):
            play = corpus / "countries" / "xb" / "playbook.md"
            play.write_text(play.read_text(encoding="utf-8") + "\n<!-- corrected -->\n", encoding="utf-8")
            return real(*args, **kwargs)

        monkeypatch.setattr(verdicts_core, "publish_verdict_report", applying)
    result = _run(instance, config, dg.AssetSelection.groups("verdicts"))
    checks = {(c.asset_key.to_user_string(), c.check_name): c for c in result.get_asset_check_evaluations()}
    check = checks[("verdict_report", "corpus_untouched")]
    assert check.passed is (not writes_corpus)
    if writes_corpus:
        assert "countries/xb/playbook.md" in check.metadata["changed_files"].value
