"""Corpus → claims: every line that states a salient figure next to a primary-source citation.

Pure library (no Dagster, pandas or httpx). The per-line work is only done on lines that hold a URL; every
other line costs a couple of string checks, which keeps extraction within a small factor of reading the files.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path

from claims_pipeline.common.urls import url_host
from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.settings import ExtractionSettings
from claims_pipeline.corpus.attribution import attribute_values, by_sentence, is_index_page, is_topic_entry, no_evidence
from claims_pipeline.corpus.blocks import (
    HEADING_RE,
    HEADING_START_RE,
    SETEXT_UNDERLINE_RE,
    Paragraph,
    blank_comments,
    code_spans,
    enclosed,
    eol,
    in_spans,
    last_heading,
    outline,
    run_around,
    setext_headings,
    wrapped_paragraphs,
)
from claims_pipeline.corpus.figure_kinds import HOWTO_NOUNS, kind_reading
from claims_pipeline.corpus.links import (
    TEMPLATE_RE,
    Link,
    decode_entities,
    find_links,
    is_pointer_link,
    is_root_url,
    is_template_figure,
    mask_templates,
    mask_urls,
    repair_schemes,
)
from claims_pipeline.corpus.numbers import parse_number
from claims_pipeline.corpus.pool import ChunkResult, FileJob, pool_size, run_in_pool
from claims_pipeline.corpus.reading import DEFAULT_MAX_FILE_BYTES, read_markdown, with_newlines
from claims_pipeline.corpus.records import ClaimRecord, Extraction, ExtractWarning, InlineStamp, Value, VerifiedOrigin
from claims_pipeline.corpus.references import (
    CITE_HINT_RE,
    CITE_USE_RE,
    HTML_NOTE_HINT_RE,
    HTML_NOTE_USE_RE,
    References,
    is_cite_entry,
    is_definition,
    is_html_note,
    parse_references,
    reference_links,
)
from claims_pipeline.corpus.references import USE_RE as REFERENCE_USE_RE
from claims_pipeline.corpus.scopes import list_scopes, walk_corpus
from claims_pipeline.corpus.scopes import resolve_scope_filter as _resolve
from claims_pipeline.corpus.sentences import sentence_ends, sentences
from claims_pipeline.corpus.source_lines import SOURCE_HINT_RE, SOURCE_LINE_RE, find_lead_ins, find_source_lines
from claims_pipeline.corpus.stamps import file_last_verified, find_inline_stamp, mask_stamps
from claims_pipeline.corpus.tiers import SECONDARY_TIER, PrimaryHosts, builtin_official_hosts, is_official, source_tier
from claims_pipeline.corpus.values import extract_values, num_needles

__all__ = ["list_scopes", "extract_corpus", "extract_text", "resolve_scope_filter", "extraction_stats"]

log = logging.getLogger(__name__)

_DIGIT_RE = re.compile(r"\d")
# A line holding a citation: from its first "://" (or "](") to the end of the line, so one hit per line.
# "://", not "http": a scheme may be written in capitals ("HTTPS://…"), and a case-blind scan is several times slower.
_SCHEME_TO_EOL_RE = re.compile(r"://[^\n]*")
_MD_TARGET_TO_EOL_RE = re.compile(r"\]\([^\n]*")
# Between two links of one list: "or", "and", "/", ",", "+", "·", "&", ";" (and spaces, emphasis marks).
_LIST_GLUE_RE = re.compile(r"[\s*_]*(?:or|and|/|,|\+|·|&|;)?[\s*_]*", re.I)
# Literal searches as compiled patterns: on Latin-1 text SRE's literal search beats `str.__contains__` (not on text
# with wider characters: benchmarks/README.md), and most files hold neither, so the whole text is scanned.
_COMMENT_OPEN_RE = re.compile("<!--")
_DEFINITION_HINT_RE = re.compile(r"\]:")
# Every pointer clause holds one of these verbs (links._POINTER_VERB_RE).
# Case-blind, but led by a plain character set so the scan skips ahead in C (with re.I alone it cannot).
# A bibliography or reading list names works; its dates and numbers are the works', not claims. A section under
# such a heading, in the six languages read, and an entry written in a citation style: "Smith, J. (2019). Title",
# "Smith, J., & Doe, A., 2020.", "OECD (2021). Title", "Müller, Anna (2018): Titel".
_BIBLIOGRAPHY_HEADING_RE = re.compile(
    r"\b(?:references|bibliography|further reading|reading list|literature|literatur(?:verzeichnis|liste)?"
    r"|weiterführende literatur|bibliographie|références bibliographiques|pour aller plus loin|lectures"
    r"|bibliograf[íi]a|lecturas recomendadas|letture consigliate|literatuur(?:lijst)?|leeslijst"
    # a "Sources" section lists sources, in the languages other than English ("Sources" itself: skip_headings)
    r"|bronnen|quellen(?:verzeichnis|angaben)?|fuentes|fonti|referenties|referenzen|referencias|riferimenti)\b", re.I)
# A heading that is nothing but the name of a list of resources or links ("Resources:", "Liste de ressources",
# "Further resources", "Weiterführende Links"): its entries name pages to read, their dates and numbers are theirs.
_RESOURCES_HEADING_RE = re.compile(
    r"[*_ ]*(?:(?:liste de|list of|additional|further|more|other|useful|related|key|weitere|weiterführende"
    r"|autres|otras|altre|meer|overige|nuttige)\s+)?"
    r"(?:resources?|ressources|recursos|risorse|hulpbronnen|links|liens|weblinks|enlaces|collegamenti)"
    r"(?:\s+(?:utiles|útiles|utili|und quellen|et sources))?[*_ ]*:?[*_ ]*", re.I)
_RESOURCES_LINE_RE = re.compile(rf"^(?:{_RESOURCES_HEADING_RE.pattern})$", re.I | re.M)  # one title a line


def _lists_works(title: str, opts: ExtractOptions, whole: bool = True) -> bool:
    """A section whose heading says it lists works or sources (a bibliography, a reading list, the headings
    the settings skip): no claims in it. `whole` False: `title` is several titles, one a line (may any be one?)."""
    if (opts.skip_heading_re and opts.skip_heading_re.search(title)) or _BIBLIOGRAPHY_HEADING_RE.search(title):
        return True
    if whole:
        return _RESOURCES_HEADING_RE.fullmatch(title) is not None
    return _RESOURCES_LINE_RE.search(title) is not None


def _inside_works(heads: list[tuple[int, int, str]], opts: ExtractOptions) -> dict[int, bool]:
    """The headings (by start) under one whose section lists works (_lists_works). All titles are tried at once
    first: most files have no such heading, and then nothing is under one."""
    if not heads or not _lists_works("\n".join(t for _s, _l, t in heads), opts, whole=False):
        return {}
    marked = [_lists_works(t, opts) for _s, _l, t in heads]
    return dict(zip([s for s, _l, _t in heads], enclosed([lvl for _s, lvl, _t in heads], marked)))


_CAP = r"[A-ZÀ-ÖØ-Þ]"
_BIBLIOGRAPHY_ENTRY_RE = re.compile(
    r"[ \t>]*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?[*_]*\[?"
    rf"(?:{_CAP}[\w'’-]+(?:[ -]{_CAP}[\w'’-]+)?,[ \t]+(?:{_CAP}\.[ \t]?(?:-?{_CAP}\.[ \t]?)*|{_CAP}[a-zà-ÿ]+)"
    rf"(?:,?[ \t]+(?:&|and|et|und|y|e|en)[ \t]+{_CAP}[\w'’-]+,?[ \t]+(?:{_CAP}\.[ \t]?)*)?"
    rf"|{_CAP}[\w&.'’-]*(?:[ \t]{_CAP}[\w&.'’-]*){{0,5}})"
    r"[*_\]]*,?[ \t]*\((?:19|20)\d\d[a-z]?\)[.:](?:\s|$)")
# The other common entry style: a quoted, linked title, then its author or publisher and date
# ('"[Title](…)", Agency, mars 2019'; a list marker or a flag may lead).
_QUOTED_TITLE_ENTRY_RE = re.compile(r"[^\w\[\n]{0,12}[\"“«„]\s*\[[^\[\]\n]+\]\([^\n]*?\)\s*[\"”»“]\s*,")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")
_WORDS_RE = re.compile(r"[^\W\d_]+")
_SOURCE_LINE_ANY_RE = re.compile(r"^" + SOURCE_LINE_RE.pattern, re.M)  # a "Sources:" line anywhere in a range


# A list item that is one linked title and at most a publisher's name after it ("- [Title](…) — Agency", "* [Title](…)
# (PDF)"): an entry of a list of documents to read.
_LIST_MARK_RE = re.compile(r"[ \t>]*(?:[-*+]|\d{1,3}[.)])[ \t]+[*_]*")
_TITLE_ITEM_MAX_WORDS = 3


def _is_linked_title_item(line: str, link: Link) -> bool:
    m = _LIST_MARK_RE.match(line)
    if m is None or line[m.end():link.start].strip("*_ \t\"“”«»"):
        return False  # not a list item, or words before the link: a statement
    tail = line[link.end:]
    return not _DIGIT_RE.search(tail) and len(_WORDS_RE.findall(tail)) <= _TITLE_ITEM_MAX_WORDS


def _names_host(label: str, host: str) -> bool:
    """The label is the site's name ("Klaxit" for klaxit.com, "CMA CGM" for cma-cgm.com): on its home page, the
    thing the sentence is about, not a document giving its figures."""
    name = _NOT_ALNUM_RE.sub("", label).lower()
    return len(name) >= 3 and not any(ch.isdigit() for ch in name) and name in _NOT_ALNUM_RE.sub("", host.lower())


# A document's file type and size beside its link ("(PDF, 1.1 MB, 36 pages)", "(.pptx, 9MB)"): what a site writes
# about the file, not a figure of the text.
_FILE_NOTE_RE = re.compile(r"\(\s*\.?(?i:pdf|docx?|xlsx?|pptx?|csv|zip|odt|ods|txt|epub|powerpoint)\b[^()\n]{0,80}\)")
# The length of a recording a link's label offers ("[watch the 28-minute, 13-second video](…)", "[12 min podcast]"):
# what the site writes about the file, not a figure of the text.
_MEDIA_HINT_RE = re.compile(r"(?i:video|vid[eé]o|recording|podcast|webinar|audio|clip|film|aufzeichnung|opname)")
_MEDIA_LENGTH_RE = re.compile(
    r"\d+(?:[.,]\d+)?[- \u00a0]?(?i:hours?|hrs?|minutes?|mins?|seconds?|secs?|stunden?|minuten?|sekunden?|heures?|secondes?"
    r"|minutos?|segundos?|minuti|secondi|uur|seconden)\b(?:[,\s]+(?:and\s+|und\s+|et\s+|en\s+)?\d+[- \u00a0]?[^\W\d_]+)*"
    r"(?=[- \u00a0](?:\S+[- \u00a0]){0,2}?" + _MEDIA_HINT_RE.pattern + r")")
_LEAD_IN_HINT_RE = re.compile(r":[*_]*[ \t]*\n")  # a line ending in ':' (source_lines.find_lead_ins)
# What stands before a sentence's first word and is no part of it: spaces and a line break written as HTML ("…
# können.<br/>\n**Spezifikation**: …"): the sentence starts on the line after them.
_SENTENCE_LEAD_RE = re.compile(r"(?:\s|<br\s*/?>)*", re.I)


def _sentence_start(text: str, lead: int) -> int:
    m = _SENTENCE_LEAD_RE.match(text, lead)  # always matches (possibly empty)
    return m.end() if m is not None and m.end() < len(text) else lead


_POINTER_WORD_RE = re.compile(r"[vVcC](?:(?<=[vV])(?i:erify)|(?<=[cC])(?i:onfirm|heck))")


@dataclass(frozen=True)
class ExtractOptions:
    """Everything the line loop needs, compiled once per run."""

    allowlist: PrimaryHosts
    own: PrimaryHosts | None
    tier_cache: dict[str, str | None]  # host -> tier; hosts repeat across a corpus
    url_cache: dict[str, tuple[str, str | None]]  # url -> (host, tier); cited URLs repeat too
    skip_heading_re: re.Pattern[str] | None
    section_filter: str | None
    primary_only: bool
    min_salient: int
    window: int
    lookback: int
    max_line_chars: int
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # A home page named in the running text, an event's page, a page to act on: no source, so no claim. The linter
    # turns this off: a figure beside a home page's link is exactly what it reports, whatever the link's role.
    links_as_names: bool = True

    def tier_of(self, host: str) -> str | None:
        if host not in self.tier_cache:
            self.tier_cache[host] = source_tier(host, self.allowlist, self.own) if host else None
        return self.tier_cache[host]

    def host_and_tier(self, url: str) -> tuple[str, str | None]:
        hit = self.url_cache.get(url)
        if hit is None:
            host = url_host(url)
            hit = self.url_cache[url] = (host, self.tier_of(host))
        return hit

    @classmethod
    def of(cls, ex: ExtractionSettings, primary_hosts: Collection[str] = (), *, section: str | None = None,
           include_secondary: bool = False) -> ExtractOptions:
        """primary_hosts: the hosts listed as official (CorpusSource.primary_hosts), beside the built-in ones."""
        words = [re.escape(h.strip()).replace(r"\ ", r"\s+") for h in ex.skip_headings if h.strip()]
        # Whole words: "Sources" skips "Primary sources" but not "Water resources".
        skip_re = re.compile(r"\b(?:" + "|".join(words) + r")\b", re.I) if words else None
        return cls(
            allowlist=PrimaryHosts(builtin_official_hosts() | set(primary_hosts)),
            own=PrimaryHosts(ex.own_hosts) if ex.own_hosts else None,
            tier_cache={},
            url_cache={},
            skip_heading_re=skip_re,
            section_filter=section.lower() if section else None,
            primary_only=ex.primary_only and not include_secondary,
            min_salient=ex.min_salient_values,
            window=ex.claim_window_chars,
            lookback=ex.pointer_lookback_chars,
            max_line_chars=ex.max_line_chars,
            max_file_bytes=ex.max_file_bytes,
        )


def claim_sentence(line: str, link_start: int, window: int, figures: tuple[int, int] | None = None) -> str:
    """The stripped line, or a window of it with '…' marking cuts. The window holds the link start and the
    claim's own figures (`figures`: the span from the first to the last one) when they fit in it, centred on
    them; else it starts at the first figure. (Centred on the link alone, a long line citing at its end would
    lose the very figures the claim is about.)"""
    lead = len(line) - len(line.lstrip())
    line = line.strip()
    if len(line) <= window:
        return line
    lo = hi = max(0, link_start - lead)
    if figures is not None:
        lo, hi = min(lo, figures[0] - lead), max(hi, figures[1] - lead)
    if hi - lo <= window:
        centre = (lo + hi) // 2
        lo = max(0, min(centre - window // 2, len(line) - window))
    else:
        lo = max(0, (figures[0] - lead) if figures is not None else lo - window // 2)
    hi = min(len(line), lo + window)
    return ("…" if lo > 0 else "") + line[lo:hi].strip() + ("…" if hi < len(line) else "")


def extract_text(text: str, *, scope: str, rel: str, opts: ExtractOptions, out: Extraction, id_scope: str | None = None) -> None:
    """Append the claims (and warnings, pointer skips) of one file's text to `out`.

    Only lines holding a citation are visited. They, the fence markers and each one's heading are found by
    scans over the whole text (C speed), so the many other lines of a file cost no Python work at all. The
    outcome is the same as walking the text's lines (CommonMark line endings, reading.with_newlines) one by
    one with the fence and heading state.
    """
    text = repair_schemes(decode_entities(with_newlines(text)))
    if _COMMENT_OPEN_RE.search(text):  # HTML comments are not published: blank them (newlines kept: line numbers hold)
        text = blank_comments(text)
    file_verified = file_last_verified(text)
    rfind, digit, max_chars = text.rfind, _DIGIT_RE.search, opts.max_line_chars
    # A line with no digit and no "](" gives nothing (no claim, no link warning) unless it is too long (a
    # warning): it is left out here, and the section state it skips is the same (the last heading before a
    # line). "](" lines are all kept by the second scan.
    cites = set()
    for m in _SCHEME_TO_EOL_RE.finditer(text):
        start = rfind("\n", 0, m.start()) + 1
        if digit(text, start, m.end()) is not None or m.end() - start > max_chars:
            cites.add(start)
    if "](" in text:
        cites.update(rfind("\n", 0, m.start()) + 1 for m in _MD_TARGET_TO_EOL_RE.finditer(text))
    refs = (parse_references(text) if _DEFINITION_HINT_RE.search(text) or HTML_NOTE_HINT_RE.search(text)
            or CITE_HINT_RE.search(text) else None)
    if refs:  # lines citing by reference or footnote, with a figure
        for m in chain(REFERENCE_USE_RE.finditer(text), HTML_NOTE_USE_RE.finditer(text) if refs.anchors else (),
                       CITE_USE_RE.finditer(text) if refs.cites else ()):
            start = rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            if digit(text, start, end if end >= 0 else len(text)) is not None:
                cites.add(start)
    templated = "{{" in text or "{%" in text
    if not cites and SOURCE_HINT_RE.search(text) is None and not templated:
        return
    fenced = code_spans(text)  # fenced code and front matter: no claim, no heading
    if templated:  # figures a template prints are no figures of the text: counted, never read
        out.skipped_template_figures += sum(1 for m in TEMPLATE_RE.finditer(text)
                                            if is_template_figure(text, m) and not (fenced and in_spans(fenced, m.start())))
    sources = find_source_lines(text, lambda pos: bool(fenced) and in_spans(fenced, pos))
    leads = find_lead_ins(text, lambda pos: bool(fenced) and in_spans(fenced, pos)) if _LEAD_IN_HINT_RE.search(text) else {}
    if leads:  # a list under a lead-in that cites; a "Source:" line under an item wins
        sources = sources if sources is not None else {}
        for s, lead_links in leads.items():
            sources.setdefault(s, lead_links)
    if sources is not None:  # statements whose source is on the line after them
        cites.update(s for s in sources if digit(text, s, eol(text, s)) is not None)
    if not cites:
        return
    setext_starts, setext_titles = setext_headings(text, fenced) if SETEXT_UNDERLINE_RE.search(text) else ([], {})
    seen: set[str] = set()
    line_no, counted_to = 1, 0
    heading_at, prev = -1, 0  # start of the line of the section's heading (-1: none yet); previous cite line
    section, skipping, selected = "", False, opts.section_filter is None
    run_hi, done, listed_at = -1, set(), -1  # the end of the current run of lines; the paragraphs read (by their first line)
    paragraphs: dict[int, Paragraph] = {}
    inside: dict[int, bool] | None = None  # each heading: is it under one whose section lists works (made once)
    for start in sorted(cites):
        line_no += text.count("\n", counted_to, start)
        counted_to = start
        h = last_heading(text, prev, start, fenced)
        if setext_starts:  # a setext heading after the last ATX one in [prev, start) is the section
            k = bisect_left(setext_starts, start) - 1
            if k >= 0 and setext_starts[k] >= prev and setext_starts[k] > h:
                h = setext_starts[k]
        prev = start
        if h >= 0 and h != heading_at:
            heading_at = h
            if h in setext_titles:
                section = setext_titles[h]
            else:
                end = text.find("\n", h)
                heading = HEADING_RE.match(text[h:end] if end >= 0 else text[h:])
                assert heading is not None  # _last_heading only returns heading lines
                section = heading.group(2).strip()
            skipping = _lists_works(section, opts)
            if not skipping:  # a subsection of a bibliography or a list of resources is one too
                if inside is None:
                    inside = _inside_works(outline(text, fenced, setext_titles), opts)
                skipping = inside.get(h, False)
            selected = opts.section_filter is None or opts.section_filter in section.lower()
        if skipping or not selected or (fenced and in_spans(fenced, start)):
            continue
        if (text.startswith("#", start) and HEADING_START_RE.match(text, start)) or start in setext_titles:
            continue  # a heading is never a claim
        if start > run_hi:  # a new run of non-blank lines: its wrapped paragraphs, if any
            run_lo, run_hi = run_around(text, start)
            # where a "Sources:" line stands in the run: the list under it names sources, no reading list
            listed_at = sl.start() if sources is not None and (sl := _SOURCE_LINE_ANY_RE.search(text, run_lo, run_hi)) else -1
            paragraphs = wrapped_paragraphs(text, run_lo, run_hi, fenced) if run_lo < start or run_hi > eol(text, start) else {}
        if (para := paragraphs.get(start)) is not None:
            if para.line_starts[0] in done:
                continue
            done.add(para.line_starts[0])
            first = line_no - text.count("\n", para.line_starts[0], start)
            borrowed = [ln for s in para.line_starts for ln in sources.get(s, ())] if sources is not None else None
            _claims_of_paragraph(para, first, scope, rel, section, file_verified, opts, out, seen, id_scope or scope,
                                 refs, borrowed, _borrowed_reason(leads, sources, para.line_starts[0]))
            continue
        end = text.find("\n", start)
        line = text[start:end] if end >= 0 else text[start:]
        if len(line) > opts.max_line_chars:
            out.warnings.append(ExtractWarning(rel, line_no, f"line of {len(line):,} chars cut to {opts.max_line_chars:,}"))
            line = line[: opts.max_line_chars]
        _claims_of_line(line, line_no, scope, rel, section, file_verified, opts, out, seen, id_scope or scope, refs,
                        sources.get(start) if sources is not None else None,
                        borrowed_reason=_borrowed_reason(leads, sources, start),
                        reading_list=not 0 <= listed_at < start)


def _borrowed_reason(leads: dict[int, list[Link]], sources: dict[int, list[Link]] | None, start: int) -> str:
    return "lead-in" if sources is not None and start in leads and sources[start] is leads[start] else "source-line"


def _claims_of_paragraph(para: Paragraph, first: int, scope: str, rel: str, section: str, file_verified: str | None,
                         opts: ExtractOptions, out: Extraction, seen: set[str], id_scope: str,
                         refs: References | None, borrowed: list[Link] | None, borrowed_reason: str) -> None:
    """A paragraph wrapped over several lines, read as one text; each claim is on the line its sentence starts on."""
    text = para.text
    if len(text) > opts.max_line_chars:
        out.warnings.append(ExtractWarning(rel, first, f"paragraph of {len(text):,} chars cut to {opts.max_line_chars:,}"))
        text = text[: opts.max_line_chars]
    _claims_of_line(text, first, scope, rel, section, file_verified, opts, out, seen, id_scope, refs, borrowed or None,
                    line_of=lambda pos: first + para.line_index(pos), borrowed_reason=borrowed_reason, item=para.item and is_topic_entry(text))


def _claims_of_line(line: str, line_no: int, scope: str, rel: str, section: str, file_verified: str | None,
                    opts: ExtractOptions, out: Extraction, seen: set[str], id_scope: str,
                    refs: References | None = None, borrowed: list[Link] | None = None,
                    line_of: Callable[[int], int] | None = None, borrowed_reason: str = "source-line",
                    reading_list: bool = True, item: bool = False) -> None:
    """The claims of one text: a line, or a wrapped paragraph's lines joined (`line_of`: the line of a position).
    `reading_list`: False for an item of a list under a "Sources:" line (its linked titles keep their claims);
    `item`: the paragraph is a list item's text (a line read on its own says so by its marker)."""
    if "{{" in line or "{%" in line:  # template markers: what they print is made at build time, not written here
        line = mask_templates(line)[0]
    if _DIGIT_RE.search(line) is None:
        # No figure anywhere, so no claim: only the link warnings matter, and both kinds need a "](" on the
        # line (unbalanced brackets, non-http targets). Most citation lines of a corpus end here.
        if "](" in line:
            for p in find_links(line)[1]:
                out.warnings.append(ExtractWarning(rel, line_no, p))
        return
    links, problems = find_links(line)
    for p in problems:
        out.warnings.append(ExtractWarning(rel, line_no, p))
    if _BIBLIOGRAPHY_ENTRY_RE.match(line) or _QUOTED_TITLE_ENTRY_RE.match(line):
        return  # a bibliography or reading-list entry names a work: no claim
    if reading_list and len(links) == 1 and _is_linked_title_item(line, links[0]):
        return  # "- [Section 3.3 Service Terms](…) — Agency": a reading list names a document, its title's numbers too
    if "]:" in line and is_definition(line):  # "[r]: https://…", "[^1]: [Agency](…) (May 2025)": a source, no statement
        return
    if refs and refs.anchors and "<li" in line and is_html_note(line, refs):
        return  # an HTML footnote's list item: a source, no statement
    if refs and refs.cites and "[@" in line and is_cite_entry(line, refs):
        return  # a bibliography entry named by its citation key: a source, no statement
    if refs:
        by_ref = [r for r in reference_links(line, refs) if not any(ln.start < r.end and r.start < ln.end for ln in links)]
        if refs.cites and links and "[@" in line:  # "[Act](url) [@act2016]": the key names the linked work again
            by_ref = [r for r in by_ref if not (line.startswith("[@", r.start)
                                                and any(not line[ln.end:r.start].strip() for ln in links if ln.end <= r.start))]
        if by_ref:
            links = sorted(links + by_ref, key=lambda ln: ln.start)
    if not links:
        if borrowed:
            _claims_of_statement(line, line_no, scope, rel, section, file_verified, opts, out, seen, id_scope, borrowed,
                                 borrowed_reason)
        return
    if borrowed:  # a paragraph over a "Source:" line, wrapped or on one line: its sentences citing nothing take it
        for lo, hi in sentences(line):
            if not any(lo <= ln.start < hi for ln in links) and _DIGIT_RE.search(line, lo, hi):
                _claims_of_statement(line[lo:hi], line_of(lo) if line_of is not None else line_no, scope, rel, section,
                                     file_verified, opts, out, seen, id_scope, borrowed, borrowed_reason)
    if line.lstrip().startswith("|") and all(ln.kind == "markdown" and is_root_url(ln.url) for ln in links):
        # a table row whose only link is a named site's home page ("[RentenCheck](https://rentencheck.example/)", a
        # product in a results table), whatever the site: the row's subject, not the source of its figures; a lint
        # finding. (A home page written as a URL, "`https://cip.gov.ag/`", is a source the row names.)
        if any(v.salient for v in extract_values(mask_stamps(mask_urls(line, links)))):
            out.home_page_rows.append((rel, line_no, links[0].url, line.strip()[:140]))
        return
    hosts, tiers = zip(*[opts.host_and_tier(ln.url) for ln in links])
    if opts.primary_only and not any(map(is_official, tiers)):  # no official citation: no claim, whatever the figures
        return
    masked = mask_urls(line, links)
    if "(" in masked and _FILE_NOTE_RE.search(masked):
        masked = _FILE_NOTE_RE.sub(lambda m: " " * len(m.group()), masked)
    if "](" in line:
        masked = _mask_media_lengths(masked, links)
    if not _DIGIT_RE.search(masked):
        return
    values = extract_values(mask_stamps(masked))
    if "](" in line:
        values += _label_figures(line, links, values)
        if any(v.type == "count" and not v.salient for v in values):
            values = _label_counts(values, links)
    if line.lstrip().startswith("|"):
        values += _cell_figures(masked, values)
    if sum(v.salient for v in values) < opts.min_salient or not values:
        return
    stamp = find_inline_stamp(line)
    multi = len(links) > 1
    # "verify at [portal]" links are not the figure's source: they take no part in attribution, so the
    # figures near them go to the real citation. One is counted as skipped where it would have carried a
    # salient figure (the reference count, docs/decisions/0001).
    if _POINTER_WORD_RE.search(line) is None:  # no "verify", "confirm" or "check": no pointer (one C scan)
        pointer = [False] * len(links)
    else:
        pointer = [is_pointer_link(line, ln.start, opts.lookback) for ln in links]
        # "verify at [A](…) or [B](…)": a link listed right after a pointer is one too, unless figures are its own
        # ("verify at [portal](…), [Loi 2024-1039](…) sets 5.8 %")
        own: list[list[Value]] | None = None
        for k in range(1, len(links)):
            if pointer[k - 1] and not pointer[k] and _LIST_GLUE_RE.fullmatch(line, links[k - 1].end, links[k].start):
                own = own if own is not None else attribute_values(values, links)
                if not any(v.salient for v in own[k]):
                    pointer[k] = True
    is_row = line.lstrip().startswith("|")
    # A home page named in the running text ("the [Digital Corps](https://corps.example/) is …", "through [our
    # website](…)") is what the sentence is about, and an event's page invites to a gathering: neither is the
    # source of the figures near it. They take part in attribution (their figures go nowhere else), and give no
    # claim.
    found = no_evidence(line, links) if not is_row and opts.links_as_names else None
    named, events = found if found is not None else (None, None)
    none = [n or e for n, e in zip(named, events)] if named is not None and events is not None else [False] * len(links)
    attributed = attribute_values(values, [ln for ln, p in zip(links, pointer) if not p]) if not all(pointer) else []
    if any(pointer):
        for _ln, is_ptr, vs, host, tier in zip(links, pointer, attribute_values(values, links), hosts, tiers):
            if is_ptr and host and (is_official(tier) or not opts.primary_only) and (not multi or any(v.salient for v in vs)):
                out.skipped_pointer_links += 1
    taking = [ln for ln, p in zip(links, pointer) if not p]
    attributed, reasons = by_sentence(line, taking, values, attributed, is_row,
                                      orphans=not borrowed, line_of=line_of,
                                      item=item or (line_of is None and _LIST_MARK_RE.match(line) is not None and is_topic_entry(line)),
                                      named=[n for n, p in zip(named, pointer) if not p] if named is not None else None)
    cited = iter(zip(attributed, reasons))
    sentence_starts = sentence_ends(line)[1] if line_of is not None else []
    for link, is_pointer, host, tier, no_source in zip(links, pointer, hosts, tiers, none):
        if is_pointer:
            continue
        link_values, reason = next(cited)
        if no_source:
            continue
        if not any(v.salient for v in link_values) and (multi or link.kind == "footnote" or opts.min_salient > 0):
            continue
        if not host:
            out.warnings.append(ExtractWarning(rel, line_no, f"URL without a host ignored: {link.url[:80]}"))
            continue
        if opts.primary_only and not is_official(tier):
            continue
        if link.kind == "markdown" and not is_official(tier) and is_root_url(link.url) and _names_host(link.label, host):
            continue  # "([Klaxit](https://www.klaxit.com/))": the company or product the sentence is about, not a source
        if is_index_page(link):
            continue  # "the [Web Managers community](https://site.example/communities/web-managers/)": a name's index
        if multi and not any(v.salient for v in link_values):  # roster / navigation co-citation
            continue
        # the same URL twice on a line keeps the first link's values
        at = line_no
        if line_of is not None:  # the line the claim's sentence starts on
            figure = min(v.pos for v in link_values) if link_values else link.start
            lead = sentence_starts[k - 1] if (k := bisect_left(sentence_starts, figure + 1)) else 0
            at = line_of(_sentence_start(line, lead))
        _add_claim(out, seen, f"{id_scope}:{at}", link, host, tier, link_values, _verified(stamp, link, refs, file_verified),
                   scope=scope, section=section, line_no=at, rel=rel, stamp=stamp,
                   claim_text=claim_sentence(line, link.start, opts.window, _span_of(link_values)), reason=reason)


