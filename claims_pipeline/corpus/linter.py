"""Portal-root linter: a citation that points at a primary portal's ROOT next to a figure.

"Rate 5% ([tax.gov.xx](https://tax.gov.xx/))" cites a home page, not the page holding the figure. Same rule as
the original's check-citations (pct/money figures only, pointer phrases exempt the line, host-like labels), with
figures read from the line with URLs blanked, and fenced code ignored.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from claims_pipeline.corpus.links import find_links, mask_urls
from claims_pipeline.corpus.reading import read_markdown
from claims_pipeline.corpus.scopes import scope_for
from claims_pipeline.corpus.tiers import PrimaryHosts
from claims_pipeline.settings import Settings
from claims_pipeline.urls import url_host

SALIENT_RE = re.compile(
    r"(?<![\w.])\d{1,3}(?:[.,]\d+)?\s?%|[€£$¥₹]\s?\d"
    r"|(?:USD|EUR|GBP|CHF|AED|SAR|JPY|CNY|HKD|SGD|AUD|NZD|CAD|ZAR|INR|XCD|KYD|CI\$|HK\$|S\$)\s?\d",
    re.I,
)
POINTER_RE = re.compile(
    r"\b(?:verify|confirm|check|consult|cross-check|see|lookup|look up|search)\b[^.]{0,30}?"
    r"\b(?:at|here|current|the|via|on|using|directly)\b|\bsource:\s|\bper the\b",
    re.I,
)
HOSTLIKE_LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*\.[a-z]{2,}$", re.I)
LINTER_GOV_RE = re.compile(r"(?:^|\.)(?:gov|gouv|gob)(?:\.[a-z]{2,4})?$")
_HEADING_RE = re.compile(r"^#{1,6}\s")


@dataclass(frozen=True, slots=True)
class LintFinding:
    file: str
    line: int
    url: str
    context: str
    scope: str


def is_root_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.path in ("", "/") and not parts.query and not parts.fragment


def lint_line(line: str, *, allowlist: Collection[str] | PrimaryHosts, root_allowlist: Collection[str]) -> list[tuple[str, str]]:
    """(url, label) of every markdown link on the line that cites a primary portal root next to a figure."""
    if _HEADING_RE.match(line) or "](http" not in line:
        return []
    links, _ = find_links(line)
    markdown = [ln for ln in links if ln.kind == "markdown"]
    if not markdown or not SALIENT_RE.search(mask_urls(line, links)) or POINTER_RE.search(line):
        return []
    primary = allowlist if isinstance(allowlist, PrimaryHosts) else PrimaryHosts(allowlist)
    roots = {r.lower() for r in root_allowlist}
    found = []
    for ln in markdown:
        host = url_host(ln.url)
        if (
            is_root_url(ln.url)
            and HOSTLIKE_LABEL_RE.match(ln.label.strip())
            and host not in roots
            and ln.url.lower() not in roots
            and (LINTER_GOV_RE.search(host) or host in primary)
        ):
            found.append((ln.url, ln.label))
    return found


def lint_corpus(settings: Settings, scopes: Iterable[str] | None = None) -> list[LintFinding]:
    """Every finding under the scope dirs (no skip_files or skip_headings, like the original)."""
    wanted = set(scopes) if scopes is not None else None
    primary = PrimaryHosts(settings.primary_allowlist())
    roots = settings.linter.root_url_allowlist
    root = settings.corpus_dir
    excluded = set(settings.extraction.exclude_dirs)
    findings: list[LintFinding] = []
    for scope_dir in settings.extraction.scope_dirs:
        base = root / scope_dir
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.md")):
            rel_in = path.relative_to(base)
            if excluded.intersection(rel_in.parts):
                continue
            scope = scope_for(rel_in, scope_dir)
            if wanted is not None and scope not in wanted:
                continue
            rel = path.relative_to(root).as_posix()
            text, _ = read_markdown(Path(path), rel)
            if text is None:
                continue
            in_fence = False
            for no, line in enumerate(text.splitlines(), 1):
                s = line.lstrip()
                if s.startswith("```") or s.startswith("~~~"):
                    in_fence = not in_fence
                    continue
                if in_fence or "](http" not in line:
                    continue
                for url, _label in lint_line(line, allowlist=primary, root_allowlist=roots):
                    findings.append(LintFinding(rel, no, url, line.strip()[:140], scope))
    return findings
