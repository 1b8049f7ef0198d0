"""Extraction quality on real markdown: recall and precision against the hand labels of the realkb development set.

    .venv/bin/python benchmarks/bench_realkb.py [--data ../shared/data/realkb-dev] [--kb NAME] [--explain]

Data: ../shared/data/realkb-dev beside the repository (eight public markdown knowledge bases, each under its own
licence; never copied here). Labels: benchmarks/realkb/labels/<kb>.jsonl, made by hand before any extraction ran
on those files (rules: benchmarks/realkb/README.md).

Each KB folder is extracted as `claims-pipeline init DIR` then `extract` would: a corpus rooted at the folder with
every other setting at its default, through the public `extract_corpus`. Matching:

- a labelled claim is *found* when an extracted claim of the same file sits on a line of the labelled sentence
  (sentence_start_line..sentence_end_line, or a figure line), cites the labelled URL (or one of its alt_urls) after
  normalisation (scheme and host case, percent-encoding, a trailing slash, the fragment), and carries at least one
  labelled figure among its values (numbers compared numerically; formatting is free, the number is not);
- recall = found / labelled claims with a URL; labelled claims whose citation has no URL (`url: null`) are shown
  on their own line (found: an extracted claim on their lines with one of their figures, whatever its URL);
- precision: among extracted claims on labelled lines (any line of a record's range, or a sampled line), the share
  that match a labelled claim; a claim on a non-claim line, or with another URL, or none of the figures, is a false
  positive. A second extracted claim matching the same label counts as matched and is reported as a duplicate.

Prints per KB, overall, per form and per figure kind; `--explain` lists misses and false positives by file:line
(their text goes to the terminal only); `--json` prints the figures as one JSON object. Always exits 0: it is a
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "realkb-dev"
DEFAULT_LABELS = REPO_ROOT / "benchmarks" / "realkb" / "labels"

sys.path.insert(0, str(REPO_ROOT))


# --- the one dependency on the extractor: claims of a folder as (file, line, url, values) --------------------------

@dataclass(frozen=True)
class Found:
    file: str  # relative to the KB folder
    line: int
    url: str
    raws: tuple[str, ...]  # the figures as written
    numbers: tuple[float, ...]  # their numeric values, when the extractor gives them


def extract_folder(kb: Path) -> list[Found]:
    """Every claim the project extracts from this folder, with the settings `init` writes (a corpus rooted at
    the folder; the scope rule does not change claims) and all else at its default."""
    from claims_pipeline.config.corpus_source import corpus_source
    from claims_pipeline.config.settings import settings_from_dict
    from claims_pipeline.corpus.extract import extract_corpus

    settings = settings_from_dict({"extraction": {"corpus_dir": str(kb)}}, base_dir=kb)
    out = []
    for c in extract_corpus(corpus_source(settings)).claims:
        values = getattr(c, "values", ()) or ()
        out.append(Found(
            file=c.file, line=int(c.line_no), url=c.source_url or "",
            raws=tuple(str(getattr(v, "raw", v)) for v in values),
            numbers=tuple(float(v.number) for v in values if getattr(v, "number", None) is not None),
        ))
    return out


# --- normalisation ------------------------------------------------------------------------------------------------

def norm_url(url: str | None) -> str:
    if not url:
        return ""
    parts = urlsplit(url.strip())
    path = unquote(parts.path)
    if path.endswith("/"):
        path = path[:-1]
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, unquote(parts.query), ""))


# A number as written: "609,350", "1.500", "5,3", "2.5", "0.573"; groups of three after a separator are thousands.
_NUM_RE = re.compile(r"\d+(?:[.,\u00a0\u202f ]\d{3})*(?:[.,]\d+)?")
_THOUSANDS_RE = re.compile(r"[1-9]\d{0,2}(?:[.,\u00a0\u202f ]\d{3})+")
_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "twelve": 12, "half": 0.5, "third": 1 / 3, "quarter": 0.25,
    "ein": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "zwölf": 12, "hälfte": 0.5,
    "un": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "moitié": 0.5, "tiers": 1 / 3,
    "een": 1, "twee": 2, "drie": 3, "vier_nl": 4, "vijf": 5, "zes": 6, "zeven": 7, "helft": 0.5,
}


def numbers_in(text: str) -> list[float]:
    out = []
    for tok in _NUM_RE.findall(text):
        if _THOUSANDS_RE.fullmatch(tok):
            out.append(float(re.sub(r"[.,\u00a0\u202f ]", "", tok)))
        else:
            out.append(float(tok.replace(",", ".").replace("\u00a0", "").replace("\u202f", "").replace(" ", "")))
    return out


def word_numbers(text: str) -> list[float]:
    return [_WORDS[w] for w in re.findall(r"[^\W\d_]+", text.lower()) if w in _WORDS]


def figure_matches(label: str, found: Found) -> bool:
    """Lenient on formatting, strict on the number: some number of the labelled figure is a number of one of the
    claim's values (as written or as the extractor read it); a figure in words matches its number or its word."""
    want = numbers_in(label) or word_numbers(label)
    if not want:
        return any(label.lower() in raw.lower() for raw in found.raws)
    have = list(found.numbers)
    for raw in found.raws:
        have += numbers_in(raw) + word_numbers(raw)
    return any(abs(w - h) <= 1e-9 * max(1.0, abs(w)) for w in want for h in have)


