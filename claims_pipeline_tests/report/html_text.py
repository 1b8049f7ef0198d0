"""What a text looks like in any HTML page the project writes: rendered through the project's own HTML environment,
so a test's expected text is escaped and neutralised exactly as the pages are."""

from __future__ import annotations

from claims_pipeline.report.html_templates import html_environment


def as_html(text: object) -> str:
    return html_environment().from_string("{{ text }}").render(text=text)
