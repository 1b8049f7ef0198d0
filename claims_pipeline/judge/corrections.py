"""Suggested corrections, never applied: a unified diff a person may apply with `git apply`, next to the report.

For each MISMATCH or STALE that shipped (its quote checked verbatim, the page's different figure found in it),
the claim's line is shown before and after: the claim's figure replaced by the page's, written in the claim's
own format ("€1,250" with the page's "1 300 €" becomes "€1,300"). The corpus is only read, never written, and
nothing else on the line changes (no date is stamped: a person who applies it verifies it). Paths in the patch
are relative to the corpus folder: run `git apply corrections.patch` there (or `git apply --directory=<folder>`
from the repository root).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from claims_pipeline.common.text_safety import TERMINAL_UNSAFE_RE, json_escaped, replaced
from claims_pipeline.corpus.reading import DEFAULT_MAX_FILE_BYTES, read_regular
from claims_pipeline.judge.model import Verdict
from claims_pipeline.priors.dates import parse_claim_date
from claims_pipeline.priors.numbers import NumberToken, parse_claim_number, tokenize_numbers

CORRECTABLE = ("MISMATCH", "STALE")
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NUM_PART_RE = re.compile(r"\d(?:[\d.,\u00a0\u2009\u202f'’ ]*\d)?")


@dataclass(frozen=True)
class Correction:
    claim_id: str
    file: str  # relative to the corpus folder
    line_no: int
    verdict: str
    figure_before: str
    figure_after: str
    before: str  # the whole line, without its line break
    after: str
    quote: str
    source_url: str


@dataclass(frozen=True)
class Skipped:
    claim_id: str
    file: str
    line_no: int
    reason: str


# ---- the page's figure written the claim's way ---------------------------------------------------------------

def _main_token(raw: str) -> NumberToken | None:
    tokens = [t for t in tokenize_numbers(raw) if t.values]
    return max(tokens, key=lambda t: (t.magnitude, len(t.text))) if tokens else None


def _separators(num: str, decimals: int) -> tuple[str | None, str]:
    """(grouping separator or None, decimal separator) as a number of the claim writes them."""
    seps = [c for c in num if not c.isdigit()]
    if not seps:
        return None, "."
    if decimals == 0:
        return seps[0], "."
    return (seps[0] if len(seps) > 1 and seps[0] != seps[-1] else None), seps[-1]


def _format(x: float, decimals: int, group: str | None, dec_sep: str) -> str:
    s = f"{x:,.{decimals}f}"
    int_part, _, frac = s.partition(".")
    int_part = int_part.replace(",", group if group is not None else "")
    return int_part + (dec_sep + frac if frac else "")


def _decimals_for(x: float, at_least: int) -> int:
    for d in range(at_least, 7):
        if math.isclose(round(x, d), x, rel_tol=0, abs_tol=1e-9 * max(1.0, abs(x))):
            return d
    return 6


def rewritten_figure(claimed: str, on_page: str) -> str | None:
    """The page's figure in the claim's format: "€1,250" + "1 300 €" → "€1,300", "4.5%" + "4,75 %" → "4.75%",
    "€1.3M" + "1,450,000" → "€1.45M"; an ISO date stays ISO. None when the two cannot be read alike."""
    claim_date, page_date = parse_claim_date(claimed), parse_claim_date(on_page)
    if claim_date is not None:
        if page_date is None:
            return None
        y, m, d = page_date
        if _ISO_RE.match(claimed.strip()) and d is not None:
            return f"{y:04d}-{m:02d}-{d:02d}"
        return on_page.strip()
    tok = _main_token(claimed)
    page_tok = _main_token(on_page)
    if tok is None or page_tok is None:
        return None
    kind = tok.unit or ("pct" if "%" in claimed else "money" if page_tok.unit == "money" else "")
    claim_num = parse_claim_number(claimed, kind)
    page_num = parse_claim_number(on_page, kind)
    if claim_num is None or page_num is None:
        return None
    part = _NUM_PART_RE.match(claimed, tok.start)
    if part is None:
        return None
    # the claim's reading of its own number: which separator groups, which one marks decimals
    idx = next((i for i, v in enumerate(tok.values) if math.isclose(v, claim_num.value, rel_tol=1e-9)), 0)
    group, dec_sep = _separators(part.group(0), tok.decimals[idx])
    mantissa = page_num.value / tok.magnitude
    page_decimals = max(0, round(-math.log10(2 * page_num.tolerance / tok.magnitude))) if page_num.tolerance else 0
    if group is None and dec_sep == ".":
        group = ","  # a claim too small to show its grouping ("€900"): the corpus's English default
    text = _format(mantissa, min(_decimals_for(mantissa, 0), page_decimals), group, dec_sep)
    return claimed[: part.start()] + text + claimed[part.end():]


# ---- the corrections --------------------------------------------------------------------------------------------

def _read_lines(corpus_dir: Path, file: str, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[str] | str:
    """The file's lines (line breaks kept), or why it cannot be read: read bounded, from a regular file only
    (a FIFO or a link to /dev/zero swapped in since the audit is refused, not waited on)."""
    root = corpus_dir.resolve()
    path = (root / file).resolve()
    if not file or root not in path.parents:
        return f"{file!r} is not a file of the corpus folder"
    try:
        return read_regular(path, max_bytes).decode("utf-8").splitlines(keepends=True)
    except FileNotFoundError:
        return "the file is no longer in the corpus"
    except OSError as exc:
        return f"the file cannot be read ({exc.strerror or type(exc).__name__})"
    except UnicodeDecodeError as exc:
        return f"the file cannot be read as UTF-8 text ({type(exc).__name__})"


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def suggest_corrections(verdicts: Iterable[Verdict], corpus_dir: Path,
                        max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> tuple[list[Correction], list[Skipped]]:
    """Corrections for the MISMATCH/STALE verdicts whose line still carries the claim's figure exactly once."""
    corpus_dir = Path(corpus_dir)
    done: list[Correction] = []
    skipped: list[Skipped] = []
    files: dict[str, list[str] | str] = {}
    current: dict[tuple[str, int], str] = {}  # the line as the corrections so far leave it
    for v in sorted(verdicts, key=lambda v: (v.file, v.line_no, v.id)):
        if v.verdict not in CORRECTABLE:
            continue
        def skip(reason: str, v: Verdict = v) -> None:
            skipped.append(Skipped(v.id, v.file, v.line_no, reason))
        if not (v.quote and v.figure_claimed and v.figure_on_page and "quote_verbatim" in v.checks_run
                and not any(d.check in ("quote_verbatim", "figure_in_quote") for d in v.downgrades)):
            skip("no checked quote with the page's figure")
            continue
        if TERMINAL_UNSAFE_RE.search(v.file) or any(c in v.file for c in "\t\n\"\\"):
            # a diff header names the file raw: an escape there is obeyed by `cat corrections.patch`, a line
            # break writes lines of its own into the patch
            skip("the file name holds control, bidi or quoting characters: no patch line can name it safely")
            continue
        if v.file not in files:
            files[v.file] = _read_lines(corpus_dir, v.file, max_bytes)
        lines = files[v.file]
        if isinstance(lines, str):
            skip(lines)
            continue
        if not 1 <= v.line_no <= len(lines):
            skip(f"line {v.line_no} is not in the file ({len(lines)} lines)")
            continue
        line = current.get((v.file, v.line_no), _body(lines[v.line_no - 1]))
        n = line.count(v.figure_claimed)
        if n != 1:
            skip(f"the line carries {v.figure_claimed!r} {n} times: the figure to replace is not unique" if n
                 else f"the line no longer carries {v.figure_claimed!r}")
            continue
        new_figure = rewritten_figure(v.figure_claimed, v.figure_on_page)
        if not new_figure or new_figure == v.figure_claimed or any(c in new_figure for c in "\r\n"):
            skip(f"the page's {v.figure_on_page!r} cannot be written in the claim's format")
            continue
        after = line.replace(v.figure_claimed, new_figure, 1)
        current[(v.file, v.line_no)] = after
        done.append(Correction(v.id, v.file, v.line_no, v.verdict, v.figure_claimed, new_figure,
                               _body(lines[v.line_no - 1]), after, v.quote, v.source_url))
    return done, skipped


