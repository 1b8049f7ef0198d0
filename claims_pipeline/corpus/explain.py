"""One-line explanations of a corpus run that found nothing, for the commands (extract, lint, audit): which
setting left the files out, or what a claim needs. Never imports Dagster."""

from __future__ import annotations

import re

from claims_pipeline.config.corpus_source import CorpusSource

# A line holding a digit and a citation (a URL, a markdown link, a footnote marker); a reference definition line.
_FIGURE_AND_LINK_RE = re.compile(r"^(?=[^\n]*\d)(?=[^\n]*(?:://|\]\(|\[\^))[^\n]*$", re.M)
_DEFINITION_RE = re.compile(r" {0,3}\[[^\]\n]+\]:")
_DIGIT_RE = re.compile(r"\d")
_LIST_MARK_RE = re.compile(r"[ \t>]*(?:[-*+]|\d{1,3}[.)])[ \t]+")  # a list item's marker (as extract.py reads it)

CLAIM_NEEDS = ("a claim is a line that states a figure (a percentage, an amount, a statute number or a date) and "
               "links the page that gives it, in the same sentence or by a reference or footnote")


def no_claim_message(corpus: CorpusSource, files: int, *, scopes: list[str] | None = None,
                     include_secondary: bool = False) -> str:
    """`files` were read and gave no claim: what a claim needs, and when citations were left out by the
    official-only setting, how many."""
    from claims_pipeline.corpus.extract import extract_corpus

    why = CLAIM_NEEDS
    if corpus.extraction.primary_only and not include_secondary:
        others = len(extract_corpus(corpus, scopes=scopes, include_secondary=True).claims)
        if others:
            why = (f"{others} figure{'s' * (others != 1)} cite{'s' * (others == 1)} sources that are not official, "
                   "left out by extraction.primary_only: true")
    return (f"{files} file{'s' * (files != 1)} read, no claim found: {why}; hint: docs/user-guide.md, "
            "\"What a claim is\", and `claims-pipeline extract --out claims.json` to see what is read")


