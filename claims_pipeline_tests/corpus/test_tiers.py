"""Source tiers: official sources are recognised across countries from the one data file shipped with the
package, users add to it from their settings, and the tier never decides whether a figure is looked for."""

from __future__ import annotations

import pytest
import yaml

from claims_pipeline.config.settings import _host_problem
from claims_pipeline.corpus.tiers import OFFICIAL_SOURCES_FILE, PrimaryHosts, builtin_official_hosts, source_tier
from claims_pipeline_tests.corpus.conftest import extract_lines
from claims_pipeline_tests.time_scale import scaled

OFFICIAL = PrimaryHosts(builtin_official_hosts())


@pytest.mark.parametrize("host", [
    "www.berlin.de", "service.berlin.de", "gesetze.berlin.de", "www.arbeitsagentur.de", "www.cnil.fr", "www.bfdi.bund.de",
    "www.ccomptes.fr", "www.insee.fr", "www.destatis.de", "www.legifrance.gouv.fr", "www.boe.es", "eur-lex.europa.eu",
    "europa.eu", "www.gov.uk", "www.service-public.fr", "www.bsv.admin.ch", "www.bundesverfassungsgericht.de",
    "www.ine.es", "www.istat.it", "www.bankofengland.co.uk", "www.rijksoverheid.nl", "wetten.overheid.nl",
])
def test_official_sources_of_many_countries_with_or_without_gov_in_the_name(host):
    assert source_tier(host, OFFICIAL) in ("primary-gov", "primary-allowlist")


@pytest.mark.parametrize("host", [
    "www.numbeo.com", "berlin.de.example.com", "notcnil.fr", "irs.gov.com", "taxsummaries.pwc.com", "blog.example.org",
    "cnil.fr.evil.net",
])
def test_other_hosts_are_secondary(host):
    assert source_tier(host, OFFICIAL) is None


def test_the_data_file_holds_only_usable_host_entries():
    data = yaml.safe_load(OFFICIAL_SOURCES_FILE.read_text(encoding="utf-8"))
    entries = [e for group in data.values() for e in group]
    assert len(entries) > 200 and len(set(entries)) == len(entries)
    assert [e for e in entries if _host_problem(e.removeprefix(".")) is not None or e != e.lower()] == []
    assert {"regulators_and_data_protection", "statistics_offices", "courts", "legislation_and_law_gazettes",
            "audit_courts", "eu_and_international", "regional_and_city_government"} <= set(data)


def test_users_extend_the_list_and_name_their_own_site():
    text = ("- levy **0.8 %** ([county](https://www.county-kent.example/levy))\n"
            "- levy **0.8 %** ([our page](https://kb.example.org/levy))\n"
            "- levy **0.8 %** ([blog](https://blog.example.net/levy))\n"
            "- levy **0.8 %** ([cnil](https://www.cnil.fr/levy))\n")
    ex = extract_lines(text, primary_allowlist=["county-kent.example"], own_hosts=[".example.org"])
    assert [c.source_tier for c in ex.claims] == ["primary-allowlist", "own", "secondary", "primary-allowlist"]
    official = extract_lines(text, primary_allowlist=["county-kent.example"], own_hosts=[".example.org"], primary_only=True)
    assert [c.source_url for c in official.claims] == ["https://www.county-kent.example/levy", "https://www.cnil.fr/levy"]


def test_extract_shows_the_tier_of_each_cited_host(tmp_path):
    import json
    import os
    import subprocess
    import sys

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "notes.md").write_text("Unemployment benefit is **60 %** of net pay ([BA](https://www.arbeitsagentur.de/x)).\n"
                                 "Rents rose **4 %** ([blog](https://blog.example.net/r)).\n", encoding="utf-8")
    env = {**os.environ, "CLAIMS_PIPELINE_HOME": str(tmp_path / "home")}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    r = subprocess.run([sys.executable, "-m", "claims_pipeline.cli", "extract", "--corpus", str(kb), "--json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=scaled(60), env=env)
    assert r.returncode == 0, r.stderr
    assert "[extract] official (listed): www.arbeitsagentur.de (1)" in r.stderr.splitlines()
    assert "[extract] secondary: blog.example.net (1)" in r.stderr.splitlines()
    stats = json.loads(r.stdout)
    assert stats["hosts_by_tier"] == {"primary-allowlist": {"www.arbeitsagentur.de": 1}, "secondary": {"blog.example.net": 1}}
