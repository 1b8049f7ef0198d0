"""Attribution: which citation is the source of which figure.

First the nearest link: each value goes to the citation closest to it in its text.

The reference keys (docs/decisions/0001: overlap first; then distance, a FOLLOWING link winning ties, the
`figure ([source](url))` idiom; then lower index), found with a binary search instead of a scan of every
link, so a pathological line with thousands of links and figures stays near-linear.

Then the reader's rules (`by_sentence`): a citation supports the figures of its own sentence, as a reader takes
it; among several links in a sentence, one that defines a word, a home page or a person's page gives way to the
evidence beside it; a footnote or a sentence that is nothing but a citation ("See [the tables](…).") cites the
sentence before it. A table row is one statement: its links keep their nearest figures. Each choice has a reason
code (REASONS), kept in the claim and printed by `extract --explain`.

And what a link is in its sentence (`no_evidence`): a site named in the running text (a home page, an "about"
page, the page named after its label; `names_sites`), an event's page, a page to act on. Such a link keeps the
figures near it and gives no claim: a writer who gives a site as a source writes it as one (a source word, an
agent, a colon, parentheses before it).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from claims_pipeline.corpus.links import Link, is_root_url
from claims_pipeline.corpus.records import Value
from claims_pipeline.corpus.sentences import clause_ends, sentence_ends, sentence_span


class _Span(Protocol):
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class _Positioned(Protocol):
    @property
    def pos(self) -> int: ...
    @property
    def end(self) -> int: ...


V = TypeVar("V", bound=_Positioned)


def attribute_values(values: Sequence[V], links: Sequence[_Span]) -> list[list[V]]:
    """For links sorted by start and not overlapping each other: the values each link gets."""
    if not links:
        return []
    if len(links) == 1:
        return [list(values)]
    starts = [ln.start for ln in links]
    out: list[list[V]] = [[] for _ in links]
    for v in values:
        after = bisect_left(starts, v.end)  # first link starting at or after the value's end
        best: tuple[int, int, int] | None = None
        if after < len(links):
            best = (links[after].start - v.end, 0, after)
        k = after - 1  # the last link starting before the value ends: overlapping, or the nearest before
        if k >= 0:
            ln = links[k]
            key = (0, 0, k) if ln.end > v.pos else (v.pos - ln.end, 1, k)
            if best is None or key < best:
                best = key
        assert best is not None
        out[best[2]].append(v)
    return out



REASONS = {
    "only": "the only citation in the figure's sentence",
    "nearest": "the citation nearest the figure in its sentence",
    "label": "the figure is the link's label",
    "footnote": "the footnote of the figure's clause or sentence",
    "next-sentence": "a footnote, or a sentence that is only a citation, right after the figure's sentence",
    "evidence": "taken over from a link in the same sentence that defines a word, is a home page or a person's page",
    "table-row": "the citation of the figure's table row",
    "source-line": "a 'Source:' line right under the statement",
    "lead-in": "the lead-in ending in ':' right above this list item",
}

# A link that names or defines something rather than giving evidence for a figure: an encyclopedia or dictionary
# article, a glossary entry, a person's page. (A home page is found by links.is_root_url.)
_DEFINING_URL_RE = re.compile(
    r"wikipedia\.org/wiki/|wiktionary\.org/|britannica\.com/|investopedia\.com/terms/|duden\.de/|larousse\.fr/"
    r"|merriam-webster\.com/|dictionary\.cambridge\.org/|dle\.rae\.es/|treccani\.it/|vandale\.nl/"
    r"|/(?:glossary|glossar|glossaire|glosario|glossario|woordenlijst|begrippen|lexikon|lexique|definitions?|terms?)"
    r"(?:/|#|\.html?|$)"
    r"|linkedin\.com/in/|/(?:people|person|persons|team|staff|authors?|profiles?|members?|speakers?)/[^/?#]+/?$",
    re.I)
# A site's index page of a topic, tag, category or community ("/topics/plain-language/", "/tags/ai/",
# "/communities/web-managers/"): it lists posts about a name, it is no evidence for a figure.
_INDEX_PAGE_RE = re.compile(
    r"^https?://[^/?#]+(?:/[a-z]{2}(?:-[a-z]{2})?)?/(?:topics?|tags?|categor(?:y|ies)|communit(?:y|ies)|themen|thema"
    r"|th[eè]mes?|temas?|onderwerpen|rubriques?)/[^/?#]*/?$", re.I)


def is_index_page(link: Link) -> bool:
    """A markdown link to a topic, tag or community index page, its label holding no digit."""
    return link.kind == "markdown" and _INDEX_PAGE_RE.search(link.url) is not None and not any(
        ch.isdigit() for ch in link.label)


# Words of a sentence that is only a citation: "See [x].", "Source: [x]", "Mehr dazu: [x]", "(via [x])".
_WORD_RE = re.compile(r"[^\W\d_]+")
_CITING_SENTENCE_MAX_WORDS = 3
_DIGIT_RE = re.compile(r"\d")
_NOTE_MARK_RE = re.compile(r"\[\^[^\[\]\n]{1,200}\]")


def is_defining(link: Link) -> bool:
    """A link a reader does not take as the evidence for a figure when another is beside it."""
    if link.kind == "footnote":
        return False
    return (is_site_page(link.url) or _DEFINING_URL_RE.search(link.url) is not None) and not any(
        ch.isdigit() for ch in link.label)


def _citing_only(text: str, lo: int, hi: int, links: Sequence[Link]) -> bool:
    """The sentence text[lo:hi] is nothing but its citations and a few words ("See [x].", "Source: [x]")."""
    rest, at = [], lo
    for ln in links:
        if lo <= ln.start < hi:
            rest.append(text[at:ln.start])
            at = ln.end
    rest.append(text[at:hi])
    return len(_WORD_RE.findall(" ".join(rest))) <= _CITING_SENTENCE_MAX_WORDS


# A list item that opens with its topic and a colon ("- **Land registry**: … since 2004; … at [site](…)", "- Fees:
# …"): one entry of a fact sheet, its sentences one statement, so a link anywhere in it is the entry's source.
# An item of several sentences that opens otherwise (a step: "9. Create the environment. It can take 10
# minutes. Install the package from [the index](…).") is read sentence by sentence, as a paragraph is.
_ENTRY_HEAD_RE = re.compile(r"[ \t>]*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?[*_]{0,2}([^\s:*_][^:\n]{0,80}?)[*_]{0,2}:")
_ENTRY_HEAD_MAX_WORDS = 8


def is_topic_entry(text: str) -> bool:
    """The list item's text opens with a topic of a few words and a colon (see _ENTRY_HEAD_RE)."""
    m = _ENTRY_HEAD_RE.match(text)
    return m is not None and len(m.group(1).split()) <= _ENTRY_HEAD_MAX_WORDS and "](" not in m.group(1)


