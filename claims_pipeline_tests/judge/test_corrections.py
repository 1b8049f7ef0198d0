"""corrections.patch: suggested, never applied; a real `git apply --check` (and apply) on a copy of the demo corpus."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from claims_pipeline.judge.answer_checks import verify
from claims_pipeline.judge.corrections import rewritten_figure, suggest_corrections, write_corrections
from claims_pipeline.judge.model import DraftVerdict, JudgeItem, Verdict
from claims_pipeline_tests.time_scale import scaled

DEMO = Path(__file__).resolve().parents[2] / "claims_pipeline_demo" / "corpus"
XA = "countries/xa/playbook.md"
PAGE = ("Revenue Service - transfer duty\nA registration fee of 1 300 € per deed applies since 1 January 2026.\n"
        "The national median price was €192,500 in the last quarterly index.\nThe licence fee is now €950 per application.\n")


def _line_no(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _verdict(corpus: Path, file: str, needle: str, figure: str, ftype: str, number: float, quote: str,
             verdict: str = "MISMATCH") -> Verdict:
    text = (corpus / file).read_text(encoding="utf-8")
    n = _line_no(text, needle)
    line = text.splitlines()[n - 1]
    item = JudgeItem(id=f"countries/xa:{n}:x", scope="countries/xa", file=file, line_no=n,
                     source_url="http://www.tax.gov.xa/property/transfer-duty.html", claim_text=line, line_text=line,
                     values=[{"type": ftype, "raw": figure, "number": number}], page_text=PAGE)
    draft = DraftVerdict(verdict=verdict, quote=quote, claimed=figure, verification_class="corrected")
    v = verify(draft, item)
    assert v.verdict == verdict, v.downgrades
    return v


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=scaled(60))


def _repo_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "corpus"
    shutil.copytree(DEMO, copy)
    assert _git(copy, "init", "-q").returncode == 0
    return copy


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and ".git" not in p.parts:
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def test_patch_applies_with_git_and_changes_only_the_figures(tmp_path: Path):
    corpus = _repo_copy(tmp_path)
    verdicts = [
        _verdict(corpus, XA, "Notarial deed", "€1,250", "money", 1250, "A registration fee of 1 300 € per deed applies"),
        _verdict(corpus, XA, "House prices", "€185,000", "money", 185000,
                 "The national median price was €192,500 in the last quarterly index", verdict="STALE"),
    ]
    before = _digest(corpus)
    out = tmp_path / "out"
    result = write_corrections(verdicts, corpus, out)
    assert _digest(corpus) == before  # the corpus is never written
    assert result.patch is not None and [c.figure_after for c in result.corrections] == ["€1,300", "€192,500"]
    patch = result.patch.read_text(encoding="utf-8")
    assert "1 300 € per deed" in patch and "http://www.tax.gov.xa/property/transfer-duty.html" in patch
    check = _git(corpus, "apply", "--check", str(result.patch))
    assert check.returncode == 0, check.stderr
    assert _git(corpus, "apply", str(result.patch)).returncode == 0
    old_lines = (DEMO / XA).read_text(encoding="utf-8").splitlines()
    new_lines = (corpus / XA).read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines) if a != b]
    assert len(old_lines) == len(new_lines) and len(changed) == 2
    for a, b in changed:  # only the figure moved: no date stamped, nothing else rewritten
        assert b in (a.replace("€1,250", "€1,300"), a.replace("€185,000", "€192,500"))


def test_no_trailing_newline_and_crlf_files_still_apply(tmp_path: Path):
    corpus = tmp_path / "c"
    (corpus / "countries" / "xa").mkdir(parents=True)
    (corpus / "countries" / "xa" / "last.md").write_bytes(b"# T\n\n- fee **\xe2\x82\xac1,250** per deed")
    (corpus / "countries" / "xa" / "crlf.md").write_bytes(b"# T\r\n\r\n- fee **\xe2\x82\xac1,250** per deed\r\n- other\r\n")
    assert _git(corpus, "init", "-q").returncode == 0
    vs = [_verdict(corpus, f"countries/xa/{name}", "fee", "€1,250", "money", 1250, "A registration fee of 1 300 € per deed")
          for name in ("last.md", "crlf.md")]
    result = write_corrections(vs, corpus, tmp_path / "out")
    assert len(result.corrections) == 2
    check = _git(corpus, "apply", "--check", str(result.patch))
    assert check.returncode == 0, check.stderr
    assert _git(corpus, "apply", str(result.patch)).returncode == 0
    assert (corpus / "countries/xa/last.md").read_bytes().endswith(b"\xe2\x82\xac1,300** per deed")
    assert b"\xe2\x82\xac1,300** per deed\r\n- other\r\n" in (corpus / "countries/xa/crlf.md").read_bytes()


def test_only_checked_mismatches_become_corrections(tmp_path: Path):
    corpus = tmp_path / "c"
    shutil.copytree(DEMO, corpus)
    good = _verdict(corpus, XA, "Notarial deed", "€1,250", "money", 1250, "A registration fee of 1 300 € per deed applies")
    downgraded = good.model_copy(update={"verdict": "INDETERMINATE", "id": "other"})
    not_on_line = good.model_copy(update={"id": "moved", "figure_claimed": "€9,999"})
    outside = good.model_copy(update={"id": "escape", "file": "../../etc/passwd"})
    unchecked = good.model_copy(update={"id": "unchecked", "checks_run": []})
    done, skipped = suggest_corrections([good, downgraded, not_on_line, outside, unchecked], corpus)
    assert [c.claim_id for c in done] == [good.id]
    reasons = {s.claim_id: s.reason for s in skipped}
    assert set(reasons) == {"moved", "escape", "unchecked"}  # INDETERMINATE is not correctable at all
    assert "no longer carries" in reasons["moved"] and "not a file of the corpus" in reasons["escape"]


def test_nothing_to_suggest_writes_a_patch_that_says_so(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "corrections.patch").write_text("stale from an earlier run")
    result = write_corrections([], DEMO, out)
    text = (out / "corrections.patch").read_text()
    assert result.patch == out / "corrections.patch" and "stale" not in text
    assert text.splitlines()[0].startswith("# no corrections")
    assert all(line.startswith("#") for line in text.splitlines() if line)  # nothing a `git apply` would change
    assert '"corrections": []' in result.listing.read_text()


@pytest.mark.parametrize("claimed, page, want", [
    ("€1,250", "1 300 €", "€1,300"), ("4.5%", "4,75 %", "4.75%"), ("€1.3M", "1,450,000", "€1.45M"),
    ("€900", "€1,300", "€1,300"), ("6,32 %", "6.5%", "6,5 %"), ("77 700 €", "80,000", "80 000 €"),
    ("2026-02-01", "1 January 2026", "2026-01-01"), ("12%", "15 percent", "15%"),
])
def test_the_page_figure_is_written_in_the_claims_format(claimed: str, page: str, want: str):
    assert rewritten_figure(claimed, page) == want
