"""Sentence splitting for claims: the project's own rules (claims_pipeline/corpus/sentences.py) against pysbd, a
rule-based segmenter (pip install pysbd to compare; it is no dependency of the project).

Correctness: hand-written paragraphs in the six languages extraction reads (EN, DE, FR, ES, IT, NL), in the forms
knowledge bases use (wrapped lines joined, abbreviations "z. B.", "e.g.", "Nr.", "Art.", "St.", decimals "5,3",
dates "1. Juli", citations after the full stop "…2024.[^3]"), each with its expected sentences. Speed: every
paragraph of a markdown folder (default ../shared/data/realkb-dev) split once, and the same text repeated to
100,000 paragraphs (the scale of the 100k-claim synthetic corpus). Not a test: numbers, no asserts.

    .venv/bin/python benchmarks/bench_sentences.py [--data DIR] [--repeat-to 100000]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from claims_pipeline.corpus.sentences import sentences

CASES: list[tuple[str, str, list[str]]] = [
    ("en", "The rate is 5.5 % e.g. for food. It rose in St. Louis by 2 %.",
     ["The rate is 5.5 % e.g. for food.", "It rose in St. Louis by 2 %."]),
    ("en", "Prices rose 9.4 % in 2024.[^r] A flat costs around €1,150 a month.",
     ["Prices rose 9.4 % in 2024.[^r]", "A flat costs around €1,150 a month."]),
    ("en", "See Art. 6(1) GDPR and No. 17 of 1975. The fee is $45 (approx. 40 EUR).",
     ["See Art. 6(1) GDPR and No. 17 of 1975.", "The fee is $45 (approx. 40 EUR)."]),
    ("de", "Die Quote lag z. B. bei 5,3 Prozent. Sie stieg am 1. Juli 2025 auf 5,6 Prozent.",
     ["Die Quote lag z. B. bei 5,3 Prozent.", "Sie stieg am 1. Juli 2025 auf 5,6 Prozent."]),
    ("de", "Nach § 3 Abs. 2 Nr. 1 gilt ca. 12,5 Mrd. Euro. Das ist bzw. war viel.",
     ["Nach § 3 Abs. 2 Nr. 1 gilt ca. 12,5 Mrd. Euro.", "Das ist bzw. war viel."]),
    ("fr", "Le taux est de 20 pour cent env. en 2024. M. Dupont l'a confirmé.",
     ["Le taux est de 20 pour cent env. en 2024.", "M. Dupont l'a confirmé."]),
    ("fr", "Voir l'art. 1 de la loi n° 2016-1321. Elle date du 7 oct. 2016.",
     ["Voir l'art. 1 de la loi n° 2016-1321.", "Elle date du 7 oct. 2016."]),
    ("es", "El tipo es del 21 % aprox. desde 2012. La Sra. García lo explicó.",
     ["El tipo es del 21 % aprox. desde 2012.", "La Sra. García lo explicó."]),
    ("it", "Il tasso è del 22 per cento, ecc. secondo la legge. Il sig. Rossi lo conferma.",
     ["Il tasso è del 22 per cento, ecc. secondo la legge.", "Il sig. Rossi lo conferma."]),
    ("nl", "Het tarief is bijv. 21 procent sinds 1 jan. 2024. Zie art. 5 van de wet.",
     ["Het tarief is bijv. 21 procent sinds 1 jan. 2024.", "Zie art. 5 van de wet."]),
    ("nl", "De scan kent vijf niveaus, o.a. leiderschap. Er zijn 4 stappen.",
     ["De scan kent vijf niveaus, o.a. leiderschap.", "Er zijn 4 stappen."]),
]

_BLOCK_SPLIT_RE = re.compile(r"\n[ \t]*\n")


def own(text: str) -> list[str]:
    return [text[a:b] for a, b in sentences(text)]


def paragraphs(data: Path) -> list[str]:
    out = []
    for p in sorted(data.rglob("*.md*")):
        text = p.read_text(encoding="utf-8", errors="replace")
        out += [" ".join(b.split("\n")) for b in _BLOCK_SPLIT_RE.split(text) if any(ch.isdigit() for ch in b)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "realkb-dev")
    ap.add_argument("--repeat-to", type=int, default=100_000)
    args = ap.parse_args()
    splitters = {"own rules": own}
    try:
        import pysbd

        segs = {lang: pysbd.Segmenter(language=lang, clean=False) for lang in ("en", "de", "fr", "es", "it", "nl")}
        splitters["pysbd 0.3"] = lambda t, lang="en": [s.strip() for s in segs[lang].segment(t) if s.strip()]
    except ImportError:
        print("pysbd not installed: own rules only")
    print(f"{'splitter':<12} {'cases right':>12} {'realkb paragraphs/s':>20} {'100k paragraphs s':>18}")
    texts = paragraphs(args.data) if args.data.is_dir() else [c[1] for c in CASES]
    for name, split in splitters.items():
        right = 0
        for lang, text, want in CASES:
            got = split(text, lang) if name != "own rules" else split(text)  # type: ignore[call-arg]
            right += got == want
            if got != want:
                print(f"  {name} [{lang}] {got}")
        t0 = time.perf_counter()
        for t in texts:
            split(t)
        dt = time.perf_counter() - t0
        rate = len(texts) / dt if dt else float("inf")
        print(f"{name:<12} {right:>6}/{len(CASES):<5} {rate:>20,.0f} {args.repeat_to / rate:>18.1f}")


if __name__ == "__main__":
    main()
