"""The fast regexes extraction runs are the readable originals rewritten for speed: same matches, same order."""

from __future__ import annotations

import random

from claims_pipeline.corpus import values as V

TOKENS = ["€", "$", "¥", "USD", "usd", "eur", "and", "No.", "no", "n°", "nr.", "§", "Art.", "Article", "Cap.", "CAP.",
          "Chapter", "Law", "law", "Act", "Reg.", "Decree", "Décret", "Loi", "Verordnung", "Bekendtgørelse", "Nov",
          "November", "Sept", "May", "Mar.", "march", "ſep", "2024", "1999", "2031", "12", "5", "1,300,000", "1.250",
          "1'000", "1\u00a0000", "6,32", "70:07", "%", "％", " pp", "per cent", "percentage points", "k", " bn",
          " million", "万", "億", "円", "新台幣", "年", "月", "第", "號", "-", "/", "(", ")", ".", ",", " ", " ", "  ",
          "2024-05-01", "x", "é", "\u202f", "’", "\t", "19", "20", "3", "000", "A-", "ABC-", "_", "a"]


def _spans(finditer, text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in finditer(text)]


def test_fast_regexes_match_their_originals_on_random_figure_soup():
    rnd = random.Random(20260529)
    texts = ["".join(rnd.choice(TOKENS) for _ in range(rnd.randint(1, 30))) for _ in range(4000)]
    texts += ["Act No. 5 of 2024, § 12, 19 Nov 2024 and Nov. 19, 2024: EUR 5 bn (5 %), USD 1,300,000 in 2023-12-31"]
    checked = 0
    for original, fast in V._FAST.items():
        for text in texts:
            assert _spans(fast, text) == _spans(original.finditer, text), (original.pattern[:40], text)
            checked += 1
    assert checked == len(V._FAST) * len(texts) and len(V._FAST) == 8
