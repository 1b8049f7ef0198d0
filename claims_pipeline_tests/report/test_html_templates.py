"""Every HTML page the project writes comes from templates in one Jinja2 environment (report/html_templates.py), so
escaping cannot be forgotten by one template: hostile text in every field each page shows (markup, attribute
break-outs, javascript: URLs, control and bidi characters) comes out as inert text in report.html, verdicts.html,
report.html with the verdict section appended, and the charts; and the environment itself cannot be told to write
raw markup."""

from __future__ import annotations

import random
import re
import tomllib
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pandas as pd
import pytest
from markupsafe import Markup

from claims_pipeline.common.text_safety import UNSAFE_RE
from claims_pipeline.judge.corrections import Correction
from claims_pipeline.judge.model import Downgrade, DraftVerdict, Verdict
from claims_pipeline.judge.report import JUDGE_PACKAGE, append_verdict_section, write_verdict_report
from claims_pipeline.priors import build_prior
from claims_pipeline.report import write_reports
from claims_pipeline.report.audit import build_audit
from claims_pipeline.report.chart import priors_by_scope_svg
from claims_pipeline.report.escape import url_break_points
from claims_pipeline.report.history import AuditPoint, history_html, point_of
from claims_pipeline.report.html_templates import (
    REPORT_PACKAGE,
    NeutralTemplate,
    breakable,
    html_environment,
    shown,
)
from claims_pipeline_tests.report.factories import FILLER, claim, page, rules_of, value

REPO = Path(__file__).resolve().parents[2]
# markup, an attribute break-out in both quotes, a script URL, terminal controls and every kind of bidi control
HOSTILE = ('<script>alert(1)</script><img src=x onerror=alert(2)>"><svg onload=alert(3)>\' onmouseover=\'alert(4)'
           ' <a href="javascript:alert(5)">x</a> \x1b]0;owned\x07 \u202eevil\u202c \u2066iso\u2069 \u200frtl\u061c')
JS_URL = "javascript:alert(6)"
QUOTE_URL = 'https://www.tax.gov.zz/a?b="><script>alert(7)</script>&c=\'x\''  # http(s): linked, quotes escaped
GOOD_URL = "https://www.tax.gov.zz/levy"
# what a page may contain: the tags the templates write, attributes whose values come from the templates
TAGS = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "div", "section", "b", "span",
        "svg", "rect", "text", "line", "table", "tr", "th", "td", "article", "code", "blockquote", "mark", "details",
        "summary", "pre", "a", "p", "wbr", "colgroup", "col"}
ATTRIBUTE_VALUE = {
    "class": re.compile(r"[a-z ]+"),
    "style": re.compile(r"background:#[0-9a-f]{6}"),
    "id": re.compile(r"claim-verdicts"),
    "rel": re.compile(r"noopener noreferrer nofollow"),
    "href": re.compile(r"https?://.+"),
}


