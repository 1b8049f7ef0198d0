"""The fast regexes extraction runs are the readable originals rewritten for speed: same matches, same order."""

from __future__ import annotations

import random
import re

from claims_pipeline.corpus import links as L
from claims_pipeline.corpus import stamps as S
from claims_pipeline.corpus import values as V

TOKENS = ["€", "$", "¥", "USD", "usd", "eur", "and", "No.", "no", "n°", "nr.", "§", "Art.", "Article", "Cap.", "CAP.",
          "Chapter", "Law", "law", "Act", "Reg.", "Decree", "Décret", "Loi", "Verordnung", "Bekendtgørelse", "Nov",
          "November", "Sept", "May", "Mar.", "march", "ſep", "2024", "1999", "2031", "12", "5", "1,300,000", "1.250",
          "1'000", "1\u00a0000", "6,32", "70:07", "%", "％", " pp", "per cent", "percentage points", "k", " bn",
          " million", "万", "億", "円", "新台幣", "年", "月", "第", "號", "-", "/", "(", ")", ".", ",", " ", " ", "  ",
          "2024-05-01", "x", "é", "\u202f", "’", "\t", "19", "20", "3", "000", "A-", "ABC-", "_", "a", "1 000", " 000",
          "12345 678", "TO", " To ", "BIS", "Au", "Regular", "Regions", "Act", "ual", "Directive", "Reg", "(EU)", "L.", "E. ", "収", "為", "は", "ก", "한", "ｱ", "１"]


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
    assert checked == len(V._FAST) * len(texts) and len(V._FAST) == 9


LINK_TOKENS = ["[", "]", "(", ")", "](", "http://", "https://", "HTTP://", "HtTpS://", "httpſ://", "httpS://", "hTTp:/",
               "`", '"', "a", "b.gov", "/x", " ", "\t", "\n", "<", ">", "h", "H", "ht", "://", "é", "[a]", "(b)",
               '"t"', "x_(y)", "javascript:", "\u00a0", "\u2028", "](http", "`https://c.gov/`", ".", ","]


def _link_matches(rx, text: str) -> list[tuple]:
    """(span, kind, url, url start, label) of every match, from either regex's groups."""
    out = []
    for m in rx.finditer(text):
        if m.group("murl") is not None:
            out.append((m.span(), "markdown", m.group("murl"), m.start("murl"), m.group("label")))
        elif m.group("burl") is not None:
            out.append((m.span(), "backticked", m.group("burl"), m.start("burl"), None))
        elif rx is L.LINK_RE:
            out.append((m.span(), "bare", m.group("url"), m.start("url"), None))
        else:  # the fast regex's bare URL is the whole match
            out.append((m.span(), "bare", m.group(), m.start(), None))
    return out


def test_fast_link_regex_matches_link_re():
    rnd = random.Random(20260530)
    texts = ["".join(rnd.choice(LINK_TOKENS) for _ in range(rnd.randint(1, 30))) for _ in range(20000)]
    texts += ['See [VAT Act](https://tax.gov.xx/a_(b) "title") and `https://x.gov/y` or <https://z.gov/q>.',
              "[a [b](https://i.gov/x)](https://j.gov/y)", "[x](https://a.gov/x\n) next", "HTTPS://A.GOV/X [y](Http://b)"]
    for text in texts:
        assert _link_matches(L._LINK_FAST, text) == _link_matches(L.LINK_RE, text), text


def test_find_links_on_tricky_lines():  # expectations as given by LINK_RE before the fast regex
    links, problems = L.find_links("x [a](http://a.gov/x and [ok](https://y.gov.fr/b) ](https://z.gov/c) [j](javascript:x)")
    assert [(ln.kind, ln.url) for ln in links] == [
        ("bare", "http://a.gov/x"), ("markdown", "https://y.gov.fr/b"), ("bare", "https://z.gov/c")]
    assert problems == ["unbalanced brackets in markdown link at column 5; URL read as a bare link",
                        "unbalanced brackets in markdown link at column 51; URL read as a bare link",
                        "link to a javascript: target at column 74 ignored"]
    links, _ = L.find_links("HTTPſ://A.GOV/(x)y. `hTTp://b.gov/`")
    assert [(ln.kind, ln.url, ln.start) for ln in links] == [("bare", "HTTPſ://A.GOV/(x)y", 0), ("backticked", "hTTp://b.gov/", 20)]


