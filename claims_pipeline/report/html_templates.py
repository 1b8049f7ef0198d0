"""The Jinja2 environment every HTML page of the project is rendered in (report.html, verdicts.html, the charts).

Text from a fetched page, the corpus or a model is hostile. Autoescaping is on for every template, so no
expression can write markup; every template's whole output is neutralised (NeutralTemplate), so no control or bidi
character gets out either (autoescaping knows HTML, not bidi): both hold without a template asking for them. Links
are made only for http(s) URLs (the `link` filter); anything else is shown as text. Undefined names are errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup, escape

from claims_pipeline.common.text_safety import replaced
from claims_pipeline.report.escape import cell_text, claim_plain, safe_href
from claims_pipeline.report.sections import (
    change_note,
    json_list,
    pages_and_claims,
    plural,
    table_rows,
    unconfirmed_note,
    utc_time,
)

REPORT_PACKAGE = "claims_pipeline.report"


class NeutralTemplate(Template):
    """A template whose output has every unsafe character as U+FFFD (text_safety.replaced), whatever wrote it: an
    expression, a filter's or a macro's markup, a join. One pass over the page rather than one per expression: a
    report of 100k claims writes about 140,000 expressions (benchmarks/README.md). The templates' own text holds no
    such character (test_html_templates), so the page is what neutralising each expression would write."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        return replaced(super().render(*args, **kwargs))

    def generate(self, *args: Any, **kwargs: Any) -> Iterator[str]:
        return map(replaced, super().generate(*args, **kwargs))  # an unsafe character is one code point: never split


def shown(value: object) -> object:
    """What an expression writes (the environment's finalize; autoescaping follows): None and NaN as nothing. Only
    text and Markup (a macro's output, what join or |breakable returned, escaped when it was built) are written as
    they are: any other object as its text, escaped, so an object's own __html__ is not trusted."""
    kind = type(value)
    if kind is str or kind is Markup or kind is int:
        return value
    return cell_text(value)


# escape.url_break_points' points found in the escaped text: before "/", "?", an "&" (now "&amp;") and a "#" that
# does not open a character reference ("&#39;"), unless "//" follows; after "//". The text is escaped in one call
# rather than part by part (benchmarks/README.md); test_html_templates holds it to the parts escaped one by one.
_ESCAPED_BREAK_RE = re.compile(r"(?<=//)(?=.)|(?<=[^/])(?=[/?]|&amp;|(?<!&)#)(?!//)")


def breakable(text: object) -> Markup:
    """A URL or a path, escaped, with <wbr> where a line may break (escape.url_break_points)."""
    return _breakable(cell_text(text))


@lru_cache(maxsize=1 << 15)
def _breakable(text: str) -> Markup:
    # a large report shows each scope, file and URL on many rows (100k claims: 1,000 scopes, 20,000 URLs)
    return Markup(_ESCAPED_BREAK_RE.sub("<wbr>", escape(text)))


_LINK = Markup('<a href="{}" rel="noopener noreferrer nofollow">{}</a>')
_NOT_LINKED = Markup('<span class="url">{}</span>')
_BADGE = Markup('<span class="badge" style="background:{}">{}</span>')
_NO_COLOUR = "#455a64"


def link(url: object) -> Markup:
    """A link to an http(s) URL (escape.safe_href), its text the URL with break points; anything else as text.
    Markup.format escapes what it is given. A filter rather than a macro: a large report links a URL on each of
    thousands of rows, mostly the same URLs, and a macro call costs several times a cached lookup."""
    return _link(cell_text(url))


@lru_cache(maxsize=1 << 15)
def _link(url: str) -> Markup:
    href = safe_href(url)
    return _NOT_LINKED.format(breakable(url)) if href is None else _LINK.format(href, breakable(url))


def badge(kind: object, colours: dict[str, str]) -> Markup:
    """A kind (a prior, a verdict) as a coloured badge, in its colour from `colours`."""
    text = cell_text(kind)
    return _badge(text, colours.get(text, _NO_COLOUR))


@lru_cache(maxsize=256)
def _badge(kind: str, colour: str) -> Markup:
    return _BADGE.format(colour, kind)


def highlighted(excerpt: str, spans: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """The excerpt as (text, marked) pieces: each (start, end) span marked; an overlapping or out-of-range span is
    left as text."""
    out, pos = [], 0
    for start, end in sorted(set(spans)):
        if start < pos or end > len(excerpt) or start >= end:
            continue
        out += [(excerpt[pos:start], False), (excerpt[start:end], True)]
        pos = end
    out.append((excerpt[pos:], False))
    return out


def excerpts(row: Any) -> list[list[tuple[str, bool]]]:
    """A priors row's excerpts, each with the matched figures marked at the offsets the prior recorded."""
    texts: list[str] = json.loads(row.excerpts)
    spans: dict[int, list[tuple[int, int]]] = {}
    for hit in json.loads(row.hits):
        i, start, end = hit.get("excerpt_index"), hit.get("excerpt_start"), hit.get("excerpt_end")
        if isinstance(i, int) and isinstance(start, int) and isinstance(end, int):
            spans.setdefault(i, []).append((start, end))
    return [highlighted(text, spans.get(i, [])) for i, text in enumerate(texts)]


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """A unified diff's lines, each with its class: add, del, hunk or none."""
    return [("add" if line.startswith("+") else "del" if line.startswith("-") else "hunk" if line.startswith("@@")
             else "", line) for line in diff.splitlines()]


@cache
def html_environment(package: str = REPORT_PACKAGE) -> Environment:
    """The environment for `package`'s templates (its templates/ folder), with the report package's layout
    (page.html.j2) behind them."""
    packages = dict.fromkeys((package, REPORT_PACKAGE))
    env = Environment(
        loader=ChoiceLoader([PackageLoader(p, "templates") for p in packages]),
        autoescape=True,  # every template here writes HTML or SVG
        finalize=shown,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.template_class = NeutralTemplate
    env.filters.update({
        "text": cell_text,
        "utc_time": utc_time,
        "claim_plain": claim_plain,
        "link": link,
        "badge": badge,
        "breakable": breakable,
        "from_json": json_list,
        "plural": plural,
        "change_note": change_note,
        "unconfirmed_note": unconfirmed_note,
        "pages_and_claims": pages_and_claims,
        "rows": table_rows,
        "excerpts": excerpts,
        "diff_lines": diff_lines,
    })
    return env


def render(template: str, package: str = REPORT_PACKAGE, **context: Any) -> str:
    """`template` of `package`'s templates/ rendered with `context`."""
    return html_environment(package).get_template(template).render(**context)