class Parsed(HTMLParser):
    def __init__(self, doc: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.feed(doc)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def assert_inert(doc: str, *, hostile_shown: int) -> None:
    """Only the templates' own tags and attributes, links only to http(s) URLs, no raw control or bidi character;
    the hostile text is there, `hostile_shown` times or more, as text a reader sees."""
    assert not UNSAFE_RE.search(doc), UNSAFE_RE.findall(doc)
    parsed = Parsed(doc)
    assert {t for t, _ in parsed.tags} <= TAGS, {t for t, _ in parsed.tags} - TAGS
    for tag, attrs in parsed.tags:
        for name, val in attrs:
            if tag in ("meta", "html") or (tag, name, val) == ("details", "open", None):
                continue
            if tag in ("svg", "rect", "text", "line"):  # geometry: numbers, colours and the templates' own words
                assert re.fullmatch(r"[\d. ]+|#[0-9a-f]{6}|end|middle|img|chart( history)?|http://www.w3.org/2000/svg",
                                    val or ""), (tag, name, val)
                continue
            assert name in ATTRIBUTE_VALUE, (tag, name, val)
            assert ATTRIBUTE_VALUE[name].fullmatch(val or ""), (tag, name, val)
    hrefs = {dict(a)["href"] for t, a in parsed.tags if t == "a"}
    assert JS_URL not in hrefs and not any("javascript" in (h or "").split("?")[0] for h in hrefs)
    text = "".join(parsed.text)
    assert text.count("<script>alert(1)</script>") >= hostile_shown, "hostile text dropped instead of shown"


def hostile_audit():
    nasty_file = f"countries/zz/{HOSTILE}.md"
    claims = [
        claim(f"Levy 0.8 % {HOSTILE}", [value("pct", "0.8 %")], url=GOOD_URL, scope="zz", line_no=3,
              file=nasty_file, section=HOSTILE, last_verified="2026-01-01"),
        claim(f"Fee €1,250 {HOSTILE}", [value("money", "€1,250")], url=JS_URL, scope=HOSTILE, line_no=4),
        claim(f"Rate 9 % {HOSTILE}", [value("pct", "9 %")], url=QUOTE_URL, scope="zz", line_no=5),
    ]
    pages = {
        GOOD_URL: page(GOOD_URL, f"{FILLER} the levy is 1.1 % {HOSTILE} {FILLER}", content_changed=True,
                       changed_at="2026-06-15T00:00:00+00:00", diff=f"-levy 0.8 % {HOSTILE}\n+levy 1.1 % {HOSTILE}"),
        JS_URL: page(JS_URL, None, status="REFUSED", note=f"refused {HOSTILE}"),
        QUOTE_URL: page(QUOTE_URL, f"{FILLER} the rate is 6 % {HOSTILE} {FILLER}"),
    }
    priors = {c.id: build_prior(c, pages[c.source_url], rules_of()) for c in claims}
    return build_audit(claims, pages, priors, run_at=datetime(2026, 7, 1, 9, 0, tzinfo=UTC))


def hostile_verdicts() -> list[Verdict]:
    common = dict(scope="zz", file=f"countries/zz/{HOSTILE}.md", claim_text=f"Levy 0.8 % {HOSTILE}",
                  source_tier="primary-gov", prior="TOKENS_ABSENT", source_says=HOSTILE, quote=HOSTILE, note=HOSTILE,
                  passages=[HOSTILE], draft=DraftVerdict(verdict=HOSTILE),
                  downgrades=[Downgrade(check=HOSTILE, reason=HOSTILE, before=HOSTILE, after=HOSTILE)])
    return [Verdict(id="a", line_no=3, source_url=JS_URL, verdict="MISMATCH", **common),
            Verdict(id="b", line_no=4, source_url=QUOTE_URL, verdict="MATCH", **common)]


RUN = {"provider": HOSTILE, "model": HOSTILE, "prompt_version": HOSTILE, "run_at": HOSTILE, "stopped_by": HOSTILE}
CORRECTIONS = [Correction("a", f"countries/zz/{HOSTILE}.md", 3, "MISMATCH", HOSTILE, HOSTILE, HOSTILE, HOSTILE,
                          HOSTILE, JS_URL)]


def test_hostile_text_is_inert_in_every_html_page(tmp_path: Path) -> None:
    audit = hostile_audit()
    history = [AuditPoint(HOSTILE, 1, 1, 1, 1), point_of(audit.run_at, audit.headline)]
    report = write_reports(audit, tmp_path / "audit", previous_run=HOSTILE, history=history)["report.html"]
    assert_inert(report.read_text(encoding="utf-8"), hostile_shown=8)
    assert append_verdict_section(report, hostile_verdicts(), RUN, corrections=CORRECTIONS) is True
    appended = report.read_text(encoding="utf-8")
    assert_inert(appended, hostile_shown=8 + 20)
    assert '<section id="claim-verdicts">' in appended
    verdicts = write_verdict_report(hostile_verdicts(), RUN, tmp_path / "v", corrections=CORRECTIONS)["verdicts.html"]
    assert_inert(verdicts.read_text(encoding="utf-8"), hostile_shown=20)
    chart = priors_by_scope_svg(pd.DataFrame([{"scope": HOSTILE, "prior": "TOKENS_ABSENT"}]))
    assert_inert(chart, hostile_shown=1)
    assert_inert(history_html(history), hostile_shown=0)  # a run time that is no time is shown as it is
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in history_html(history)


def test_an_http_url_with_quotes_is_linked_with_its_quotes_escaped(tmp_path: Path) -> None:
    doc = write_reports(hostile_audit(), tmp_path)["report.html"].read_text(encoding="utf-8")
    hrefs = [dict(a)["href"] for t, a in Parsed(doc).tags if t == "a"]
    assert QUOTE_URL in hrefs and GOOD_URL in hrefs  # the exact URL, once the attribute is parsed
    assert 'href="https://www.tax.gov.zz/a?b=&#34;&gt;&lt;script&gt;' in doc
    assert f'<span class="url">{JS_URL}</span>' in doc  # not a link: text


def test_every_expression_is_escaped_and_neutralised_whatever_builds_it() -> None:
    """Whatever writes it, an expression, a filter or macro returning markup (join, a macro's output), a
    concatenation: no bidi or control character gets out of a render, and a template gets no way around the
    escaping."""
    env = html_environment()
    tpl = env.from_string(
        "{% macro m(x) %}<i>{{ x }}</i>{% endmacro %}"
        "{{ items|join(', ') }}|{{ m(text) }}|{{ text ~ '!' }}|{{ '%s'|format(text) }}|{{ none_value }}|{{ nan }}")
    out = tpl.render(items=[HOSTILE, HOSTILE], text=HOSTILE, none_value=None, nan=float("nan"))
    assert not UNSAFE_RE.search(out) and "<script" not in out and "<img" not in out
    assert out.count("&lt;script&gt;") == 5 and out.endswith("||")  # None and NaN: nothing
    assert "<i>&lt;script&gt;" in out  # the macro's own tag stays, its argument is escaped
    ours = env.from_string("{{ m }}").render(m=jinja2.filters.Markup(f"<b>{HOSTILE}</b>"))
    assert ours.startswith("<b><script>") and not UNSAFE_RE.search(ours)  # our markup, kept, and neutralised
    streamed = "".join(tpl.generate(items=[HOSTILE], text=HOSTILE, none_value=None, nan=0.5))
    assert "&lt;script&gt;" in streamed and not UNSAFE_RE.search(streamed)  # generate() and stream() too
    with pytest.raises(jinja2.UndefinedError):  # a misspelt name fails the render instead of writing nothing
        env.from_string("{{ claim.textt }}").render(claim={"text": "x"})


def test_no_template_opts_out_of_escaping_and_every_one_ships() -> None:
    """No |safe, no autoescape block, no raw Markup built in the package outside html_templates; every template is
    loaded from its package's templates/ folder, which pyproject's package-data ships."""
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["claims_pipeline"]
    templates = sorted(p for d in ("report", "judge") for p in (REPO / "claims_pipeline" / d / "templates").iterdir())
    assert len(templates) >= 8
    for path in templates:
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup", source), path.name
        assert not UNSAFE_RE.search(source), path.name  # the page is neutralised whole: nothing of ours is lost
        assert any(path.relative_to(REPO / "claims_pipeline").match(pattern) for pattern in package_data), path
    for package in (REPORT_PACKAGE, JUDGE_PACKAGE):
        env = html_environment(package)
        assert env.autoescape is True and env.finalize is shown and env.undefined is jinja2.StrictUndefined
        assert env.template_class is NeutralTemplate
        for name in env.list_templates():
            assert env.get_template(name).filename.startswith(str(REPO / "claims_pipeline")), name
    built = [p for p in (REPO / "claims_pipeline").rglob("*.py")
             if re.search(r"\bMarkup\(|\bmarkupsafe\b", p.read_text(encoding="utf-8"))]
    assert built == [REPO / "claims_pipeline" / "report" / "html_templates.py"]


def test_a_url_breaks_where_its_text_does_escaped_whole_as_part_by_part() -> None:
    """|breakable escapes the text once and finds the break points in the escaped text: the same page as the text
    split at escape.url_break_points and each part escaped (markup characters and '&#' next to the break points)."""
    rnd = random.Random(5)
    alphabet = "/?#&<>\"'ab:.-;\né\u202e"
    texts = [QUOTE_URL, GOOD_URL, JS_URL, HOSTILE, "a//b", "&#39;/x?&amp;#y", "//", "/", ""]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 14))) for _ in range(20000)]
    for text in texts:
        assert breakable(text) == Markup("<wbr>").join(url_break_points(text)), text