def test_reader_guards_pass_every_text_their_regex_matches():
    """A guard may let through a text its regex finds nothing in, never the other way round."""
    rnd = random.Random(20260531)
    tokens = TOKENS + ["P", "Per Cent", "PP", "pp", "p", "％", "\u00a0%", "5\t%", "5  %", "support", "recent", "元", "圓", "€", "£", "₹", " €",
                       " Millionen", " milliards", " Mio.", " d'euros", " Euro", " Franken", " janvier ", "3. März ", "1er ", " Juni ",
                       "ſeptembre ", " Août ",
                       # law numbers without a keyword (CODE_ARTICLE_RE's guard)
                       "L", "R. ", "D", "312", "-", "M-", "A-", "19", "EO ", "E.O. ", "14058", "(13985)", "Executive Order ",
                       "FAR ", "OMB Memo ", "OMB Circular ", "Circular ", "recital ", "Overweging ", "Erwägungsgrund ",
                       "considérant ", "大統領令 "]
    texts = ["".join(rnd.choice(tokens) for _ in range(rnd.randint(1, 30))) for _ in range(6000)]
    texts += ["5 Per Cent", "3 PP", "12.5%", "7\u00a0％", "1,5 pp", "５%", "x5%", "5 percentage points", "5 per cent"]
    gated = [(rx, guard) for _, rx, _, guard in V.READERS if guard is not None]
    assert len(gated) == 12  # the French and German amounts and dates in words added three; law numbers one
    for text in texts:
        for rx, guard in gated:
            if rx.search(text) is not None:
                assert guard(text), (rx.pattern[:30], text)


def test_stamp_iso_hint_is_exactly_an_iso_date_search():
    rnd = random.Random(20260601)
    tokens = ["2024", "-", "05", "5", "-01", "x", " ", "12345", "٢٠٢٤", "--", "2024-05-01", "99-99"]
    texts = ["".join(rnd.choice(tokens) for _ in range(rnd.randint(1, 12))) for _ in range(20000)]
    for text in texts:
        assert (S._ISO_ANYWHERE_RE.search(text) is None) == (re.search(S.DATE, text) is None), text


def _extract_values_reference(text: str) -> list:
    """extract_values as first written (every match trimmed and stripped), to check its shortcuts against."""
    from bisect import bisect_left

    starts, ends, values = [], [], []
    for k, (vtype, finditer, has_code, read, _guard) in enumerate(V._SCANS):
        if k == len(V._SCANS) - 1:  # the other kinds are read before bare years (corpus/figure_kinds.py)
            values += V.read_kinds(text, starts, ends)
        for m in finditer(text):
            if has_code and m.group("code").upper() not in V.CCY_CODES:
                continue
            if vtype == "statute" and V.is_plain_no(m.group()):
                continue
            s, e = m.span()
            raw = m.group(0)
            stripped = V._trim_tail(raw)
            e -= len(raw) - len(stripped)
            s += len(stripped) - len(stripped.lstrip())
            raw = stripped.strip()
            i = bisect_left(starts, e)
            if not raw or (i > 0 and ends[i - 1] > s):
                continue
            starts.insert(i, s)
            ends.insert(i, e)
            needles, salient, number = read(raw)
            values.append(V.Value(type=vtype, raw=raw, needles=needles, salient=salient, pos=s, end=e, number=number))
    values = values + V._range_bounds(text, values, starts, ends) if values else values  # no gate: it must be exact
    return [V.replace(v, salient=True) if v.type == "year" and V._is_subject_year(text, v) else v for v in values]


def test_extract_values_shortcuts_give_the_reference_values():
    rnd = random.Random(20260602)
    tokens = TOKENS + ["\u2009", "\u3000", " \t", "5 ", "§ 12 ", "Art. 5.", "EUR 5,", "5%.", "(Cap. 12)", "\u00a0"]
    texts = ["".join(rnd.choice(tokens) for _ in range(rnd.randint(1, 30))) for _ in range(4000)]
    for text in texts:
        assert V.extract_values(text) == _extract_values_reference(text), text