def _mask_media_lengths(masked: str, links: list[Link]) -> str:
    """`masked` with the length of a recording blanked in each markdown link's label that offers one."""
    for ln in links:
        if ln.kind == "markdown" and _DIGIT_RE.search(ln.label) and _MEDIA_HINT_RE.search(ln.label):
            for m in _MEDIA_LENGTH_RE.finditer(masked, ln.start + 1, ln.start + 1 + len(ln.label)):
                masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    return masked


def _verified(stamp: InlineStamp | None, link: Link, refs: References | None,
              file_verified: str | None) -> tuple[str | None, VerifiedOrigin]:
    """The claim's last verification: its line's stamp, else the date beside its footnote's or reference's
    definition, else the file's footer."""
    if stamp:
        return stamp.date, "inline"
    if refs is not None and link.kind in ("footnote", "reference") and (read_on := refs.read_on.get(link.url)):
        return read_on, "citation"
    return (file_verified, "file") if file_verified else (None, "none")


def _claims_of_statement(line: str, line_no: int, scope: str, rel: str, section: str, file_verified: str | None,
                         opts: ExtractOptions, out: Extraction, seen: set[str], id_scope: str,
                         borrowed: list[Link], reason: str) -> None:
    """A statement with no link of its own, whose source is on the line after it: each of the source's links
    gets the statement's figures."""
    values = extract_values(mask_stamps(mask_urls(line, [])))
    if line.lstrip().startswith("|"):
        values += _cell_figures(line, values)
    if sum(v.salient for v in values) < max(1, opts.min_salient):
        return
    stamp = find_inline_stamp(line)
    for link in borrowed:
        host, tier = opts.host_and_tier(link.url)
        if not host or (opts.primary_only and not is_official(tier)):
            continue
        _add_claim(out, seen, f"{id_scope}:{line_no}", link, host, tier, values, _verified(stamp, link, None, file_verified),
                   scope=scope, section=section, line_no=line_no, rel=rel, stamp=stamp,
                   claim_text=claim_sentence(line, len(line), opts.window, _span_of(values)), reason=reason)