def by_sentence(text: str, links: Sequence[Link], values: Sequence[Value], attributed: list[list[Value]],
                is_row: bool, orphans: bool = True,
                line_of: Callable[[int], int] | None = None, item: bool = False,
                named: Sequence[bool] | None = None) -> tuple[list[list[Value]], list[str]]:
    """Each link's figures (from its nearest ones, `attributed`) under the reader's rules, and each one's reason
    code (REASONS). `links`: the citations taking part, in order; `values`: every figure of the text; `orphans`:
    False when the figures of sentences citing nothing have a source of their own (a "Source:" line below).

    A figure whose sentence holds citations goes to the nearest of them (evidence before a link that defines a
    word). A figure whose sentence holds none keeps its nearest citation when that is a footnote or a sentence
    that is only a citation right after the figure's sentence ("…5 %. This is set by law.[^1]", "…5 %. See [the
    tables](…)."), a link in parentheses later on its line ("…5 %. Rates rose. ([source](…))"), a link before it
    on its line (a report going on), or any link on its line in a list item opening with its topic and a colon
    (`item`: one entry, is_topic_entry). A link in the running text of a later sentence of a paragraph is that
    sentence's. `named`: the links that name a site
    (names_sites), which give way to evidence beside them as a link defining a word does."""
    if is_row:  # a table row: one statement; a footnote still keeps to its own cell
        return _footnote_cells(text, links, attributed), ["footnote" if ln.kind == "footnote" else "table-row" for ln in links]
    sent = _sentence_ends(text)
    ends = sent[1]
    link_sent = [bisect_left(ends, ln.start + 1) for ln in links]  # the index of each link's sentence
    in_sentence: dict[int, list[int]] = {}
    for k, si in enumerate(link_sent):
        in_sentence.setdefault(si, []).append(k)
    defining = ([is_defining(ln) or bool(named and named[k]) for k, ln in enumerate(links)] if len(links) > 1
                else [False] * len(links))
    out: list[list[Value]] = [[] for _ in links]
    order = {v: i for i, v in enumerate(values)}
    reasons = ["nearest"] * len(links)
    moved = [False] * len(links)
    has_values = {bisect_left(ends, v.pos + 1) for v in values}
    for k, vs in enumerate(attributed):
        for v in vs:
            si = bisect_left(ends, v.pos + 1)
            peers = in_sentence.get(si)
            if peers is None:  # no citation in the figure's own sentence
                if orphans and _cites_orphan(text, links, k, si, link_sent, in_sentence, has_values, ends, line_of, v,
                                             item):
                    j = _reported_source(text, links, k, si, link_sent, in_sentence, attributed, ends, defining)
                    if j is not None:
                        out[j].append(v)
                continue
            j = k if k in peers else min(peers, key=lambda j: _distance(links[j], v))
            if defining[j] and not links[j].start <= v.pos < links[j].end:  # evidence beside it wins over a link
                # that defines a word (a figure in its own label stays its own)
                evidence = [i for i in peers if not defining[i]]
                if evidence:
                    j = min(evidence, key=lambda i: _distance(links[i], v))
                    moved[j] = True
            out[j].append(v)
    _notes_cite_backwards(links, out, link_sent)
    clauses = clause_ends(text) if any(ln.kind == "footnote" for ln in links) else ([], [])
    for k, ln in enumerate(links):
        if ln.kind == "footnote":  # its own clause when that states a figure ("…; rate 5 %[^1]"), else its sentence
            c_lo, c_hi = sentence_span(text, ln.start, ln.end, clauses)
            in_clause = [v for v in out[k] if c_lo <= v.pos and v.end <= c_hi]
            if any(v.salient for v in in_clause):
                out[k] = in_clause
            reasons[k] = "footnote"
        out[k].sort(key=order.__getitem__)  # the figures' reading order, as the nearest-link lists keep it
    _same_footnote_once(links, out, link_sent)
    for k, ln in enumerate(links):
        own_lo = ends[link_sent[k] - 1] if link_sent[k] else 0
        if moved[k]:
            reasons[k] = "evidence"
        elif any(ln.start <= v.pos and v.end <= ln.end for v in out[k]):
            reasons[k] = "label"
        elif out[k] and all(v.end <= own_lo for v in out[k]):
            reasons[k] = "next-sentence"
        elif reasons[k] == "nearest" and len(in_sentence[link_sent[k]]) == 1:
            reasons[k] = "only"
    return out, reasons


