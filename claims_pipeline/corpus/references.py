"""Citations made by reference: `[text][ref]`, `[ref][]`, `[ref]` and footnotes `[^1]`, whose URL is given once in
the file by a definition (`[ref]: https://…`, `[^1]: … [Service Public](https://…)`).

They are claims like inline links: the figure next to the marker is checked against the defined URL. A
definition line (a reference's or a footnote's) names a source and states nothing: it gives no claim. A date
written beside the definition ("(January 2026)", "accessed 3 March 2026", "consulté le 10 février 2026",
"abgerufen am 3. März 2025", "Stand: Januar 2026") is when the writer read that source: the verified date of the
claims citing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from claims_pipeline.corpus.links import Link, find_links
from claims_pipeline.corpus.values import date_parts, extract_values

# CommonMark: up to 3 spaces, [label]:, the destination (maybe in <>), an optional title.
_DEFINITION_RE = re.compile(r"^ {0,3}\[(?!\^)(?P<key>[^\]\n]+)\]:[ \t]*<?(?P<url>https?://[^\s>]+)>?", re.I | re.M)
_FOOTNOTE_RE = re.compile(r"^ {0,3}\[\^(?P<key>[^\]\n]+)\]:[ \t]*(?P<body>[^\n]*)", re.M)
# Uses on a line: [text][key] / [key][] (full, collapsed), [^key] (footnote), [key] (shortcut: only when defined).
# Label and key runs are bounded and hold no '[': from each '[' of a hostile line the scan would otherwise run
# to the line's end (quadratic in the line's '[').
_FULL_RE = re.compile(r"\[(?P<label>[^\[\]\n]{0,500})\]\[(?P<key>[^\[\]\n]{0,200})\]")
_NOTE_USE_RE = re.compile(r"\[\^(?P<key>[^\[\]\n]{1,200})\](?!:)")
_SHORTCUT_RE = re.compile(r"(?<![\]!])\[(?P<key>[^\[\]\^\n][^\[\]\n]{0,199})\](?![(\[:])")
# A line that uses a reference at all (candidate lines are found with it over the whole text).
USE_RE = re.compile(r"\]\[|\[\^|\[[^\[\]\n]{1,200}\](?![(\[:])")
# A date that is the citation's reading date: in parentheses of its own, or after a word saying so.
_READ_DATE_BEFORE_RE = re.compile(
    r"(?:\(\s*|\b(?:accessed|retrieved|visited|checked|viewed|consult[ée]e?|vu|abgerufen|aufgerufen|gesehen|stand)"
    r"\b[^()\d\n]{0,12})$", re.I)
_NUMERIC_DATE_RE = re.compile(r"(?<![\d.,/])(\d{1,2})([./])(\d{1,2})\2(\d{4})(?!\d)")
_QUOTED_RE = re.compile(r"\"[^\"\n]*\"")  # a definition's title
# HTML footnotes, as blog engines and hand-written posts make them: a marker `<sup><a href="#fn1">[1]</a></sup>`
# in the text, and a list item `<li id="fn1">Author, title, https://…</li>` at the end. Bounded, one line.
HTML_NOTE_HINT_RE = re.compile(r"href=\"#")
# Citation keys, as pandoc and its like write them: `[@smith2019]`, `[@smith2019, p. 4; @doe2020]`, or a macro
# around the key (`[@link(ODIS2021)]`), resolved by the file's own bibliography: an entry that opens with the key
# (`[@smith2019]`, `**[@linktarget(ODIS2021)]** Author. Title. 2021. <https://…>`) and gives a URL.
CITE_HINT_RE = re.compile(r"\[@")
_CITE_KEY = r"\[@(?:[A-Za-z]{1,20}\()?(?P<key>[^\s()\[\],;@]{1,100})\)?"
CITE_USE_RE = re.compile(_CITE_KEY + r"(?:[,;][^\[\]\n]{0,200})?\](?!:)")
_CITE_ENTRY_RE = re.compile(r"^[ \t>]*(?:[-*+][ \t]+)?[*_]*" + _CITE_KEY + r"\]:?[*_]*(?P<body>[^\n]*)", re.M)
_HTML_NOTE_RE = re.compile(r"<li\b[^<>\n]{0,300}?\bid=\"(?P<key>[^\"\n]{1,100})\"[^<>\n]{0,300}>(?P<body>[^\n]*)", re.I)
HTML_NOTE_USE_RE = re.compile(
    r"(?:<sup>\s*)?<a\b[^<>\n]{0,300}?\bhref=\"#(?P<key>[^\"\n]{1,100})\"[^<>\n]{0,300}>[^<>\n]{0,20}</a>(?:\s*</sup>)?", re.I)


def _norm(key: str) -> str:
    return " ".join(key.split()).casefold()  # CommonMark: labels match case-blind, inner spaces collapsed


@dataclass(frozen=True, slots=True)
class References:
    urls: dict[str, str]  # normalised reference label -> URL
    notes: dict[str, str]  # footnote key -> the first URL of its text
    anchors: dict[str, str] = field(default_factory=dict)  # HTML footnote: the list item's id -> its first URL
    cites: dict[str, str] = field(default_factory=dict)  # citation key -> the first URL of its bibliography entry
    read_on: dict[str, str] = field(default_factory=dict)  # URL -> YYYY-MM-DD written beside its definition

    def __bool__(self) -> bool:
        return bool(self.urls or self.notes or self.anchors or self.cites)


def parse_references(text: str) -> References:
    """The file's reference and footnote definitions (the first definition of a label wins, as in CommonMark)."""
    urls: dict[str, str] = {}
    notes: dict[str, str] = {}
    read_on: dict[str, str] = {}
    for m in _DEFINITION_RE.finditer(text):
        key = _norm(m["key"])
        if key not in urls:
            urls[key] = m["url"]
            _note_read_date(read_on, m["url"], text[m.end():_line_end(text, m.end())])
    if "[^" in text:
        for m in _FOOTNOTE_RE.finditer(text):
            links, _ = find_links(m["body"])
            if links and m["key"].strip() not in notes:
                notes[m["key"].strip()] = links[0].url
                _note_read_date(read_on, links[0].url, m["body"][links[0].end:])
    anchors = _html_notes(text, read_on) if HTML_NOTE_HINT_RE.search(text) else {}
    cites = _cite_entries(text, read_on) if CITE_HINT_RE.search(text) else {}
    return References(urls, notes, anchors=anchors, cites=cites, read_on=read_on)


