"""Citations on a line: markdown links, backticked URLs and bare URLs, plus 'verify at' pointer detection.

URLs keep balanced parentheses ('…/Foo_(bar)') whole. Every URL span can be blanked so no figure is read out
of a URL, while a markdown link's label text stays readable (a label may carry a figure or a statute name).
"""

from __future__ import annotations

import html
import html.entities
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from claims_pipeline.corpus.records import LinkKind

# One URL: no spaces/brackets/backticks, parentheses allowed only in balanced pairs (one level deep); brackets
# only around an IPv6 literal host ('http://[2001:db8::1]/x': a claim like any other, the fetcher's guard decides).
_URL_CHARS = r"(?:[^\s()<>\[\]`\"]|\([^\s()<>\[\]`\"]*\))"
_URL = rf"https?://(?:\[[0-9A-Fa-f:.]{{2,45}}(?:%25[\w.~-]{{1,32}})?\]{_URL_CHARS}*|{_URL_CHARS}+)"
# A link's label holds no bracket but the "![" of one image ("[![logo](src)](page)"): tried from every "[" of a
# line, a label that may hold "[" would run on to the line's end each time (quadratic in the line's "[").
_LABEL = r"[^\[\]\n]*(?:!\[[^\[\]\n]*)?"
LINK_RE = re.compile(
    rf"\[(?P<label>{_LABEL})\]\((?P<murl>{_URL})\s*(?:\"[^\"\n]*\")?\)"  # [label](url "title")
    rf"|`(?P<burl>{_URL})`"  # `https://…`
    rf"|(?P<url>{_URL})",  # bare (also <https://…>)
    re.I,
)
# LINK_RE as find_links runs it: the same matches, written so SRE can skip ahead. LINK_RE opens with a
# case-insensitive 'h' branch, so the engine tries the whole pattern at every position of the line; here the
# first character comes from a plain set ('[', '`', 'h', 'H': all that LINK_RE's first character matches, even
# ignoring case), and a lookbehind on it picks the branch. A bare URL is then the whole match (it has no group).
_URL_REST = _URL.removeprefix("https?://")
assert _URL == "https?://" + _URL_REST
_LINK_FAST = re.compile(
    r"[\[`hH](?:"
    rf"(?<=\[)(?i:(?P<label>{_LABEL})\]\((?P<murl>{_URL})\s*(?:\"[^\"\n]*\")?\))"
    rf"|(?<=`)(?i:(?P<burl>{_URL})`)"
    rf"|(?<=[hH])(?i:ttps?://{_URL_REST})"
    r")"
)
# A markdown link whose target is not http(s): [x](javascript:…), [x](file:…), [x](data:…).
OTHER_TARGET_RE = re.compile(r"\]\(\s*(?P<scheme>javascript|file|data|vbscript):", re.I)
# "](http" that LINK_RE did not consume as a whole markdown link: unbalanced brackets.
_MD_OPEN = "](http"
_URL_IN_LABEL_RE = re.compile(_URL, re.I)
_TRAILING = ".,;:!?'\"*_"  # and emphasis marks around a bare URL: **https://…**

