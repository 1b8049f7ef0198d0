"""Citations made by reference: `[text][ref]`, `[ref][]`, `[ref]` and footnotes `[^1]`, whose URL is given once in
the file by a definition (`[ref]: https://…`, `[^1]: … [Service Public](https://…)`).

They are claims like inline links: the figure next to the marker is checked against the defined URL. A
reference definition line is no sentence and gives no claim; a footnote's text is a line like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from claims_pipeline.corpus.links import Link, find_links

# CommonMark: up to 3 spaces, [label]:, the destination (maybe in <>), an optional title.
_DEFINITION_RE = re.compile(r"^ {0,3}\[(?!\^)(?P<key>[^\]\n]+)\]:[ \t]*<?(?P<url>https?://[^\s>]+)>?", re.I | re.M)
_FOOTNOTE_RE = re.compile(r"^ {0,3}\[\^(?P<key>[^\]\n]+)\]:[ \t]*(?P<body>[^\n]*)", re.M)
# Uses on a line: [text][key] / [key][] (full, collapsed), [^key] (footnote), [key] (shortcut: only when defined).
# Label and key runs are bounded and hold no '[': from each '[' of a hostile line the scan would otherwise run
# to the line's end (80,000 '[' took 15 s).
_FULL_RE = re.compile(r"\[(?P<label>[^\[\]\n]{0,500})\]\[(?P<key>[^\[\]\n]{0,200})\]")
_NOTE_USE_RE = re.compile(r"\[\^(?P<key>[^\[\]\n]{1,200})\](?!:)")
_SHORTCUT_RE = re.compile(r"(?<![\]!])\[(?P<key>[^\[\]\^\n][^\[\]\n]{0,199})\](?![(\[:])")
# A line that uses a reference at all (candidate lines are found with it over the whole text).
USE_RE = re.compile(r"\]\[|\[\^|\[[^\[\]\n]{1,200}\](?![(\[:])")


def _norm(key: str) -> str:
    return " ".join(key.split()).casefold()  # CommonMark: labels match case-blind, inner spaces collapsed


@dataclass(frozen=True, slots=True)
class References:
    urls: dict[str, str]  # normalised reference label -> URL
    notes: dict[str, str]  # footnote key -> the first URL of its text

    def __bool__(self) -> bool:
        return bool(self.urls or self.notes)


def parse_references(text: str) -> References:
    """The file's reference and footnote definitions (the first definition of a label wins, as in CommonMark)."""
    urls: dict[str, str] = {}
    notes: dict[str, str] = {}
    for m in _DEFINITION_RE.finditer(text):
        urls.setdefault(_norm(m["key"]), m["url"])
    if "[^" in text:
        for m in _FOOTNOTE_RE.finditer(text):
            links, _ = find_links(m["body"])
            if links:
                notes.setdefault(m["key"].strip(), links[0].url)
    return References(urls, notes)


def is_definition(line: str) -> bool:
    return _DEFINITION_RE.match(line) is not None


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