def _add_claim(out: Extraction, seen: set[str], line_id: str, link: Link, host: str, tier: str | None,
               values: list[Value], verified: tuple[str | None, VerifiedOrigin], *, scope: str, section: str | None, line_no: int,
               rel: str, stamp: InlineStamp | None, claim_text: str, reason: str) -> None:
    """One claim of a line citing link: its id is the line's and the URL's, so a URL cited twice on a line is
    taken once (the first time)."""
    cid = f"{line_id}:{hashlib.sha1(link.url.encode()).hexdigest()[:8]}"
    if cid in seen:
        return
    seen.add(cid)
    last, origin = verified
    out.claims.append(ClaimRecord(
        id=cid, scope=scope, section=section or "(none)", line_no=line_no, claim_text=claim_text, values=tuple(values),
        source_url=link.url, source_host=host, source_tier=tier or SECONDARY_TIER, inline_stamp=stamp,
        link_kind=link.kind, last_verified=last, last_verified_origin=origin, file=rel, source_reason=reason))


class _Taken:
    """The spans of a line's figures (which never overlap), asked in O(log n) whether a span overlaps one."""

    def __init__(self, values: list[Value]) -> None:
        spans = sorted((v.pos, v.end) for v in values)
        self.starts = [s for s, _e in spans]
        self.ends = [e for _s, e in spans]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_left(self.starts, end)
        return i > 0 and self.ends[i - 1] > start


