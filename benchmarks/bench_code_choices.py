"""The figures behind small choices in the code, each against the alternative it was chosen over, in one run.

    .venv/bin/python benchmarks/bench_code_choices.py [--repeat R]

The comments at these places state the reason ("a case-blind scan is several times slower"); the figures are
here and in benchmarks/README.md ("Figures behind choices in the code"), where a re-run updates them:

  citation scan      corpus/extract.py _SCHEME_TO_EOL_RE ("://" to end of line) ÷ a case-blind "https?://" scan
  pointer verbs      corpus/extract.py _POINTER_WORD_RE (led by a plain set) ÷ the same words under re.I alone
  literal search     corpus/extract.py _COMMENT_OPEN_RE.search ÷ `"<!--" in text`, on non-ASCII text without one
                     (BMP text, with '€' and '—'; Latin-1 text, accents only)
  fold check         priors/page_index.search_form's regex check ÷ str.translate, on a page with nothing to fold
  glued month        priors/dates.py _GLUED_MONTH_RE (led by a capital) ÷ the same match led by a lookbehind
  statute compile    priors/matching.py: a digits-only statute pattern compiled without re.I ÷ with re.I
  Hit.to_dict        priors/build.py Hit.to_dict (written out) ÷ a getattr loop ÷ dataclasses.asdict
  TLS context        web/transport.py tls_context: ms to build one (why it is built once per process)
  link labels        corpus/links.py: a label that holds no '[' ÷ one that may, on a line of n '[' (n, 2n: growth)
  figure runs        corpus/values.py: a figure run bounded to 40 characters ÷ unbounded, on '1,2,3,…' (n, 2n)

No network, no data files: the texts are generated (corpus-like lines with accents and euro signs).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import ssl
import time
from collections.abc import Callable

from claims_pipeline.corpus import extract, links, values
from claims_pipeline.priors import dates, matching, page_index
from claims_pipeline.priors.build import Hit

LINE = ("- Le taux réduit de TVA est de 5,5 % (Loi n° 2024-1039, art. 12) depuis le 1er janvier 2025 ; "
        "voir [impots.gouv.fr](https://www.impots.gouv.fr/taux) — €300 000 plafond, vérifié\n")
PROSE = "Die Regierung hat das Gesetz über die Förderung beschlossen, und die Kommission prüft die Umsetzung.\n"


def corpus_text(mb: float) -> str:
    """Corpus-like markdown: one citing line in ten, the rest prose; non-ASCII throughout."""
    block = LINE + PROSE * 9
    return block * int(mb * 1_000_000 / len(block.encode()))


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ratio(label: str, ours: Callable[[], object], other: Callable[[], object], repeat: int, note: str = "") -> None:
    a, b = best(ours, repeat), best(other, repeat)
    print(f"{label:18s} ours {a * 1000:9.2f} ms   other {b * 1000:9.2f} ms   other ÷ ours {b / a:6.1f}×  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    repeat = ap.parse_args().repeat
    text = corpus_text(5.0)
    print(f"text: {len(text.encode()) / 1e6:.1f} MB, best of {repeat}")

    case_blind = re.compile(r"https?://[^\n]*", re.I)
    ratio("citation scan", lambda: extract._SCHEME_TO_EOL_RE.findall(text), lambda: case_blind.findall(text), repeat)

    pointer_re_i = re.compile(r"verify|confirm|check", re.I)
    ratio("pointer verbs", lambda: extract._POINTER_WORD_RE.findall(text), lambda: pointer_re_i.findall(text), repeat)

    latin1 = text.replace("€", "EUR").replace("—", "-").replace("’", "'")
    for label, sample in (("literal, BMP", text), ("literal, Latin-1", latin1)):
        ratio(label, lambda s=sample: extract._COMMENT_OPEN_RE.search(s), lambda s=sample: "<!--" in s, repeat,
              "(other: str.__contains__)")

    page = PROSE * 2000
    ratio("fold check", lambda: page_index._FOLDED_RE.search(page), lambda: page.translate(page_index._FOLD), repeat)

    glued_lookbehind = re.compile(r"(?<=[a-z\u00df-\u00ff])[A-Z\u00c0-\u00de][a-z\u00df-\u00ff]{2,9}(?=\.?\s+\d)")
    assert [m.span() for m in dates._GLUED_MONTH_RE.finditer(text)] == [m.span() for m in glued_lookbehind.finditer(text)]
    ratio("glued month", lambda: dates._GLUED_MONTH_RE.findall(text), lambda: glued_lookbehind.findall(text), repeat)

    body = matching._statute_pattern("2024-1039").pattern

    compiled = iter(range(10**9))

    def compile_many(flags: int) -> None:
        for _ in range(300):  # a pattern never compiled before: re's own cache would hide the compile
            re.compile(f"{body}(?#{next(compiled)})", flags)

    ratio("statute compile", lambda: compile_many(0), lambda: compile_many(re.I), repeat, "(300 patterns)")

    hits = [Hit(value="5,5 %", type="pct", found=True, strong=True, matched_text="5,5 %", position=i,
                proximity_chars=12, near_words=["taux", "TVA"], score=0.9, occurrences=2) for i in range(20_000)]
    names = [f.name for f in dataclasses.fields(Hit)]
    ratio("Hit.to_dict", lambda: [h.to_dict() for h in hits],
          lambda: [{n: getattr(h, n) for n in names} for h in hits], repeat, "(other: getattr loop, 20,000 hits)")
    ratio("Hit.to_dict", lambda: [h.to_dict() for h in hits], lambda: [dataclasses.asdict(h) for h in hits],
          repeat, "(other: dataclasses.asdict)")

    t = best(ssl.create_default_context, repeat)
    print(f"{'TLS context':18s} {t * 1000:.1f} ms to build one (loads the CA store)")

    open_label = re.compile(rf"\[(?P<label>[^\]\n]*)\]\((?P<murl>{links._URL})\)", re.I)
    for n in (2_000, 4_000):
        hostile = "[" * n
        ratio(f"link labels {n}", lambda h=hostile: links.LINK_RE.findall(h), lambda h=hostile: open_label.findall(h),
              1, "(other: a label that may hold '[')")

    unbounded = re.compile(values.NUM.replace("{0,40}", "*") + r"\s?%")
    bounded = re.compile(values.NUM + r"\s?%")
    for n in (2_000, 4_000):
        numbers = ",".join(str(i % 10) for i in range(n // 2))
        ratio(f"figure runs {n}", lambda s=numbers: bounded.findall(s), lambda s=numbers: unbounded.findall(s), 1,
              "(other: unbounded run)")


if __name__ == "__main__":
    main()