def explain_line(corpus: CorpusSource, where: str, *, include_secondary: bool = False) -> list[str]:
    """`extract --explain FILE:LINE`: the block holding that line, its sentences, the figures read, each link and
    why it was or was not taken, and the claims made there. FILE is relative to the corpus folder (or absolute).
    Raises ValueError naming what is wrong with `where`."""
    from pathlib import Path

    from claims_pipeline.corpus.attribution import REASONS, attribute_values, by_sentence, is_topic_entry, no_evidence
    from claims_pipeline.corpus.blocks import blank_comments, code_spans, run_around, wrapped_paragraphs
    from claims_pipeline.corpus.extract import ExtractOptions, extract_text
    from claims_pipeline.corpus.links import decode_entities, find_links, mask_templates, mask_urls, repair_schemes
    from claims_pipeline.corpus.reading import read_markdown, with_newlines
    from claims_pipeline.corpus.records import Extraction
    from claims_pipeline.corpus.references import parse_references, reference_links
    from claims_pipeline.corpus.sentences import sentences
    from claims_pipeline.corpus.stamps import mask_stamps
    from claims_pipeline.corpus.values import extract_values

    file, sep, number = where.rpartition(":")
    if not sep or not number.isdigit() or int(number) < 1:
        raise ValueError(f"--explain wants FILE:LINE (a line number from 1), not {where!r}")
    path = Path(file).expanduser()
    path = path if path.is_absolute() else corpus.root / path
    rel = path.relative_to(corpus.root).as_posix() if path.is_relative_to(corpus.root) else path.as_posix()
    text, warnings = read_markdown(path, rel)
    if text is None:
        raise ValueError("; ".join(str(w) for w in warnings) or f"{path}: not readable")
    text = repair_schemes(decode_entities(with_newlines(text)))
    text = blank_comments(text) if "<!--" in text else text
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    line_no = int(number)
    if line_no > len(starts):
        raise ValueError(f"{rel} has {len(starts)} lines, not {line_no}")
    start = starts[line_no - 1]
    lo, hi = run_around(text, start)
    para = wrapped_paragraphs(text, lo, hi, code_spans(text)).get(start)
    first = line_no if para is None else starts.index(para.line_starts[0]) + 1
    unit = para.text if para is not None else text[start:text.find("\n", start) if "\n" in text[start:] else len(text)]
    if "{{" in unit or "{%" in unit:  # as extract reads it: templates blanked, a citing shortcode its link
        unit = mask_templates(unit)[0]
    line_of = (lambda pos: first + para.line_index(pos)) if para is not None else (lambda pos: first)
    last = first + (len(para.line_starts) - 1 if para is not None else 0)
    out = [f"{rel}:{line_no}: " + (f"a paragraph over lines {first}-{last}, read as one text" if para is not None
                                     else "a line read on its own"),
           "sentences:"]
    out += [f"  line {line_of(a)}: {unit[a:b][:160]}" for a, b in sentences(unit)]
    links = find_links(unit)[0]
    refs = parse_references(text)
    if refs:
        links = sorted(links + [r for r in reference_links(unit, refs)
                                if not any(ln.start < r.end and r.start < ln.end for ln in links)], key=lambda ln: ln.start)
    values = extract_values(mask_stamps(mask_urls(unit, links)))
    out.append("figures: " + (", ".join(f"{v.raw} ({v.type}{', salient' if v.salient else ''})" for v in values)
                              or "none read (a figure is a percentage, an amount, a statute number or a date)"))
    if not links:
        out.append("links: none (a claim needs a citation in its sentence, a 'Source:' line or a paragraph that is only a link under it, or a lead-in)")
    else:
        is_row = unit.lstrip().startswith("|")
        found_no = no_evidence(unit, links) if not is_row else None
        named, events = found_no if found_no is not None else ([False] * len(links), [False] * len(links))
        given, reasons = by_sentence(unit, links, values, attribute_values(values, links), is_row,
                                     line_of=line_of if para is not None else None,
                                     item=(para.item if para is not None else _LIST_MARK_RE.match(unit) is not None)
                                     and is_topic_entry(para.text if para is not None else unit),
                                     named=named)
        out.append("links:")
        for ln, vs, reason, name, event in zip(links, given, reasons, named, events):
            why = (f"takes {', '.join(v.raw for v in vs)}: {REASONS.get(reason, reason)}" if any(v.salient for v in vs)
                   else "takes no figure: none of its sentence, or each is nearer another citation")
            if name or event:
                why += ("; no claim: a site named in the running text, not given as a source" if name
                        else "; no claim: an event's page")
            out.append(f"  [{ln.kind}] {ln.url}: {why}")
    opts = ExtractOptions.of(corpus.extraction, corpus.primary_hosts, include_secondary=include_secondary)
    found = Extraction()
    extract_text(text, scope="-", rel=rel, opts=opts, out=found)
    mine = [c for c in found.claims if first <= c.line_no <= last]
    out.append(f"claims: {len(mine)}" + ("" if mine or not links else
                                          " (official sources only: extraction.primary_only)" if opts.primary_only else ""))
    out += [f"  line {c.line_no}: {c.source_url} ← {', '.join(v.raw for v in c.salient_values)} ({c.source_reason})"
            for c in mine]
    return out



def unclaimed_lines(corpus: CorpusSource, claims: list) -> tuple[int, int, str | None]:
    """(lines holding a digit outside URLs and a citation, how many of them gave no claim, the first such
    FILE:LINE): what `init` reports when extraction took few of them. A rough count by design (a digit is not
    always a figure, and a wrapped sentence's claim is on its first line)."""
    from claims_pipeline.corpus.links import find_links, mask_urls
    from claims_pipeline.corpus.reading import read_markdown, with_newlines
    from claims_pipeline.corpus.scopes import walk_corpus
    claimed = {(c.file, c.line_no) for c in claims}
    total = missed = 0
    first: str | None = None
    for f in walk_corpus(corpus).files:
        rel = f.rel
        text, _ = read_markdown(f.path, rel)
        if text is None:
            continue
        text = with_newlines(text)
        for m in _FIGURE_AND_LINK_RE.finditer(text):
            line_text = m.group()
            if _DEFINITION_RE.match(line_text) or not _DIGIT_RE.search(mask_urls(line_text, find_links(line_text)[0])):
                continue  # a definition states nothing; a digit only in a URL is no figure
            total += 1
            line = text.count("\n", 0, m.start()) + 1
            if (rel, line) not in claimed:
                missed += 1
                first = first or f"{rel}:{line}"
    return total, missed, first
