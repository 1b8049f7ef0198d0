"""The per-scope values store (steps/stored.py): one Arrow file per materialization with the scope a column, each
record given back as it was written, only the scopes asked for, each file read once per store, earlier homes'
JSON files still read, damage named in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from claims_pipeline.corpus.linter import LintFinding
from claims_pipeline.steps.changes import PAGE_CHANGES, ChangedPage, ScopeChanges, StaleClaim
from claims_pipeline.steps.corpus import CLAIMS, DOCUMENTS, LINT, CorpusDocuments, LintFindings, ScopeClaims
from claims_pipeline.steps.pages.fetched import FETCHED_PAGES, ScopePages
from claims_pipeline.steps.priors import PRIORS, ScopePriors
from claims_pipeline.steps.step_of_asset import STORED_STEPS
from claims_pipeline.steps.stored import ScopeStore, StoredValueDamaged, write_json_file
from claims_pipeline.store.records import PageState

CLAIM = {"id": "xa:3:ab12cd34", "scope": "xa", "section": "Taxes", "line_no": 3, "claim_text": "VAT is 18 %",
         "values": [{"type": "pct", "raw": "18 %", "needles": ["18%", "18 %"], "salient": True, "pos": 7, "end": 11,
                     "number": 18.0}],
         "source_url": "https://tax.gov.xa/vat", "source_host": "tax.gov.xa", "source_tier": "primary",
         "inline_stamp": {"date": "2026-01-02", "kind": "verified"}, "link_kind": "markdown",
         "last_verified": "2026-01-02", "last_verified_origin": "inline", "file": "countries/xa/a.md",
         "source_reason": ""}
PRIOR = {"id": "xa:3:ab12cd34", "prior": "TOKENS_PRESENT", "matched_tokens": ["18%"], "strong_matched": ["18%"],
         "missing_tokens": [], "excerpts": ["… VAT 18 % …"], "fetch_note": "",
         "hits": [{"value": "18 %", "type": "pct", "found": True, "strong": True, "matched_text": "18 %",
                   "position": 120, "proximity_chars": None, "near_words": ["vat"], "score": 1.25, "occurrences": 2,
                   "excerpt_index": 0, "excerpt_start": 2, "excerpt_end": 6}],
         "context_words": ["vat"]}
PAGE = PageState(url="https://tax.gov.xa/vat", fetch_status="OK", http_status=200, content_kind="html", note="",
                 fetched_at="2026-01-03T00:00:00Z", text_hash="t1", raw_hash="r1", text=None, content_changed=True,
                 changed_at="2026-01-03T00:00:00Z", stable_since=None, diff="-17 %\n+18 %", change_fetch_id=7)

RECORDS = {
    DOCUMENTS: CorpusDocuments("/corpus", {"countries/xa/a.md": "h1", "countries/xa/b.md": "h2"}, "hh"),
    CLAIMS: ScopeClaims([CLAIM, {**CLAIM, "id": "xa:4:x", "line_no": 4, "inline_stamp": None, "last_verified": None, "values": []}],
                        ["countries/xa/a.md:9: a link without a URL"]),
    LINT: LintFindings([LintFinding("countries/xa/a.md", 5, "https://tax.gov.xa/", "18 % at the root", "xa")]),
    FETCHED_PAGES: ScopePages({"https://tax.gov.xa/vat": PAGE, "http://tax.gov.xa/old": PAGE}),
    PAGE_CHANGES: ScopeChanges([ChangedPage("https://tax.gov.xa/vat", "2026-01-03", "-17 %\n+18 %")],
                               [StaleClaim("xa:3:ab12cd34", "countries/xa/a.md", 3, "VAT is 18 %",
                                           "https://tax.gov.xa/vat", None, "2026-01-03")]),
    PRIORS: ScopePriors([PRIOR, {**PRIOR, "id": "xa:4:x", "hits": [], "prior": "SOURCE_UNAVAILABLE"}]),
}


def as_json(value: object) -> str:
    return json.dumps(value.to_json(), default=str)  # type: ignore[attr-defined]


def arrow_files(home: Path, asset: str) -> list[Path]:
    return sorted((home / "assets" / f"{asset}.store").glob("*.arrow"))


@pytest.mark.parametrize("step", list(RECORDS), ids=lambda s: s.asset)
def test_every_record_comes_back_as_it_was_written(tmp_path: Path, step) -> None:
    value = RECORDS[step]
    ScopeStore(tmp_path).write(step, {"xa": value, "shared/exit/regional": value})
    back, absent = ScopeStore(tmp_path).read(step, ["xa", "shared/exit/regional", "xz"])
    assert absent == ["xz"]
    assert as_json(back["xa"]) == as_json(value) and back["xa"] == value
    assert as_json(back["shared/exit/regional"]) == as_json(value)


def test_every_stored_step_declares_a_form_its_records_fit() -> None:
    assert set(STORED_STEPS) - {s.asset for s in RECORDS} == {"verdicts"}  # verdicts: JSON text (test_verdicts)
    for step in RECORDS:
        assert isinstance(step.form, pa.DataType), step.asset


def test_a_run_of_many_scopes_is_one_file_with_the_scope_a_column(tmp_path: Path) -> None:
    scopes = [f"x{i}" for i in range(30)]
    ScopeStore(tmp_path).write(CLAIMS, dict.fromkeys(scopes, RECORDS[CLAIMS]))
    [only] = arrow_files(tmp_path, "claims")
    with pa.memory_map(str(only)) as source:
        table = pa.ipc.open_file(source).read_all()
    assert table.column_names == ["scope", "record"] and table["scope"].to_pylist() == scopes
    # a column of data, not text: the claims' fields are Arrow columns any Arrow tool reads
    claims = pa.concat_arrays([c.field("claims") for c in table["record"].chunks]).flatten()
    assert claims.field("line_no").type == pa.int64() and claims.field("line_no").to_pylist()[:2] == [3, 4]


def test_a_later_run_of_some_scopes_supersedes_them_and_the_unused_file_goes(tmp_path: Path) -> None:
    store = ScopeStore(tmp_path)
    other = ScopeClaims([], ["a warning"])
    first = store.write(CLAIMS, {"xa": RECORDS[CLAIMS], "xb": RECORDS[CLAIMS]})
    second = store.write(CLAIMS, {"xa": other})
    assert arrow_files(tmp_path, "claims") == sorted([first, second])  # xb still lives in the first
    back, _ = ScopeStore(tmp_path).read(CLAIMS, ["xa", "xb"])
    assert back == {"xa": other, "xb": RECORDS[CLAIMS]}
    third = store.write(CLAIMS, {"xb": other})
    assert arrow_files(tmp_path, "claims") == sorted([second, third])  # no scope names the first any more


def test_a_store_reads_each_file_once_and_only_the_scopes_asked_for(tmp_path: Path) -> None:
    path = ScopeStore(tmp_path).write(PRIORS, {"xa": RECORDS[PRIORS], "xb": ScopePriors([])})
    store = ScopeStore(tmp_path)
    assert store.read(PRIORS, ["xb"]) == ({"xb": ScopePriors([])}, [])  # xa is not decoded
    path.unlink()  # the run holds it already: a second step's load does not read the file again
    assert store.read(PRIORS, ["xa"])[0]["xa"] == RECORDS[PRIORS]
    with pytest.raises(FileNotFoundError):
        ScopeStore(tmp_path).read(PRIORS, ["xa"])


def test_an_earlier_home_s_json_files_are_read_until_their_scope_is_stored_again(tmp_path: Path) -> None:
    write_json_file(CLAIMS, tmp_path, "xa", RECORDS[CLAIMS])
    write_json_file(CLAIMS, tmp_path, "shared/exit/regional", RECORDS[CLAIMS])
    assert CLAIMS.has_any(tmp_path, ["xa"]) and not CLAIMS.has_any(tmp_path, ["xb"])
    assert ScopeStore(tmp_path).read(CLAIMS, ["xa", "shared/exit/regional"])[0] == {
        "xa": RECORDS[CLAIMS], "shared/exit/regional": RECORDS[CLAIMS]}
    newer = ScopeClaims([], [])
    ScopeStore(tmp_path).write(CLAIMS, {"xa": newer})
    assert not CLAIMS.legacy_path(tmp_path, "xa").exists()  # nothing twice: the new file holds it
    assert ScopeStore(tmp_path).read(CLAIMS, ["xa", "shared/exit/regional"])[0] == {
        "xa": newer, "shared/exit/regional": RECORDS[CLAIMS]}


def test_a_damaged_file_is_one_line_naming_it_and_the_fix(tmp_path: Path) -> None:
    path = ScopeStore(tmp_path).write(PRIORS, {"xa": RECORDS[PRIORS]})
    path.write_bytes(path.read_bytes()[:40])  # cut short, as by a full disk
    with pytest.raises(StoredValueDamaged) as caught:
        PRIORS.read(tmp_path, "xa")
    message = str(caught.value)
    assert message.startswith(f"{path}: the stored value of priors is damaged (ArrowInvalid: ") and "\n" not in message
    assert message.endswith("; run `claims-pipeline audit` to rebuild it")


def test_a_file_of_another_form_is_damage_not_a_wrong_value(tmp_path: Path) -> None:
    path = ScopeStore(tmp_path).write(LINT, {"xa": RECORDS[LINT]})
    (tmp_path / "assets" / "priors.store").mkdir(parents=True)
    (tmp_path / "assets" / "priors.store" / path.name).write_bytes(path.read_bytes())
    (tmp_path / "assets" / "priors.store" / "index.json").write_text(json.dumps({"xa": path.name}))
    with pytest.raises(StoredValueDamaged, match="not the record's form"):
        PRIORS.read(tmp_path, "xa")


def test_a_record_that_does_not_fit_its_form_is_refused_when_written(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="claims: a record does not fit its stored form"):
        ScopeStore(tmp_path).write(CLAIMS, {"xa": ScopeClaims([{**CLAIM, "line_no": "three"}], [])})
    assert arrow_files(tmp_path, "claims") == []