def _reported_source(text: str, links: Sequence[Link], k: int, si: int, link_sent: list[int],
                     in_sentence: dict[int, list[int]], attributed: list[list[Value]], ends: list[int],
                     defining: list[bool]) -> int | None:
    """The source of a figure in a sentence citing nothing whose nearest citation, k, is in the sentence right
    before it. A report goes on over several sentences ("[A poll](…) found 72 % would pay more. Specifically, 23 %
    would pay 5 % more."): the figure continues the first link of that sentence (a link defining a word last) when
    that sentence states figures. When it states none and it says more than a citation
    ("[Some studies](…) found the young worry more. Our respondents are 6.8 % …"), the figure is the writer's own:
    None. A nearest link two or more sentences on is not what the figure reports: the sentence before it is read
    the same way. Any other case: k, as before."""
    ks = link_sent[k]
    if links[k].kind == "footnote":
        return k
    if ks >= si + 2 and si - 1 in in_sentence:  # nearest is two sentences on: the report of the sentence before
        ks = si - 1
    elif ks != si - 1 or links[k].start > (ends[si - 1] if si else 0):
        return k
    peers = in_sentence[ks]
    lo = ends[ks - 1] if ks else 0
    hi = ends[ks] if ks < len(ends) else len(text)
    if _citing_only(text, lo, hi, [links[j] for j in peers]):
        return k if link_sent[k] == ks else peers[0]
    if not any(lo <= v.pos < hi and v.salient for vs in attributed for v in vs):
        return None
    return min(peers, key=lambda j: (defining[j], j))