# Pointer clause right before a link: "verify at", "verify current rate at", "confirm … figures at IRD /",
# "check at", "VERIFY the exact threshold at". The verb and the preposition sit in one clause (no sentence
# punctuation between); past tense ("VERIFIED at") is a citation, not a pointer.
_POINTER_TAIL_RE = re.compile(r"\b(?:at|with|via)\s+(?:[\w&.-]+(?:\s[\w&.-]+)?\s*/\s*)?$", re.I)
_POINTER_VERB_RE = re.compile(
    r"\b(?:verify|confirm|check|cross-check|re-check)\b(?:\s+(?:current|the|exact|latest|it|this|them))*"
    r"[^.;:!?()\[\]]{0,160}$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Link:
    start: int  # span of the whole citation (markdown: "[label](url)"; backticked: with backticks)
    end: int
    url: str
    kind: LinkKind
    label: str = ""
    url_start: int = 0  # span of the URL text itself
    url_end: int = 0


# Characters that end a bare URL written in prose: a table's cell bar, CJK and typographic punctuation, braces,
# a zero-width space. (Other non-ASCII characters stay: an IRI path may hold any letter.)
_BARE_STOP_RE = re.compile("[|{}\u3001\u3002\uff08\uff09\uff0c\u300c-\u3011\u00ab\u00bb\u201c\u201d\u2026\u200b]")
# Backslash escapes and entity references of a markdown link destination (CommonMark decodes both).
_MD_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _bare_url(url: str) -> str:
    m = _BARE_STOP_RE.search(url)
    return _trim_url(url[: m.start()] if m else url)


# Entity references as CommonMark reads them: complete ones only ('&amp;', '&#38;'). html.unescape alone also
# decodes legacy names with no ';', so '?cid=1&sectionId=2&para=3' would become '§ionId=2¶=3' (another page).
_ENTITY_RE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


_SCHEME_RE = re.compile(r"https?://", re.I)
# A linked image with a relative source right before "](": "[![alt](img/logo.png)](" (bounded: no backtracking
# over a long line)
_LINKED_IMAGE_BEFORE_RE = re.compile(r"\[(!\[[^\]\n]{0,500}\]\([^()\s\]]{0,2000}\))\]\($")


def _urls_after_cuts(run: str, at: int) -> list[Link]:
    """The bare URLs that follow a stop character inside one matched run of URL characters (one pass)."""
    out: list[Link] = []
    offset = 0
    while (stop := _BARE_STOP_RE.search(run, offset)) is not None and (nxt := _SCHEME_RE.search(run, stop.end())):
        end = _BARE_STOP_RE.search(run, nxt.end())
        url = _trim_url(run[nxt.start():end.start() if end else len(run)])  # up to the next stop, no further
        us = at + nxt.start()
        out.append(Link(us, us + len(url), url, "bare", "", us, us + len(url)))
        offset = nxt.start() + max(len(url), 1)
    return out


def _destination(url: str) -> str:
    """A markdown link destination as the URL it names: 'd\\_e.htm' → 'd_e.htm', '&amp;' → '&'."""
    if "\\" in url:
        url = _MD_ESCAPE_RE.sub(r"\1", url)
    return _ENTITY_RE.sub(_entity, url) if "&" in url else url


def _entity(m: re.Match[str]) -> str:
    """One complete reference: a known name ('&amp;'), or a number; anything else stays as written
    ('&ampere;' is no '&' + 'ere;', which html.unescape's legacy-prefix rule would make it)."""
    ref = m.group()
    if ref[1] == "#":
        return html.unescape(ref)
    return html.entities.html5.get(ref[1:], ref)


def _trim_url(url: str) -> str:
    """Drop trailing punctuation, and a closing ')' that has no opening partner inside the URL."""
    while url:
        if url[-1] in _TRAILING:
            url = url[:-1]
        elif url[-1] == ")" and url.count("(") < url.count(")"):
            url = url[:-1]
        else:
            break
    return url


# "http:dx.doi.org/10.1000/x": a scheme written without its '//' (a common slip in citations, DOIs above all), before a
# host name and a path. Led by a character set, so the scan skips ahead in C.
_SLASHLESS_SCHEME_RE = re.compile(r"(?<![\w/])([hH][tT][tT][pP][sS]?:)(?!//)(?=[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/)")


def decode_entities(text: str) -> str:
    """The text with its complete character references decoded, as CommonMark reads them ('§&nbsp;13' is '§ 13',
    '&euro;' is '€'), except those that would make a line break or a tag ('&#10;', '&lt;'): a figure written with
    an entity is read, and line numbers do not change."""
    if "&" not in text or _ENTITY_RE.search(text) is None:
        return text
    return _ENTITY_RE.sub(_text_entity, text)


def _text_entity(m: re.Match[str]) -> str:
    ch = _entity(m)
    return m.group() if ch == m.group() or any(c in "\n\r<>" for c in ch) else ch


def repair_schemes(text: str) -> str:
    """The text with each slash-less scheme made whole ('http:dx.doi.org/…' → 'http://dx.doi.org/…'), so the
    citation is read; line numbers do not change."""
    return _SLASHLESS_SCHEME_RE.sub(r"\1//", text) if _SLASHLESS_SCHEME_RE.search(text) else text


def find_links(line: str) -> tuple[list[Link], list[str]]:
    """All citations on the line, left to right, and problems found (unbalanced brackets, unsafe targets)."""
    links: list[Link] = []
    problems: list[str] = []
    outer: tuple[int, int, str] | None = None  # a linked image "[![alt](img)](page)": (start, page URL at, alt)
    for m in _LINK_FAST.finditer(line):  # LINK_RE's matches
        if (url := m.group("murl")) is not None:
            if m.start() > 0 and line[m.start() - 1] == "!":
                continue  # an image ![alt](src) is a picture on the page, not a citation
            label = m.group("label")
            if label.startswith("!") and line.startswith("](", m.end()):
                outer = (m.start(), m.end() + 2, line[m.start() + 1:m.end()])  # the link is the "](page)" after it
                continue
            us = m.start("murl")
            links.append(Link(m.start(), m.end(), _destination(url), "markdown", label, us, us + len(url)))
        elif (url := m.group("burl")) is not None:
            us = m.start("burl")
            links.append(Link(m.start(), m.end(), url, "backticked", "", us, us + len(url)))
        else:
            url = _bare_url(m.group())
            us = m.start()
            if outer is not None and us == outer[1]:
                end = us + len(url) + (1 if line.startswith(")", us + len(url)) else 0)
                links.append(Link(outer[0], end, _destination(url), "markdown", outer[2], us, us + len(url)))
                outer = None
            elif line.startswith(_MD_OPEN, us - 2) and (img := _LINKED_IMAGE_BEFORE_RE.search(line, max(0, us - 2600), us)):
                # "[![alt](img/logo.png)](page)": the image's source is relative, so no URL match opened the link
                end = us + len(url) + (1 if line.startswith(")", us + len(url)) else 0)
                links.append(Link(img.start(), end, _destination(url), "markdown", img.group(1), us, us + len(url)))
            else:
                if line.startswith(_MD_OPEN, us - 2):
                    problems.append(f"unbalanced brackets in markdown link at column {us - 1}; URL read as a bare link")
                links.append(Link(us, us + len(url), url, "bare", "", us, us + len(url)))
            # cut short at a stop character ('、', '|'): the URLs after it within this run are links too, found
            # in the run itself (searching the line again from each cut would be quadratic on a hostile line)
            links += _urls_after_cuts(m.group(), us)
    if "](" in line:
        for m in OTHER_TARGET_RE.finditer(line):
            problems.append(f"link to a {m.group('scheme').lower()}: target at column {m.start() + 3} ignored")
    return links, problems


_IMAGE_URL_RE = re.compile(rf"!\[[^\[\]\n]*\]\((?P<src>{_URL}|[^()\s\]]+)", re.I)  # absolute or relative source
# An HTML tag ('<img src="photos/ribeira-2023-03-07.png" width="600">'): its attributes are no prose. Bounded, and
# closed on its line.
_HTML_TAG_RE = re.compile(r"</?[A-Za-z][^<>\n]{0,2000}>")
# Template markers of static-site generators ('{{ fail_on("2026-12-31") }}', '{{RATE|percent(1)}}', '{% if x %}'):
# what they print is made at build time, so nothing written there is a figure of the page. Bounded, one line.
# (No brace inside: from each '{{' of a hostile line the scan stops at the next one.)
TEMPLATE_RE = re.compile(r"\{\{[^{}\n]{0,2000}\}\}|\{%[^{}\n]{0,2000}?%\}")
# A marker that makes a figure: it holds a digit or a number filter, or a unit follows it ('{{ RATE }}%').
_TEMPLATE_FIGURE_RE = re.compile(r"\d|\|\s*(?:percent|currency|euro|dollar|number|round|float|int|format|date)", re.I)
_UNIT_AFTER_RE = re.compile(r"\s?[%€$£¥₹]")


# A shortcode that cites a document: a Hugo card or cite (`{{< card-policy src="https://…" title="**FAR 39.104**:
# …" >}}`) names the page it links to and gives it a title, as a markdown link does with its label.
_SHORTCODE_RE = re.compile(r"\{\{<\s*[\w-]+\s(?P<attrs>[^{}\n]*?)/?>\}\}")
_SHORTCODE_URL_RE = re.compile(r"(?<![\w-])(?:src|href|url|link)\s*=\s*\"(?P<url>https?://[^\"\s]+)\"")
_SHORTCODE_TITLE_RE = re.compile(r"(?<![\w-])title\s*=\s*\"(?P<title>[^\"\[\]]+)\"")


def _shortcode_link(m: re.Match[str]) -> str | None:
    """The citing shortcode `m` written as the markdown link it stands for, padded to its length; None if it cites
    nothing (no http URL or no title)."""
    url = _SHORTCODE_URL_RE.search(m.group("attrs"))
    title = _SHORTCODE_TITLE_RE.search(m.group("attrs"))
    if url is None or title is None:
        return None
    link = f"[{title.group('title').strip()}]({url.group('url')})"
    return link.ljust(m.end() - m.start()) if len(link) <= m.end() - m.start() else None


def mask_templates(line: str) -> tuple[str, int]:
    """The line with every template marker blanked (same length), and how many of them make a figure. A shortcode
    citing a document becomes the markdown link it stands for (_shortcode_link)."""
    figures = 0
    chars: list[str] | None = None
    for m in TEMPLATE_RE.finditer(line):
        chars = list(line) if chars is None else chars
        sc = _SHORTCODE_RE.fullmatch(line, m.start(), m.end()) if line.startswith("{{<", m.start()) else None
        if sc is not None and (link := _shortcode_link(sc)) is not None:
            chars[m.start():m.end()] = link
            continue
        figures += is_template_figure(line, m)
        chars[m.start():m.end()] = " " * (m.end() - m.start())
    return ("".join(chars) if chars is not None else line), figures


def is_template_figure(text: str, m: re.Match[str]) -> bool:
    """Does the template marker `m` print a figure (a digit or a number filter in it, a unit right after it)?"""
    return _TEMPLATE_FIGURE_RE.search(m.group()) is not None or _UNIT_AFTER_RE.match(text, m.end()) is not None


def is_root_url(url: str) -> bool:
    """A site's home page: no path beyond '/', no query, no fragment."""
    parts = urlsplit(url)
    return parts.path in ("", "/") and not parts.query and not parts.fragment


def mask_urls(line: str, links: list[Link]) -> str:
    """Blank every URL (link targets, backticked and bare URLs, URLs written inside labels, image sources) and
    every HTML tag with its attributes; keep labels."""
    if not links and "<" not in line and "![" not in line:
        return line
    chars = list(line)
    if "![" in line:  # images are no citations (find_links skips them), but no figure is read from their URLs
        for m in _IMAGE_URL_RE.finditer(line):
            chars[m.start("src"):m.end("src")] = " " * (m.end("src") - m.start("src"))
    if "<" in line:  # '<img src="…-2023-03-07.png">', '<a href="…">': no figure from a tag or its attributes
        for m in _HTML_TAG_RE.finditer(line):
            chars[m.start():m.end()] = " " * (m.end() - m.start())
    for ln in links:
        chars[ln.url_start:ln.url_end] = " " * (ln.url_end - ln.url_start)
        if ln.kind == "markdown" and "http" in ln.label:
            off = ln.start + 1
            for m in _URL_IN_LABEL_RE.finditer(ln.label):
                chars[off + m.start():off + m.end()] = " " * (m.end() - m.start())
    return "".join(chars)


def is_pointer_link(line: str, link_start: int, lookback: int) -> bool:
    """True when the link is introduced by a 'verify at'-style clause ending within `lookback` chars of it."""
    if lookback <= 0:
        return False
    before = line[max(0, link_start - lookback - 200):link_start]
    if "*" in before or "_" in before or "`" in before:  # str.replace runs in C; a translate table per char does not
        before = before.replace("*", "").replace("_", "").replace("`", "")
    tail = _POINTER_TAIL_RE.search(before[-lookback:])
    if not tail:
        return False
    head = before[: len(before) - len(before[-lookback:]) + tail.start()]
    return _POINTER_VERB_RE.search(head) is not None
