"""Evaluate the deterministic prior on WiCE (real Wikipedia claims + the text of the page each one cites).

Data: ../shared/data/wice beside the repository (dev split; Kamoi et al., "WiCE: Real-World Entailment for Claims
in Wikipedia", EMNLP 2023; annotations ODC-BY 1.0). Read in place, never copied into the repository.

For every claim with a salient figure (the corpus extractor's values: pct, money, statute, date) we build a
ClaimRecord, a PageState holding the evidence text, and run:
- ours: claims_pipeline.priors.build_prior (numbers compared as numbers, boundaries, date rules);
- original: the reference verifier's substring prior (its needles and its substring matching) re-implemented from its
  description, over the same values.
Printed: coverage (share of claims with a salient figure); on SUPPORTED claims the false TOKENS_ABSENT rate
and the rate of figures wrongly reported missing; on the sub-claims of non_supported_tokens_dev.jsonl the catch
rate (share of figures inside a non-supported span that the prior reports missing), next to the false-missing
rate of figures inside supported spans of the same sub-claims.

Usage: .venv/bin/python benchmarks/eval_wice.py [--data DIR]   (DIR defaults to ../shared/data/wice, relative to
the repository root, whatever the current folder)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from claims_pipeline.config.settings import FetchSettings, PriorSettings
from claims_pipeline.corpus.records import ClaimRecord, Value
from claims_pipeline.corpus.values import extract_values
from claims_pipeline.priors import TOKENS_ABSENT, PriorRules, build_prior
from claims_pipeline.store.records import PageState

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "wice"
DATA_FILES = ("claims_dev.jsonl", "non_supported_tokens_dev.jsonl")
URL = "https://evidence.invalid/page"  # never fetched: the evidence text is handed to the prior directly


# ---- the reference verifier's substring prior (its needles, its matching), re-implemented -------------------------
def _thousands_stripped(d: str) -> str | None:
    parts = re.split(r"[.,]", d)
    if len(parts) >= 2 and parts[0] and all(len(p) == 3 for p in parts[1:]):
        return "".join(parts)
    return None


def original_num_needles(raw: str) -> list[str]:
    out: set[str] = set()
    for g in re.findall(r"\d[\d.,]*\d|\d", raw):
        d = g.strip(".,")
        out.add(d)
        if "," in d:
            out.add(d.replace(",", "."))
        if "." in d:
            out.add(d.replace(".", ","))
        t = _thousands_stripped(d)
        if t:
            out.add(t)
    return sorted(out, key=len, reverse=True)


_MONTHS_RE = r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?|Sep(?:t|tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
_FULL = {m[:3].lower(): m for m in ["January", "February", "March", "April", "May", "June", "July", "August",
                                     "September", "October", "November", "December"]}
_NUM = {m: i + 1 for i, m in enumerate(_FULL)}


def original_date_needles(raw: str) -> list[str]:
    out: set[str] = set()
    iso = re.fullmatch(r"(\d{4})-\d{2}-\d{2}", raw)
    if iso:
        out |= {raw, iso.group(1)}
    for m in re.finditer(rf"({_MONTHS_RE})\.?\s(\d{{4}})", raw, re.I):
        mon = m.group(1)[:3].lower()
        out |= {m.group(2), mon.capitalize(), _FULL[mon], f"{m.group(2)}-{_NUM[mon]:02d}"}
    out |= set(re.findall(r"(?<!\d)(?:19|20)\d{2}(?!\d)", raw))
    return sorted(out)


def original_needles(v: Value) -> list[str]:
    return original_date_needles(v.raw) if v.type in ("date", "year") else original_num_needles(v.raw)


def original_prior(values: list[Value], text: str, rules: PriorRules) -> tuple[str, set[int]]:
    """(prior, indexes of values with no needle found) — case-insensitive substring search, no boundaries."""
    low = text.lower()
    found_any = strong_any = False
    missing: set[int] = set()
    for i, v in enumerate(values):
        hit = False
        for n in original_needles(v):
            if n.lower() in low:
                hit = found_any = True
                strong_any |= len(n.replace(" ", "")) >= 3
        if not hit:
            missing.add(i)
    if not found_any:
        if len(text.strip()) < rules.min_text_chars:
            return "SOURCE_UNAVAILABLE", missing
        return TOKENS_ABSENT, missing
    return ("TOKENS_PRESENT" if strong_any else "WEAK_MATCH"), missing


# ---- ours ------------------------------------------------------------------------------------------------------
def our_prior(claim_text: str, values: list[Value], text: str, rules: PriorRules) -> tuple[str, set[int]]:
    rec = ClaimRecord(
        id="wice:1:x", scope="wice", section="", line_no=1, claim_text=claim_text, values=tuple(values),
        source_url=URL, source_host="evidence.invalid", source_tier="primary-allowlist", inline_stamp=None,
        link_kind="markdown", last_verified=None, last_verified_origin="none",
    )
    page = PageState(URL, "OK", 200, "html", "", "", None, None, text, False, None, None, None)
    p = build_prior(rec, page, rules)
    missing_raws = set(p.missing_tokens)
    return p.prior, {i for i, v in enumerate(values) if v.raw.strip() in missing_raws}


# ---- data --------------------------------------------------------------------------------------------------------
def evidence_text(item: dict[str, Any]) -> str:
    lines = [re.sub(r"^\(meta data\)\s*", "", s) for s in item["evidence"]]
    return "\n".join(lines)


def salient(text: str) -> list[Value]:
    return [v for v in extract_values(text) if v.salient]


def token_spans(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for tok in tokens:
        i = text.find(tok, pos)
        if i < 0:
            spans.append((-1, -1))
            continue
        spans.append((i, i + len(tok)))
        pos = i + len(tok)
    return spans


Prior = Callable[[str, list[Value], str, PriorRules], tuple[str, set[int]]]


def run(data: Path) -> None:
    rules = PriorRules.of(PriorSettings(), FetchSettings())
    claims = [json.loads(line) for line in (data / "claims_dev.jsonl").read_text(encoding="utf-8").splitlines() if line]
    subs = [json.loads(line) for line in (data / "non_supported_tokens_dev.jsonl").read_text(encoding="utf-8").splitlines() if line]
    impls: dict[str, Prior] = {
        "ours": our_prior,
        "original": lambda c, v, t, s: original_prior(v, t, s),
    }

    with_fig = [(c, salient(c["claim"])) for c in claims]
    with_fig = [(c, v) for c, v in with_fig if v]
    labels = Counter(c["label"] for c in claims)
    print(f"WiCE dev: {len(claims)} claims {dict(labels)}")
    print(f"coverage: {len(with_fig)}/{len(claims)} = {len(with_fig) / len(claims):.1%} carry a salient figure "
          f"({dict(Counter(v.type for _, vs in with_fig for v in vs))})")
    supported = [(c, v) for c, v in with_fig if c["label"] == "supported"]

    header = f"{'':34s}{'ours':>16s}{'original':>16s}"
    print()
    print(header)
    res: dict[str, dict[str, Any]] = {}
    for name, impl in impls.items():
        t0 = time.perf_counter()
        priors = Counter()
        false_missing_vals = total_vals = 0
        for c, vals in supported:
            prior, missing = impl(c["claim"], vals, evidence_text(c), rules)
            priors[prior] += 1
            total_vals += len(vals)
            false_missing_vals += len(missing)
        # sub-claims: figures inside / outside non-supported spans
        caught = in_ns = fm_sup = in_sup = 0
        for s in subs:
            vals = salient(s["claim"])
            if not vals:
                continue
            spans = token_spans(s["claim"], s["claim_tokens"])
            ns = [sp for sp, flag in zip(spans, s["non_supported_spans"]) if flag and sp[0] >= 0]
            _, missing = impl(s["claim"], vals, evidence_text(s), rules)
            for i, v in enumerate(vals):
                inside = any(a < v.end and v.pos < b for a, b in ns)
                if inside:
                    in_ns += 1
                    caught += i in missing
                else:
                    in_sup += 1
                    fm_sup += i in missing
        res[name] = {
            "n_sup": len(supported),
            "priors": priors,
            "false_absent": priors[TOKENS_ABSENT],
            "fm": (false_missing_vals, total_vals),
            "catch": (caught, in_ns),
            "fm_sub": (fm_sup, in_sup),
            "secs": time.perf_counter() - t0,
        }

    def frac(a: int, b: int) -> str:
        return f"{a}/{b} = {a / b:.1%}" if b else "n/a"

    rows = [
        ("supported claims with a figure", lambda r: str(r["n_sup"])),
        ("false TOKENS_ABSENT (supported)", lambda r: frac(r["false_absent"], r["n_sup"])),
        ("TOKENS_PRESENT (supported)", lambda r: frac(r["priors"]["TOKENS_PRESENT"], r["n_sup"])),
        ("WEAK_MATCH (supported)", lambda r: frac(r["priors"]["WEAK_MATCH"], r["n_sup"])),
        ("figures reported missing (sup.)", lambda r: frac(*r["fm"])),
        ("catch: non-supported-span figs", lambda r: frac(*r["catch"])),
        ("false missing: supported-span", lambda r: frac(*r["fm_sub"])),
        ("wall time (s)", lambda r: f"{r['secs']:.2f}"),
    ]
    for label, fn in rows:
        print(f"{label:34s}{fn(res['ours']):>16s}{fn(res['original']):>16s}")
    print()
    print("ours priors on supported:", dict(res["ours"]["priors"]))
    print("original priors on supported:", dict(res["original"]["priors"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="folder of the WiCE dev files (default: %(default)s)")
    data = ap.parse_args().data
    missing = [name for name in DATA_FILES if not (data / name).is_file()]
    if missing:
        sys.exit(f"eval_wice: {', '.join(missing)} not found in {data}. The WiCE dev split is read in place from "
                 "../shared/data/wice beside the repository (see its README there); pass --data DIR to read it "
                 "elsewhere.")
    run(data)


if __name__ == "__main__":
    main()