_BAR_BEFORE_RE = re.compile(r"\|[ \t]*$")  # a table cell's bar right before a link (searched in a short window)
_BAR_AFTER_RE = re.compile(r"[ \t]*\|")
# A number that is a whole link label ('| [27.8](https://…) |', '[1 234,5](…)'): the figure that link gives.
_LABEL_NUMBER_RE = re.compile(r"[*_ ]*(\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})*(?:[.,]\d+)?|\d+(?:[.,]\d+)?)[*_ ]*")
_YEAR_LABEL_RE = re.compile(r"(?:19|20)\d\d")


def _label_figures(line: str, links: list[Link], values: list[Value]) -> list[Value]:
    """Figures written as a link's whole label that no reader took (a bare number): '[27.8](…)' in a table cell,
    or a number with a decimal or group separator anywhere ('[1,234.5](…)'). A bare '[3](…)' in prose is a
    reference number and a '[2024](…)' a year: neither is read."""
    out: list[Value] = []
    taken = _Taken(values)
    for ln in links:
        if ln.kind != "markdown" or not ln.label or line[ln.start] != "[":
            continue
        m = _LABEL_NUMBER_RE.fullmatch(ln.label)
        if m is None or _YEAR_LABEL_RE.fullmatch(m.group(1)):
            continue
        raw = m.group(1)
        in_cell = _BAR_BEFORE_RE.search(line, max(0, ln.start - 20), ln.start) is not None \
            and _BAR_AFTER_RE.match(line, ln.end) is not None
        if not in_cell and not any(ch in raw for ch in ".,'\u00a0\u202f "):
            continue
        pos = ln.start + 1 + m.start(1)
        if taken.overlaps(pos, pos + len(raw)):
            continue
        out.append(_number_value(raw, pos))
    return out