# --- labels -------------------------------------------------------------------------------------------------------

@dataclass
class Record:
    kb: str
    file: str
    claim: bool
    start: int
    end: int
    sampled: list[int]
    figure_lines: list[int] = field(default_factory=list)
    figures: list[dict] = field(default_factory=list)
    urls: set[str] = field(default_factory=set)  # normalised; empty: a citation with no URL
    forms: list[str] = field(default_factory=list)
    category: str = ""
    found_by: list[Found] = field(default_factory=list)

    @property
    def has_url(self) -> bool:
        return bool(self.urls)

    def covers(self, line: int) -> bool:
        return self.start <= line <= self.end or line in self.figure_lines

    def where(self) -> str:
        span = f"{self.start}" if self.start == self.end else f"{self.start}-{self.end}"
        return f"{self.kb}/{self.file}:{span}"


def load_labels(path: Path) -> list[Record]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{n}: not JSON ({exc})") from None
        urls = {norm_url(u) for u in [r.get("url"), *r.get("alt_urls", [])] if u}
        out.append(Record(kb=r["kb"], file=r["file"], claim=bool(r["claim"]), start=int(r["sentence_start_line"]),
                          end=int(r["sentence_end_line"]), sampled=list(r["sampled_lines"]),
                          figure_lines=list(r.get("figure_lines", [])), figures=list(r.get("figures", [])),
                          urls=urls, forms=list(r.get("form", [])), category=r.get("category", "")))
    return out


# --- scoring ------------------------------------------------------------------------------------------------------

