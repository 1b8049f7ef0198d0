"""What an audit found, as items a notification can say are new: claims whose source changed after their
`Last verified` date (stale_changed), figures no longer on their cited page (TOKENS_ABSENT), cited pages that could
not be read, and verdicts MISMATCH or STALE. Read from the newest written report (reports/LATEST: report.json,
pages.parquet, verdicts.json beside them), so the Dagster step and the CLI say the same.

Each item has a key that stays the same while the finding does (the file, the URL, a digest of the claim's text,
and what makes the finding: the change's time, the missing figures, the verdict), and not its line number, which
moves when lines are added above it."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claims_pipeline.common.text_safety import replaced
from claims_pipeline.config.home import HomeLayout
from claims_pipeline.web.unreadable import UnreadableCount, report_unreadable

KINDS = ("stale_changed", "tokens_absent", "unreadable", "verdicts")
HEADINGS = {
    "stale_changed": "Source changed after its Last verified date",
    "tokens_absent": "Figure not on its cited page (TOKENS_ABSENT)",
    "unreadable": "Cited page became unreadable",
    "verdicts": "Verdict MISMATCH or STALE",
}
NEWS_VERDICTS = ("MISMATCH", "STALE")


@dataclass(frozen=True)
class Item:
    kind: str
    key: str
    text: str  # one line, safe to send (no control or bidi characters), bounded


@dataclass
class Findings:
    report_dir: Path
    run_at: str
    run_at_utc: str
    headline: dict[str, Any]
    items: list[Item] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)  # the kinds read (verdicts only once a verdict report exists)
    unreadable: UnreadableCount | None = None
    verdict_counts: dict[str, int] | None = None

    def keys(self, kind: str) -> list[str]:
        return sorted({i.key for i in self.items if i.kind == kind})


# Chat services read markup in a message's text: an @everyone / @here / @channel / @room pings a whole channel,
# Slack's <!channel>, <@U123> and <http://x|text>, Discord's <@123> and Teams' <at> too, and a markdown link shows
# any text over any address. Corpus and page text is no one's to ping with or to link from: the @ of a mention
# becomes the fullwidth ＠ (an e-mail address, with a word before its @, stays), a < that opens a tag the
# lookalike ‹, and a link's "](" becomes "] (", which no markdown reads as a link.
_MENTION_RE = re.compile(r"(?<![\w.+-])@(?=\w)")
_TAG_RE = re.compile(r"<(?=[!@#/A-Za-z])")
_LINK_RE = re.compile(r"\]\(")


def inert_markup(text: str) -> str:
    return _LINK_RE.sub("] (", _MENTION_RE.sub("＠", _TAG_RE.sub("‹", text)))


def short(text: Any, limit: int = 160) -> str:
    """One line of corpus or page text as a message may carry it: one line, no control or bidi character, no
    chat markup (inert_markup), at most `limit` characters."""
    one = inert_markup(" ".join(replaced(str(text or "")).split()))
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _digest(text: Any) -> str:
    return hashlib.sha1(" ".join(str(text or "").split()).encode("utf-8")).hexdigest()[:10]


def latest_report_dir(home_dir: Path) -> Path | None:
    path = HomeLayout(home_dir).latest_report_dir()  # LATEST, relative to the home or (older homes) absolute
    return path if path is not None and (path / "report.json").is_file() else None


def current_findings(home_dir: Path) -> Findings | None:
    """The newest report's findings; None when no report was written yet."""
    report_dir = latest_report_dir(home_dir)
    if report_dir is None:
        return None
    doc = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    found = Findings(report_dir, str(doc.get("run_at") or ""), str(doc.get("run_at_utc") or ""),
                     dict(doc.get("headline") or {}))
    for r in doc.get("stale_changed") or []:
        when = str(r.get("changed_at_utc") or r.get("changed_at") or "")[:10]
        found.items.append(Item("stale_changed", f"stale|{r['file']}|{r['url']}|{_digest(r.get('claim'))}|{r.get('changed_at')}",
                                short(f"{r['file']}:{r['line_no']} — {r['url']} changed {when}, after "
                                      f"{r.get('stamp') or 'an unknown date'}")))
    for r in doc.get("tokens_absent") or []:
        missing = ", ".join(str(m) for m in r.get("missing") or [])
        # a page changed since the last audit: the figures were checked on its new text (said so; the key stays
        # the same once the change is confirmed, so the finding is news once)
        unconfirmed = f" ({r['page_unconfirmed_note']})" if r.get("page_unconfirmed_note") else ""
        found.items.append(Item("tokens_absent", f"absent|{r['file']}|{r['url']}|{_digest(r.get('claim'))}|{missing}",
                                short(f"{r['file']}:{r['line_no']} — {missing or 'its figures'} not on {r['url']}"
                                      f"{unconfirmed}", 220)))
    found.covered |= {"stale_changed", "tokens_absent"}
    unreadable = report_unreadable(report_dir)
    if unreadable is not None:
        found.unreadable = unreadable
        found.items += [Item("unreadable", f"unreadable|{url}", short(f"{url} — {reason}"))
                        for url, reason in sorted(unreadable.urls.items())]
        found.covered.add("unreadable")
    _add_verdicts(found, report_dir / "verdicts.json")
    return found


def _add_verdicts(found: Findings, path: Path) -> None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no verdict report for this audit yet: the verdicts notified before stay as they were
    verdicts = [v for v in doc.get("verdicts") or [] if isinstance(v, dict)]
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[str(v.get("verdict"))] = counts.get(str(v.get("verdict")), 0) + 1
        if v.get("verdict") not in NEWS_VERDICTS:
            continue
        said = f"; the page says {v['source_says']}" if v.get("source_says") else ""
        found.items.append(Item(
            "verdicts", f"verdict|{v.get('file')}|{v.get('source_url')}|{_digest(v.get('claim_text'))}|{v['verdict']}",
            short(f"{v.get('file')}:{v.get('line_no')} {v['verdict']} — claims {v.get('claimed') or '?'}{said} "
                  f"({v.get('source_url')})", 220)))
    found.verdict_counts = counts
    found.covered.add("verdicts")