def _notes_cite_backwards(links: Sequence[Link], out: list[list[Value]], link_sent: list[int]) -> None:
    """A note marker closes the text it supports ("in June 2016[^1] and since 1 January 2021 the [Decree](…)"): a
    figure after it goes to the next citation of the same sentence when there is one."""
    for k, ln in enumerate(links):
        if ln.kind != "footnote" or not out[k]:
            continue
        nxt = next((j for j in range(k + 1, len(links)) if link_sent[j] == link_sent[k]), None)
        if nxt is None or links[nxt].url == ln.url:  # the same source marked again: nothing to move
            continue
        after = [v for v in out[k] if v.pos >= ln.end and v.end <= links[nxt].start]
        if after:
            out[k] = [v for v in out[k] if v not in after]
            out[nxt].extend(after)


def _cites_orphan(text: str, links: Sequence[Link], k: int, si: int, link_sent: list[int],
                  in_sentence: dict[int, list[int]], has_values: set[int], ends: list[int],
                  line_of: Callable[[int], int] | None, v: Value, item: bool = False) -> bool:
    """Does link k, the nearest citation of figure v whose sentence (si) cites nothing, cite it? `item`: the text
    is a list item opening with its topic (is_topic_entry), one statement: a link on the figure's line cites it
    wherever it stands."""
    ln = links[k]
    same_line = line_of is None or line_of(v.pos) == line_of(ln.start)
    if ln.kind == "footnote":  # its own sentence, or the one right before when its own states no number
        if link_sent[k] == si:
            return True
        if link_sent[k] != si + 1 or si + 1 in has_values:
            return False
        lo = ends[si] if si < len(ends) else len(text)
        hi = ends[si + 1] if si + 1 < len(ends) else len(text)
        return _DIGIT_RE.search(_NOTE_MARK_RE.sub("", text[lo:hi])) is None
    if same_line and (item or link_sent[k] < si or (link_sent[k] >= si + 2 and si - 1 in in_sentence)):
        return True  # a report going on after its citation (_reported_source decides which)
    # A citation in a later sentence: only one written as a citation of what came before, a sentence that is
    # nothing but a citation ("…5 %. See [the tables](…).") or a link in parentheses ("…5 %. Rates rose.
    # ([source](…))"). A link in the running text of another sentence belongs to that sentence ("…in 2015.
    # Reaching it avoids [the worst effects](…).", "…since 2019. Read more in our [article](…).").
    if link_sent[k] != si + 1 and not same_line:
        return False
    ks = link_sent[k]
    lo = ends[ks - 1] if ks else 0
    hi = ends[ks] if ks < len(ends) else len(text)
    if same_line and in_parentheses(text, lo, ln):
        return True
    return (same_line or not is_root_url(ln.url)) and _citing_only(text, lo, hi, [links[j] for j in in_sentence[ks]])


# What a writer puts right before a link given as the source of a figure: a source word, the agent of a passive
# ("set by", "administered by"), the authority a rule falls under ("under the [Ministry](…)", "pursuant to"), the
# place the figure is at ("verified at", "published on", "from"), a colon or an opening parenthesis; then maybe an
# article and emphasis marks.
_CITING_BEFORE_RE = re.compile(
    r"(?:(?<![\w-])(?:sources?|quellen?|bron(?:nen)?|fuentes?|fonti|fonte|according\s+to|per|by|at|on|from|via"
    r"|under|pursuant\s+to|unter|sous|onder|krachtens|bajo|sotto"
    r"|see|siehe|voir|zie|vedi|véase|selon|d['’]après|laut|gemäß|volgens|según|secondo|par|von|door|da|por)"
    r"|[:(])[\s*_]*(?:(?:the|la|le|les|l['’]|der|die|das|dem|den|de|het|el|los|las|il|lo|gli)[\s*_]+)?$", re.I)