def _cite_entries(text: str, read_on: dict[str, str]) -> dict[str, str]:
    """The file's bibliography: each entry opening with a citation key, and the first URL of its text."""
    cites: dict[str, str] = {}
    for m in _CITE_ENTRY_RE.finditer(text):
        key = m["key"]
        if key not in cites and (links := find_links(m["body"])[0]):
            cites[key] = links[0].url
            _note_read_date(read_on, links[0].url, m["body"][links[0].end:])
    return cites


def is_cite_entry(line: str, refs: References) -> bool:
    """A bibliography entry opening with a citation key the file uses: it names a work, it states nothing."""
    m = _CITE_ENTRY_RE.match(line)
    return m is not None and m["key"] in refs.cites

def _html_notes(text: str, read_on: dict[str, str]) -> dict[str, str]:
    """HTML footnotes: each list item `<li id="…">` that a marker `href="#…"` of the text points to, and the first
    URL of its text (an item without one cites nothing)."""
    used = {m["key"] for m in HTML_NOTE_USE_RE.finditer(text)}
    anchors: dict[str, str] = {}
    if not used:
        return anchors
    for m in _HTML_NOTE_RE.finditer(text):
        key = m["key"]
        if key in used and key not in anchors:
            links, _ = find_links(m["body"])
            if links:
                anchors[key] = links[0].url
                _note_read_date(read_on, links[0].url, m["body"][links[0].end:])
    return anchors