def _comment(text: str, limit: int = 300) -> str:
    """One header line: hostile model/page text kept to one line with no control characters."""
    flat = replaced(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_patch(corrections: Sequence[Correction], corpus_dir: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """A git-style unified diff of the corrections (one file section per corpus file), after a header that
    says, for each, the figure before and after, the quote and the source."""
    corpus_dir = Path(corpus_dir)
    header = ["# Suggested corrections from the claim verdicts (claims_pipeline): never applied by the pipeline.",
              "# Read each quote at its source first. To apply, from the corpus folder: git apply corrections.patch",
              "#"]
    if not corrections:
        header = ["# no corrections: no MISMATCH or STALE verdict of this run passed every check (claims_pipeline).",
                  "# This file is empty on purpose; corrections.json lists any verdict left without a correction."]
    for c in corrections:
        header += [f"# {_comment(c.file, 200)}:{c.line_no}  {c.verdict}  {_comment(c.figure_before, 60)} -> "
                   f"{_comment(c.figure_after, 60)}",
                   f"#   the page says: \"{_comment(c.quote)}\"",
                   f"#   source: {_comment(c.source_url)}"]
    out = ["\n".join(header) + "\n\n"]
    by_file: dict[str, list[Correction]] = {}
    for c in corrections:
        by_file.setdefault(c.file, []).append(c)
    for file in sorted(by_file):
        try:
            old = read_regular((corpus_dir / file).resolve(), max_bytes).decode("utf-8").splitlines(keepends=True)
        except (OSError, UnicodeDecodeError):  # changed since its corrections were made: no diff for it
            out.append(f"# {_comment(file, 200)}: changed since it was read; no diff\n")
            continue
        new = list(old)
        for c in by_file[file]:
            line = new[c.line_no - 1]
            new[c.line_no - 1] = c.after + line[len(_body(line)):]
        diff = list(difflib.unified_diff(old, new, f"a/{file}", f"b/{file}", n=3))
        out.append(f"diff --git a/{file} b/{file}\n")
        for d in diff:
            out.append(d if d.endswith("\n") else d + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass(frozen=True)
class CorrectionsResult:
    corrections: list[Correction]
    skipped: list[Skipped]
    patch: Path  # always written; its header says "no corrections" when there is nothing to suggest
    listing: Path


def write_corrections(verdicts: Iterable[Verdict], corpus_dir: Path, out_dir: Path, *,
                      max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> CorrectionsResult:
    """corrections.patch (always; a header saying "no corrections" when there is nothing to suggest, which
    `git apply` accepts as an empty patch) and corrections.json (the corrections and the MISMATCH/STALE verdicts
    left without one, with why) in out_dir. The corpus is only read."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    corrections, skipped = suggest_corrections(verdicts, corpus_dir, max_bytes)
    patch_path = out_dir / "corrections.patch"
    patch_path.write_text(render_patch(corrections, corpus_dir, max_bytes), encoding="utf-8", newline="")
    listing = out_dir / "corrections.json"
    doc = {"corrections": [asdict(c) for c in corrections], "skipped": [asdict(s) for s in skipped],
           "applied": False}
    listing.write_text(json_escaped(json.dumps(doc, indent=2, ensure_ascii=False)), encoding="utf-8")
    return CorrectionsResult(corrections, skipped, patch_path, listing)