_LOOK_BACK = 40
# Between two links of one list: "or", "and", "/", ",", "+", "·", "&", ";" (and spaces, emphasis marks, an article).
_GLUE_RE = re.compile(r"[\s*_]*(?:or|and|/|,|\+|·|&|;|und|et|y|e|en|o|ou|oder|of)?[\s*_]*"
                      r"(?:(?:the|la|le|les|l['’]|der|die|das|de|het|el|los|las|il|lo|gli)[\s*_]+)?", re.I)


# An organisation's "about" page: like its home page, it names the organisation.
_ABOUT_PAGE_RE = re.compile(
    r"^https?://[^?#]+/(?:about(?:[-_]us)?|a-propos|qui-sommes-nous|ueber-uns|über-uns|uber-uns|over-ons|wie-zijn-wij"
    r"|acerca-de|quienes-somos|chi-siamo)/?$", re.I)
# An event's page (a meeting, webinar, summit the text announces or looks back on): it invites or reports a
# gathering, it is no evidence for a figure ("hosted a 2-day summit on [ux](https://site.example/event/2021/…)").
_EVENT_PAGE_RE = re.compile(
    r"^https?://[^/?#]+(?:/[^?#]*)?/(?:events?|webinars?|veranstaltung(?:en)?|[eé]v[eé]nements?|eventos?|eventi"
    r"|evenementen|meetups?)/[^?#]", re.I)


# A page to act on rather than read: apply, register, sign up, subscribe, join, donate, contact ("the [form](https://
# aid.example/apply-for-aid/form)"): it invites an action, it is no evidence for a figure.
_ACTION_PAGE_RE = re.compile(
    r"^https?://[^/?#]+(?:/[^?#]*)?/(?:apply|register|registration|sign-?up|subscribe|join|donate|contact|login"
    r"|inscription|anmeldung|aanmelden|inscripci[oó]n|iscrizione)(?:-(?:for|now|here|online|today|us)\b[^/?#]*)?"
    r"(?:[/?#]|$)", re.I)


# A project's home page on a code host's pages service: its root is the first path segment
# ("https://owner.github.io/handbook/", "https://group.gitlab.io/guide/").
_PROJECT_SITE_RE = re.compile(r"^https?://[^/?#]+\.(?:github|gitlab)\.io/[^/?#]+/?$", re.I)


def is_site_page(url: str, label: str = "") -> bool:
    """A site's home page (a project's on a pages host too), its "about" page, or the page of the thing the label
    names right under the site's root ("[City Guild (CG)](https://site.example/city-guild)")."""
    return (is_root_url(url) or _ABOUT_PAGE_RE.match(url) is not None or (".io/" in url and _PROJECT_SITE_RE.match(url) is not None)
            or (bool(label) and _names_page(url, label)))


_ONE_SEGMENT_RE = re.compile(r"^https?://[^/?#]+/([^/?#]{4,80})/?$")
_NOT_SLUG_RE = re.compile(r"[\W_]+")


def _names_page(url: str, label: str) -> bool:
    """The URL's one path segment is the label's name ('rijks-ict-gilde' for "Rijks ICT Gilde (RIG)")."""
    m = _ONE_SEGMENT_RE.match(url)
    if m is None or any(ch.isdigit() for ch in label):
        return False
    segment = _NOT_SLUG_RE.sub("", m.group(1).lower())
    return len(segment) >= 4 and _NOT_SLUG_RE.sub("", label.lower()).startswith(segment)


# What every event or action page's path holds (a '/' then the segment's start): led by a plain '/', so the scan
# skips ahead in C.
_INVITING_HINT_RE = re.compile(
    r"/(?i:ev[eé]n|év[eé]n|event|webinar|veranstalt|meetup|apply|regist|sign|subscri|join|donate|contact|login|inscri"
    r"|anmeld|aanmeld|iscriz)")


def no_evidence(text: str, links: Sequence[Link]) -> tuple[list[bool], list[bool]] | None:
    """For each link: is it a site named in the running text (names_sites); is it an event's page or a page to act
    on (apply, register, join)? Neither is the source of a figure. Returns None when no link may be either (the
    common case, found with two cheap tests a link)."""
    if not any(is_site_page(ln.url, ln.label) or _INVITING_HINT_RE.search(ln.url) for ln in links):
        return None
    return names_sites(text, links), [_EVENT_PAGE_RE.match(ln.url) is not None or _ACTION_PAGE_RE.match(ln.url) is not None
                                      for ln in links]