def is_html_note(line: str, refs: References) -> bool:
    """The list item of an HTML footnote (`<li id="fn1">…`): it names a source, it states nothing."""
    m = _HTML_NOTE_RE.search(line)
    return m is not None and m["key"] in refs.anchors and not line[:m.start()].strip(" \t<>/ulo")


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return end if end >= 0 else len(text)


def _note_read_date(read_on: dict[str, str], url: str, tail: str) -> None:
    if (date := read_date(tail)) is not None:
        read_on.setdefault(url, date)


def read_date(tail: str) -> str | None:
    """The reading date written after a definition's source, as YYYY-MM-DD (the 1st of the month when only a
    month is given: the earliest it can have been), or None. A quoted title's dates are the title's."""
    if not any(ch.isdigit() for ch in tail):
        return None
    tail = _QUOTED_RE.sub(lambda q: " " * len(q.group()), tail)
    found: list[tuple[int, int, int, int | None]] = []
    for v in extract_values(tail):
        if v.type == "date":
            year, month, day = date_parts(v.raw)
            if year is not None and month is not None:
                found.append((v.pos, year, month, day))
    for m in _NUMERIC_DATE_RE.finditer(tail):  # "Stand 15.03.2025", "accessed 15/03/2025": day first
        day, month, year = int(m[1]), int(m[3]), int(m[4])
        if 1 <= month <= 12 and 1 <= day <= 31:
            found.append((m.start(), year, month, day))
    found = [f for f in found if _READ_DATE_BEFORE_RE.search(tail, max(0, f[0] - 40), f[0])]
    if not found:
        return None
    _pos, year, month, day = max(found)
    return f"{year:04d}-{month:02d}-{day or 1:02d}"


def is_definition(line: str) -> bool:
    """A reference definition ('[r]: https://…') or a footnote's ('[^1]: …'): no claim of its own."""
    return _DEFINITION_RE.match(line) is not None or _FOOTNOTE_RE.match(line) is not None


def reference_links(line: str, refs: References) -> list[Link]:
    """The reference and footnote citations on the line, as links to their defined URLs. A footnote marker and
    the '[key]' of a full reference are masked (no figure is read from '[^12]' or '[2024-report]'); link texts
    are read, as those of inline links are."""
    found: list[Link] = []
    taken: list[tuple[int, int]] = []
    if refs.notes and "[^" in line:
        for m in _NOTE_USE_RE.finditer(line):
            url = refs.notes.get(m["key"].strip())
            if url is not None:
                found.append(Link(m.start(), m.end(), url, "footnote", "", m.start(), m.end()))
                taken.append(m.span())
    if refs.anchors and "#" in line:
        for m in HTML_NOTE_USE_RE.finditer(line):
            url = refs.anchors.get(m["key"])
            if url is not None:  # the marker is masked whole: no figure from its '[1]'
                found.append(Link(m.start(), m.end(), url, "footnote", "", m.start(), m.end()))
                taken.append(m.span())
    if refs.cites and "[@" in line:
        for m in CITE_USE_RE.finditer(line):
            url = refs.cites.get(m["key"])
            if url is not None and not (m.start() == 0 or line[:m.start()].strip(" \t>*_-+") == ""):  # rendered as a note: it cites what comes before it
                found.append(Link(m.start(), m.end(), url, "footnote", "", m.start(), m.end()))
                taken.append(m.span())
    if refs.urls:
        if "][" in line:
            for m in _FULL_RE.finditer(line):
                url = refs.urls.get(_norm(m["key"] or m["label"]))
                if url is not None:
                    found.append(Link(m.start(), m.end(), url, "reference", m["label"], m.end("label") + 1, m.end()))
                    taken.append(m.span())
        for m in _SHORTCUT_RE.finditer(line):
            url = refs.urls.get(_norm(m["key"]))
            if url is not None and not any(s <= m.start() < e for s, e in taken):
                found.append(Link(m.start(), m.end(), url, "reference", m["key"], m.end(), m.end()))
    return sorted(found, key=lambda ln: ln.start)
