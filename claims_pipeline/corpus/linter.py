"""Portal-root linter: a citation that points at a primary portal's ROOT next to a figure.

"Rate 5% ([tax.gov.xx](https://tax.gov.xx/))" cites a home page, not the page holding the figure. So does a
table row whose only link is a site's home page ("| [RentenCheck](https://rentencheck.example/) | 27.8 | 91 % |",
a product in a results table), whatever the site: extraction takes no claim from it, and it is a finding here. The reference
check-citations rule (pct/money figures, host-like labels; docs/decisions/0001) is applied to the claims extraction
finds, so both agree on links, attribution, pointer links and fences. A scan of raw lines would let a pointer phrase
anywhere exempt the whole line, charge a figure to any root link on its line and never check a bare URL
(docs/decisions/0002).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from claims_pipeline.common.urls import url_host
from claims_pipeline.config.corpus_source import CorpusSource
from claims_pipeline.config.settings import ExtractionSettings, LinterSettings
from claims_pipeline.corpus.extract import ExtractOptions, extract_text
from claims_pipeline.corpus.links import find_links, is_root_url
from claims_pipeline.corpus.reading import read_markdown, with_newlines
from claims_pipeline.corpus.records import ClaimRecord, Extraction, ExtractWarning
from claims_pipeline.corpus.scopes import walk_corpus
from claims_pipeline.corpus.tiers import PrimaryHosts

_FIGURE_TYPES = ("pct", "money")  # the reference check: percentages and amounts


@dataclass(frozen=True, slots=True)
class LintFinding:
    file: str
    line: int
    url: str
    context: str
    scope: str


class RootAllowlist:
    """Portal roots that may be cited as such: 'impots.gouv.fr', 'https://www.impots.gouv.fr/' and
    'www.impots.gouv.fr' all name one site (www. and a trailing slash do not matter)."""

    def __init__(self, entries: Iterable[str]) -> None:
        self._hosts = {self._host(e) for e in entries if e.strip()}

    @staticmethod
    def _host(entry: str) -> str:
        entry = entry.strip().lower()
        host = url_host(entry) if "://" in entry else entry.split("/", 1)[0]
        return host[4:] if host.startswith("www.") else host

    def __contains__(self, url: str) -> bool:
        return self._host(url) in self._hosts


def lint_options(ex: ExtractionSettings, primary_hosts: Collection[str] = (),
                 allowlist: Collection[str] | PrimaryHosts | None = None) -> ExtractOptions:
    """Extraction's own rules (links, attribution, pointer links, fences, primary gating), with no skip
    headings and every section: a root citation is a finding wherever it stands. The official hosts: the
    built-in ones and primary_hosts, or `allowlist` alone when given."""
    opts = ExtractOptions.of(ex, primary_hosts)
    primary = allowlist if isinstance(allowlist, PrimaryHosts) else PrimaryHosts(allowlist) if allowlist is not None \
        else opts.allowlist
    return replace(opts, allowlist=primary, tier_cache={}, url_cache={}, skip_heading_re=None, primary_only=True,
                   min_salient=1, links_as_names=False)


def _findings(text: str, opts: ExtractOptions, roots: RootAllowlist) -> list[tuple[int, str, str, str]]:
    """(line, URL, context, label) of every claim whose citation is a primary portal's root and which states a
    percentage or an amount, and of every table row citing only a home page: a markdown link whatever its label
    ("[tax.gov.xx](https://tax.gov.xx/)" as the reference rule had it, and "[the tax portal](https://tax.gov.xx/)",
    which it let through: docs/decisions/0002), a bare or a backticked root URL."""
    out = Extraction()
    extract_text(text, scope="-", rel="-", opts=opts, out=out)
    rows = [(line, url, row, "") for _rel, line, url, row in out.home_page_rows if url not in roots]
    return sorted(rows + [(c.line_no, c.source_url, c.claim_text, label) for c, label in _claim_findings(text, out, roots)])


def _claim_findings(text: str, out: Extraction, roots: RootAllowlist) -> list[tuple[ClaimRecord, str]]:
    found: list[tuple[ClaimRecord, str]] = []
    lines: list[str] | None = None
    for c in out.claims:
        if not is_root_url(c.source_url) or c.source_url in roots:
            continue
        if not any(v.salient and v.type in _FIGURE_TYPES for v in c.values):
            continue
        label = ""
        if c.link_kind == "markdown":  # any label: "[the tax portal](https://tax.gov.xx/)" cites the home page too
            lines = with_newlines(text).split("\n") if lines is None else lines
            links, _ = find_links(lines[c.line_no - 1])
            label = next((ln.label.strip() for ln in links if ln.url == c.source_url), "")
        found.append((c, label))
    return found


def lint_line(line: str, *, allowlist: Collection[str] | PrimaryHosts, root_allowlist: Collection[str],
              extraction: ExtractionSettings | None = None) -> list[tuple[str, str]]:
    """(url, label) of every citation on the line of a primary portal's root next to a figure."""
    opts = lint_options(extraction or ExtractionSettings(), allowlist=allowlist)
    return [(url, label) for _line, url, _context, label in _findings(line, opts, RootAllowlist(root_allowlist))]


def lint_text(text: str, *, rel: str, corpus: CorpusSource, linter: LinterSettings, scope: str = "-") -> list[LintFinding]:
    """The findings of one file's text."""
    opts = lint_options(corpus.extraction, corpus.primary_hosts)
    roots = RootAllowlist(linter.root_url_allowlist)
    return [LintFinding(rel, line, url, context[:140], scope) for line, url, context, _label in _findings(text, opts, roots)]


def lint_corpus(corpus: CorpusSource, linter: LinterSettings, scopes: Iterable[str] | None = None,
                skipped: list[ExtractWarning] | None = None, only: Collection[Path] | None = None) -> list[LintFinding]:
    """Every finding under the scope dirs (no skip_files or skip_headings: a root citation is a finding wherever it stands). Files are those
    of the corpus walker (regular files inside the corpus, under the size cap); what it or the reader left out
    is appended to `skipped` when given. only: just these files (resolved paths; a pre-commit hook's changed
    files), when given."""
    wanted = set(scopes) if scopes is not None else None
    chosen = {p.resolve() for p in only} if only is not None else None
    opts = lint_options(corpus.extraction, corpus.primary_hosts)
    roots = RootAllowlist(linter.root_url_allowlist)
    walk = walk_corpus(corpus, honour_skip_files=False)
    problems = [w for scope, w in walk.warnings if wanted is None or scope in wanted]
    findings: list[LintFinding] = []
    if chosen is not None:
        named = {corpus_rel(corpus.root, p) for p in chosen}
        problems = [w for w in problems if w.file in named]
    for f in walk.files:
        if wanted is not None and f.scope not in wanted:
            continue
        if chosen is not None and f.path.resolve() not in chosen:
            continue
        text, warnings = read_markdown(f.path, f.rel, opts.max_file_bytes)
        if text is None:  # a file not linted at all; repaired bytes are extract's
            problems += warnings
            continue
        for line, url, context, _label in _findings(text, opts, roots):
            findings.append(LintFinding(f.rel, line, url, context[:140], f.scope))
    if skipped is not None:
        skipped += problems
    return findings


def corpus_rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def corpus_files(corpus: CorpusSource) -> set[Path]:
    """The resolved paths of every file the linter reads (the corpus walker's)."""
    return {f.path.resolve() for f in walk_corpus(corpus, honour_skip_files=False).files}