_last_ends: list[tuple[str, tuple[list[int], list[int]]]] = []


def _sentence_ends(text: str) -> tuple[list[int], list[int]]:
    """sentence_ends(text), kept for the last text asked (names_sites and by_sentence read the same line)."""
    if _last_ends and _last_ends[0][0] is text:
        return _last_ends[0][1]
    found = sentence_ends(text)
    _last_ends[:] = [(text, found)]
    return found


def names_sites(text: str, links: Sequence[Link]) -> list[bool]:
    """For each link: is it a site's home page named in the running text ("launched the [Digital Corps](https://
    corps.example/) in 2021", "through [our website](…)", "[Section 508](https://section508.example/) compliant"),
    the thing the sentence is about rather than the source of its figures? A home page given as a source is
    written as one: after a source word, an agent or a place ("administered by the [Bank](…)", "verified at
    [x.gov](…)"), after a colon ("Primary sources: [A](…), [B](…)"), in parentheses ("…5 % ([Agency](…))"), or as
    the whole of its sentence. Only markdown links: a URL written out (`https://x.gov/`) is an address given."""
    out: list[bool] = []
    ends = _sentence_ends(text)[1]
    for k, ln in enumerate(links):
        if ln.kind != "markdown" or not is_site_page(ln.url, ln.label):
            # named with a site named right before it ("[Club](https://club.example/) and [Lab](…/the-lab/berlin)
            # opened …"): a list of names
            out.append(k > 0 and out[k - 1] and ln.kind == "markdown" and not any(ch.isdigit() for ch in ln.label)
                       and _GLUE_RE.fullmatch(text, links[k - 1].end, ln.start) is not None)
            continue
        si = bisect_left(ends, ln.start + 1)
        lo = ends[si - 1] if si else 0
        hi = ends[si] if si < len(ends) else len(text)
        cited = (_CITING_BEFORE_RE.search(text, max(lo, ln.start - _LOOK_BACK), ln.start) is not None
                 or in_parentheses(text, lo, ln)
                 or (k > 0 and not out[k - 1] and links[k - 1].end >= lo
                     and _GLUE_RE.fullmatch(text, links[k - 1].end, ln.start) is not None)
                 or _citing_only(text, lo, hi, [x for x in links if lo <= x.start < hi]))
        out.append(not cited)
    return out


def in_parentheses(text: str, lo: int, link: Link) -> bool:
    """The link stands inside parentheses opened in text[lo:link.start] ("([FAO](…))", "(Source: [x](…), 2024)")."""
    return text.rfind("(", lo, link.start) > text.rfind(")", lo, link.start)


def _distance(link: Link, v: Value) -> tuple[int, int]:
    """The reference key of a figure to a link: overlap, then distance, a following link winning ties."""
    if link.start < v.end and v.pos < link.end:
        return (0, 0)
    return (link.start - v.end, 0) if link.start >= v.end else (v.pos - link.end, 1)


def _same_footnote_once(links: Sequence[Link], out: list[list[Value]], where: Sequence[int] | None = None) -> None:
    """One footnote marked twice in a sentence ("20.5 % up to €72,810[^1], and 14.16 % up to €107,300[^1]")
    gives its source to the figures of both: kept on the first marker. `where`: each link's sentence (None: one)."""
    first: dict[tuple[str, int], int] = {}
    for k, ln in enumerate(links):
        if ln.kind != "footnote":
            continue
        key = (ln.url, where[k] if where is not None else 0)
        if key in first:
            out[first[key]].extend(out[k])  # lists made by by_sentence or _footnote_cells: extended in place
            out[k] = []
        else:
            first[key] = k



def _footnote_cells(text: str, links: Sequence[Link], attributed: list[list[Value]]) -> list[list[Value]]:
    """A table row: a footnote gives its source to the figures of its own cell only."""
    out = list(attributed)
    ends = clause_ends(text)
    for k, ln in enumerate(links):
        if ln.kind == "footnote":
            lo, hi = sentence_span(text, ln.start, ln.end, ends)
            out[k] = [v for v in attributed[k] if lo <= v.pos and v.end <= hi]
    _same_footnote_once(links, out)
    return out