def _label_counts(values: list[Value], links: list[Link]) -> list[Value]:
    """A small count in a link's label is what the linked page gives: '[9 criteria for an impact assessment](…)'
    names the page that lists them, so the count is a figure of that link's claim, as a figure written as a
    label is (docs/decisions/0004 keeps a count under ten out of a sentence's own figures). A how-to's noun ('[3
    steps](…)', '[5 tips](…)') stays none."""
    labels = [(ln.start, ln.url_start) for ln in links if ln.kind == "markdown" and ln.label and ln.url_start > ln.start]
    out = []
    for v in values:
        if (v.type == "count" and not v.salient and v.number is not None and v.number >= 2
                and any(lo < v.pos and v.end <= hi for lo, hi in labels)
                and kind_reading(v.type, v.raw, v.number).unit.casefold() not in HOWTO_NOUNS):
            v = replace(v, salient=True)
        out.append(v)
    return out


def _number_value(raw: str, pos: int) -> Value:
    """A bare number of the line (a link's label, a table cell) as a figure of its claim."""
    number = parse_number(raw)
    return Value(type="number", raw=raw, needles=num_needles(raw, number), salient=True, pos=pos, end=pos + len(raw),
                 number=number)

# A table cell that is a number, maybe with its unit word: '| **128.47** |', '| 40,1 ct/kWh |', '| 1 250 |'.
_CELL_NUMBER_RE = re.compile(
    r"[*_]*(\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})+(?:[.,]\d+)?|\d+[.,]\d+|\d{3,})[*_]*(?:[ \u00a0]?[^\W\d_][^\s|]{0,11})?")