@dataclass
class Score:
    labelled: int = 0
    found: int = 0
    in_scope: int = 0
    matched: int = 0
    duplicates: int = 0
    cite_labelled: int = 0
    cite_found: int = 0
    seconds: float = 0.0
    extracted: int = 0
    by_form: Counter = field(default_factory=Counter)
    by_form_found: Counter = field(default_factory=Counter)
    by_kind: Counter = field(default_factory=Counter)
    by_kind_found: Counter = field(default_factory=Counter)
    fp_why: Counter = field(default_factory=Counter)
    misses: list[Record] = field(default_factory=list)
    false_positives: list[tuple[Found, str]] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name in ("labelled", "found", "in_scope", "matched", "duplicates", "cite_labelled", "cite_found",
                     "seconds", "extracted"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("by_form", "by_form_found", "by_kind", "by_kind_found", "fp_why"):
            getattr(self, name).update(getattr(other, name))


def matches(rec: Record, c: Found, *, any_url: bool = False) -> bool:
    return (rec.claim and rec.file == c.file and rec.covers(c.line)
            and (any_url or norm_url(c.url) in rec.urls)
            and any(figure_matches(f["value"], c) for f in rec.figures))


def score_kb(records: list[Record], claims: Iterable[Found]) -> Score:
    s = Score()
    by_file: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_file[r.file].append(r)
    claims = list(claims)
    s.extracted = len(claims)
    for c in claims:
        recs = by_file.get(c.file, [])
        scope = [r for r in recs if r.covers(c.line) or c.line in r.sampled]
        if not scope:
            continue
        hits = [r for r in scope if r.has_url and matches(r, c)]
        if hits:
            s.in_scope += 1
            s.matched += 1
            for r in hits:
                if r.found_by:
                    s.duplicates += 1
                r.found_by.append(c)
            continue
        if any(not r.has_url and matches(r, c, any_url=True) for r in scope):
            continue  # a claim for a citation with no URL: outside the headline figures, counted below
        s.in_scope += 1
        why = next((f"not a claim: {r.category}" for r in scope if not r.claim and (r.start <= c.line <= r.end or c.line in r.sampled)), None)
        if why is None:
            on_claim = [r for r in scope if r.claim and r.covers(c.line)]
            if any(norm_url(c.url) in r.urls for r in on_claim):
                why = "claim line, right URL, no labelled figure"
            elif on_claim:
                why = "claim line, another URL"
            else:
                why = "sampled line outside the labelled sentences"
        s.fp_why[why] += 1
        s.false_positives.append((c, why))
    for r in records:
        if not r.claim:
            continue
        kinds = {f["kind"] for f in r.figures}
        if not r.has_url:
            s.cite_labelled += 1
            s.cite_found += any(matches(r, c, any_url=True) for c in claims)
            continue
        s.labelled += 1
        s.by_form.update(set(r.forms))
        s.by_kind.update(kinds)
        if r.found_by:
            s.found += 1
            s.by_form_found.update(set(r.forms))
            s.by_kind_found.update(kinds)
        else:
            s.misses.append(r)
    return s


def pct(a: int, b: int) -> str:
    return f"{a}/{b} {100 * a / b:5.1f} %" if b else f"{a}/{b}     –  "


def print_tables(scores: dict[str, Score], total: Score) -> None:
    head = f"{'knowledge base':<27} {'recall':>17} {'precision':>17} {'dup':>4} {'cite, no URL':>13} {'claims':>7} {'time':>7}"
    print(head)
    print("-" * len(head))
    for name, s in [*scores.items(), ("overall", total)]:
        if name == "overall":
            print("-" * len(head))
        print(f"{name:<27} {pct(s.found, s.labelled):>17} {pct(s.matched, s.in_scope):>17} {s.duplicates:>4} "
              f"{f'{s.cite_found}/{s.cite_labelled}':>13} {s.extracted:>7} {s.seconds:>6.2f}s")
    print("\nrecall by form (a claim counts under each of its forms)")
    for form, n in sorted(total.by_form.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {form:<20} {pct(total.by_form_found[form], n):>17}")
    print("\nrecall by figure kind (a claim counts under each kind of its figures)")
    for kind, n in sorted(total.by_kind.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {kind:<20} {pct(total.by_kind_found[kind], n):>17}")
    if total.fp_why:
        print("\nfalse positives by cause")
        for why, n in total.fp_why.most_common():
            print(f"  {n:>4}  {why}")


def explain(scores: dict[str, Score], data: Path) -> None:
    def text(kb: str, file: str, line: int) -> str:
        try:
            return (data / kb / file).read_text(encoding="utf-8", errors="replace").split("\n")[line - 1].strip()[:160]
        except (OSError, IndexError):
            return ""
    for name, s in scores.items():
        for r in s.misses:
            figs = ", ".join(f"{f['value']} ({f['kind']})" for f in r.figures)
            print(f"MISS {r.where()} [{'+'.join(r.forms)}] {figs} -> {sorted(r.urls)[0]}")
            print(f"     | {text(name, r.file, r.figure_lines[0] if r.figure_lines else r.start)}")
        for c, why in s.false_positives:
            print(f"FP   {name}/{c.file}:{c.line} ({why}) values {list(c.raws)} -> {c.url}")
            print(f"     | {text(name, c.file, c.line)}")


def as_json(scores: dict[str, Score], total: Score, imports: float) -> dict:
    def one(s: Score) -> dict:
        return {"recall": [s.found, s.labelled], "precision": [s.matched, s.in_scope], "duplicates": s.duplicates,
                "citations_without_url": [s.cite_found, s.cite_labelled], "extracted": s.extracted,
                "seconds": round(s.seconds, 3)}
    return {"knowledge_bases": {name: one(s) for name, s in scores.items()}, "overall": one(total),
            "recall_by_form": {k: [total.by_form_found[k], n] for k, n in total.by_form.items()},
            "recall_by_kind": {k: [total.by_kind_found[k], n] for k, n in total.by_kind.items()},
            "false_positives_by_cause": dict(total.fp_why), "import_seconds": round(imports, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the realkb-dev folder (default: %(default)s)")
    ap.add_argument("--labels", type=Path, default=DEFAULT_LABELS, help="the labels folder (default: %(default)s)")
    ap.add_argument("--kb", action="append", help="only this knowledge base (repeatable)")
    ap.add_argument("--explain", action="store_true", help="list misses and false positives with file:line")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object instead of tables")
    args = ap.parse_args()
    if not args.data.is_dir():
        print(f"{args.data}: no such folder: the realkb development set is kept beside the repository "
              "(../shared/data/realkb-dev); pass --data DIR")
        return 0
    label_files = sorted(args.labels.glob("*.jsonl"))
    if args.kb:
        label_files = [p for p in label_files if p.stem in args.kb]
    if not label_files:
        print(f"no labels under {args.labels}" + (f" for {', '.join(args.kb)}" if args.kb else ""))
        return 0
    start = time.perf_counter()
    # the extractor's imports are timed apart from the extraction itself
    import claims_pipeline.config.corpus_source  # noqa: F401
    import claims_pipeline.config.settings  # noqa: F401
    import claims_pipeline.corpus.extract  # noqa: F401
    imports = time.perf_counter() - start
    scores: dict[str, Score] = {}
    total = Score()
    for path in label_files:
        kb = args.data / path.stem
        records = load_labels(path)
        if not kb.is_dir():
            print(f"{path.stem}: no folder {kb}; skipped")
            continue
        start = time.perf_counter()
        try:
            claims = extract_folder(kb)
        except Exception as exc:  # a benchmark reports a failing extractor, it does not stop on it
            print(f"{path.stem}: extraction failed: {exc!r}")
            continue
        seconds = time.perf_counter() - start
        s = score_kb(records, claims)
        s.seconds = seconds
        scores[path.stem] = s
        total.add(s)
    if scores and args.json:
        print(json.dumps(as_json(scores, total, imports), indent=1, ensure_ascii=False))
    elif scores:
        print_tables(scores, total)
        print(f"\nextraction time: {total.seconds:.2f} s for {len(scores)} knowledge bases (importing the extractor: "
              f"{imports:.2f} s, not counted)")
        if args.explain:
            print()
            explain(scores, args.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
