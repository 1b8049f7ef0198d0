"""The text of a notification: a title, then the headline numbers, what is new since the channel's last
notification (bounded per kind), runs that failed, and where the report is. Plain text: every piece of corpus
or page text in it went through news.short (no control or bidi characters, one bounded line)."""

from __future__ import annotations

from typing import Any

from claims_pipeline.notify.news import HEADINGS, KINDS, Findings, Item, short

APP = "claims_pipeline"


def headline_line(found: Findings) -> str:
    h = found.headline
    parts = [f"{h.get('total', '?')} claims, {h.get('flagged', '?')} flagged"]
    detail = [f"{name} {h[key]}" for name, key in (("TOKENS_ABSENT", "tokens_absent"),
                                                    ("stale_changed", "stale_changed"),
                                                    ("CONTENT_CHANGED", "content_changed")) if h.get(key)]
    if detail:
        parts[0] += f" ({', '.join(detail)})"
    if found.unreadable is not None:
        parts.append(found.unreadable.line())
    line = f"Audit of {found.run_at_utc or found.run_at}: " + "; ".join(parts) + "."
    if found.verdict_counts:
        line += " Verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(found.verdict_counts.items())) + "."
    return line


def report_link(found: Findings, report_url: str | None) -> str:
    if report_url:
        return f"{report_url.rstrip('/')}/{found.report_dir.name}/report.html"
    html = found.report_dir / "report.html"
    return str(html if html.is_file() else found.report_dir / "report.md")


def audit_message(found: Findings, new: list[Item], *, since: str | None, unsent_since: str | None,
                  failures: list[dict[str, Any]], max_items: int, report_url: str | None) -> tuple[str, str]:
    """(title, body) of the notification after an audit."""
    flagged = found.headline.get("flagged", "?")
    findings = f"{len(new)} finding{'s' if len(new) != 1 else ''}"
    if since is None:  # no notice before on this channel: nothing is "since the last notice"
        title = f"{APP}: first notice, {findings}, {flagged} flagged" if new else f"{APP}: first notice, {flagged} flagged"
    else:
        title = (f"{APP}: {len(new)} new finding{'s' if len(new) != 1 else ''} since the last notice, {flagged} flagged"
                 if new else f"{APP}: nothing new since the last notice, {flagged} flagged")
    lines = [headline_line(found), ""]
    if new:
        lines.append(f"New since the last notification ({since}):" if since else
                     "New (the first notification on this channel: everything found counts as new):")
        for kind in KINDS:
            of_kind = [i for i in new if i.kind == kind]
            if not of_kind:
                continue
            lines.append(f"{HEADINGS[kind]} ({len(of_kind)}):")
            lines += [f"- {i.text}" for i in of_kind[:max_items]]
            if len(of_kind) > max_items:
                lines.append(f"- … and {len(of_kind) - max_items} more in the report")
    else:
        lines.append(f"Nothing new since the last notification ({since})." if since else "Nothing to report.")
    if unsent_since:
        lines.append(f"(This carries news found since {unsent_since}: the notifications since then could not be sent.)")
    if failures:
        lines += ["", *failure_lines(failures)]
    lines += ["", f"Report: {report_link(found, report_url)}"]
    return title, "\n".join(lines)


def failure_lines(failures: list[dict[str, Any]]) -> list[str]:
    out = [f"Run{'s' if len(failures) != 1 else ''} that failed:"]
    for f in failures:
        out.append(short(f"- {f.get('at', '')} {f.get('job', '')} (run {str(f.get('run_id', ''))[:8]}): "
                         f"{f.get('error', '') or 'no reason given'}", 300))
    return out


def failure_message(failures: list[dict[str, Any]]) -> tuple[str, str]:
    """(title, body) of a failed run's notification; failures: this one last, any not sent before first."""
    last = failures[-1]
    title = f"{APP}: run failed — {short(last.get('job', ''), 60)}"
    body = "\n".join([*failure_lines(failures), "",
                      "Nothing of that run's audit was reported; the next audit retries (see the run in the UI)."])
    return title, body