_CELL_RE = re.compile(r"(?<=\|)[^|\n]+(?=\|)")


def _cell_figures(line: str, values: list[Value]) -> list[Value]:
    """The numbers of a table row's cells that no reader took: in a row citing its source, each cell's figure
    is a figure of the row's claim. A year ('| 2024 |') stays a year; a small count ('| 3 |') is no figure."""
    out: list[Value] = []
    taken = _Taken(values)
    for cell in _CELL_RE.finditer(line):
        text = cell.group()
        lead = len(text) - len(text.lstrip())
        m = _CELL_NUMBER_RE.fullmatch(text.strip())
        if m is None or _YEAR_LABEL_RE.fullmatch(m.group(1)):
            continue
        raw = m.group(1)
        pos = cell.start() + lead + m.start(1)
        if taken.overlaps(pos, pos + len(raw)):
            continue
        out.append(_number_value(raw, pos))
    return out


def _span_of(values: list[Value]) -> tuple[int, int] | None:
    """From the first to the last salient figure (all figures when none is salient)."""
    chosen = [v for v in values if v.salient] or values
    return (min(v.pos for v in chosen), max(v.end for v in chosen)) if chosen else None


def extract_corpus(corpus: CorpusSource, *, scopes: Iterable[str] | None = None, section: str | None = None,
                   include_secondary: bool = False) -> Extraction:
    """Claims of every scope (or only the named ones). Bad files give warnings; they never stop the run (a file
    the walker left out, a FIFO, a link leaving the corpus, one over the size cap, is a warning too).

    A big corpus is extracted by the process pool (`extraction.workers`, common/work_pool.py); the output is the
    serial one.
    """
    opts = ExtractOptions.of(corpus.extraction, corpus.primary_hosts, section=section,
                             include_secondary=include_secondary)
    wanted = set(scopes) if scopes is not None else None
    root = corpus.root
    out = Extraction()
    jobs: list[FileJob] = []
    walk = walk_corpus(corpus)
    out.warnings += [w for scope, w in walk.warnings if wanted is None or scope in wanted]
    for scope, paths in walk.scopes.items():
        if wanted is not None and scope not in wanted:
            continue
        # Ids are `scope:line:hash` (the reference ids, docs/decisions/0001); when several files share a scope (countries/fr/**.md)
        # each file's ids also name the file, or two files' line 2 citing one URL would be one claim.
        common = Path(os.path.commonpath([p.parent for p in paths])) if len(paths) > 1 else None
        for path in paths:
            rel = _rel(path, root)
            out.scopes.setdefault(scope, []).append(rel)
            out.files.append(rel)
            jobs.append((scope, path, rel, f"{scope}:{path.relative_to(common).as_posix()}" if common else scope))
    parts: list[ChunkResult] | None = None
    workers = pool_size(corpus.extraction.workers, jobs)
    if workers > 1:
        try:
            parts = run_in_pool(extract_files, jobs, opts, workers)
            out.workers = workers
        except Exception as exc:  # a pool problem never costs the run: the serial pass gives the same output
            log.warning("extraction pool of %d failed (%r); extracting serially", workers, exc)
    if parts is None:
        parts = [extract_files(jobs, opts)]
    for claims, warnings, skipped, templated in parts:
        out.claims += claims
        out.warnings += warnings
        out.skipped_pointer_links += skipped
        out.skipped_template_figures += templated
    return out


def extract_files(jobs: Sequence[FileJob], opts: ExtractOptions) -> ChunkResult:
    """Claims, warnings and pointer-skip count of these files, in order (one pool chunk, or the whole run)."""
    out = Extraction()
    for scope, path, rel, id_scope in jobs:
        text, warnings = read_markdown(path, rel, opts.max_file_bytes)
        out.warnings.extend(warnings)
        if text is not None:
            extract_text(text, scope=scope, rel=rel, opts=opts, out=out, id_scope=id_scope)
    return out.claims, out.warnings, out.skipped_pointer_links, out.skipped_template_figures


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def resolve_scope_filter(corpus: CorpusSource, name: str) -> list[str]:
    """The CLI's `--scope X`: scopes equal to X or ending in '/X'."""
    return _resolve(list(list_scopes(corpus)), name)


def extraction_stats(extraction: Extraction) -> dict:
    """The `extract` stats JSON (the reference keys, docs/decisions/0001, plus link kinds, verification origins and warnings)."""
    claims = extraction.claims
    by_scope = Counter(c.scope for c in claims)
    by_tier = Counter({"primary-gov": 0, "primary-allowlist": 0, "secondary": 0, "own": 0})
    by_tier.update(c.source_tier for c in claims)
    return {
        "total_claims": len(claims),
        "scopes_covered": len(by_scope),
        "by_tier": dict(by_tier),
        "top_scopes": dict(by_scope.most_common(15)),
        "stamped": sum(c.inline_stamp is not None for c in claims),
        "stale_marked": sum(bool(c.inline_stamp and c.inline_stamp.is_stale) for c in claims),
        "never_verified": sum(c.last_verified_origin == "none" for c in claims),
        "skipped_pointer_links": extraction.skipped_pointer_links,
        "skipped_template_figures": extraction.skipped_template_figures,
        "by_link_kind": dict(Counter(c.link_kind for c in claims)),
        "by_verified_origin": dict(Counter(c.last_verified_origin for c in claims)),
        "files": len(extraction.files),
        "warnings": len(extraction.warnings),
    }
