"""The message itself, from findings built here: bounded lists, hostile corpus text made inert, the report link,
and what 'new' means for one channel's state (pure: no audit, no network)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from claims_pipeline.config.settings import NotifySettings
from claims_pipeline.notify import Outcome, _tell
from claims_pipeline.notify.channels import Channel, channels, redact
from claims_pipeline.notify.message import audit_message
from claims_pipeline.notify.news import Findings, Item, short


def findings(tmp_path: Path, n_absent: int) -> Findings:
    report = tmp_path / "reports" / "20260601T060000"
    report.mkdir(parents=True)
    (report / "report.html").write_text("<html></html>")
    items = [Item("tokens_absent", f"absent|f.md|u{i}", short(f"f.md:{i} — {i}% not on http://x.gov.xa/{i}"))
             for i in range(n_absent)]
    return Findings(report, "2026-06-01T06:00:00+00:00", "2026-06-01 06:00:00 UTC",
                    {"total": 40, "flagged": n_absent, "tokens_absent": n_absent}, items, {"tokens_absent"})


def test_a_long_list_is_cut_and_the_report_linked(tmp_path: Path) -> None:
    found = findings(tmp_path, 12)
    title, body = audit_message(found, found.items, since="2026-05-01 06:00:00 UTC", unsent_since=None,
                                failures=[], max_items=5, report_url="https://kb.example.org/audit/")
    assert title == "claims_pipeline: 12 new findings since the last notice, 12 flagged"
    assert body.count("\n- f.md:") == 5 and "- … and 7 more in the report" in body
    assert body.endswith("Report: https://kb.example.org/audit/20260601T060000/report.html")
    assert "New since the last notification (2026-05-01 06:00:00 UTC):" in body


def test_the_first_notice_on_a_channel_says_so_not_news_since_a_notice_never_sent(tmp_path: Path) -> None:
    found = findings(tmp_path, 3)
    title, body = audit_message(found, found.items, since=None, unsent_since=None, failures=[], max_items=5,
                                report_url=None)
    assert title == "claims_pipeline: first notice, 3 findings, 3 flagged"
    assert "since the last notice" not in title and "New (the first notification on this channel" in body
    quiet, _ = audit_message(found, [], since=None, unsent_since=None, failures=[], max_items=5, report_url=None)
    assert quiet == "claims_pipeline: first notice, 3 flagged"


def test_corpus_text_reaches_a_channel_inert_and_bounded() -> None:
    hostile = "0.8%\x1b[2J\x1b]0;owned\x07 \u202egnp.exe\n@channel " + "x" * 500
    line = short(hostile)
    assert "\x1b" not in line and "\u202e" not in line and "\x07" not in line and "\n" not in line
    assert len(line) <= 160 and line.endswith("…")


def test_new_means_not_told_to_this_channel_and_a_failed_send_keeps_it(tmp_path: Path) -> None:
    found = findings(tmp_path, 2)
    conf = NotifySettings(urls=["json://127.0.0.1:9/unused"])
    down = Channel("c1", "channel 1 (json)", "", problem="environment variable X not set")
    kept: dict = {}
    result = _tell(down, kept, found, "2026-06-01 06:00:00 UTC", conf, Outcome("sent"))
    assert result.status == "failed" and result.new == 2 and kept["notified"] == {}
    assert kept["unsent_since"] == "2026-06-01 06:00:00 UTC"
    # the same findings again, on a channel that is still down: still new (owed), still failing
    again = _tell(down, kept, found, "2026-07-01 06:00:00 UTC", conf, Outcome("sent"))
    assert again.new == 2 and kept["unsent_since"] == "2026-06-01 06:00:00 UTC"
    # every finding went away before it could be sent: nothing is owed any more
    found.items.clear()
    gone = _tell(down, kept, found, "2026-08-01 06:00:00 UTC", conf, Outcome("sent"))
    assert gone.status == "nothing new" and "unsent_since" not in kept and kept["notified"] == {"tokens_absent": []}


def test_channels_name_no_secret_and_redact_what_they_read() -> None:
    conf = NotifySettings(urls=["ntfys://${NTFY_TOKEN}@ntfy.example.org/kb", "slack://${A}/${B}/${C}/#kb"],
                          urls_env="MORE_URLS")
    env = {"NTFY_TOKEN": "tk_0123456789", "A": "T000", "B": "B000", "MORE_URLS": "json://hooks.example.org/s3cr3t-path"}
    first, second, third = channels(conf, env)
    assert (first.label, second.label, third.label) == ("channel 1 (ntfys)", "channel 2 (slack)", "channel 3 (json)")
    assert first.url == "ntfys://tk_0123456789@ntfy.example.org/kb" and "tk_0123456789" not in repr(first)
    assert second.problem == "environment variable C not set" and second.url == ""
    assert redact(f"failed: {third.url} said no", third.secrets) == "failed: *** said no"
    # a value as a log line quotes it inside a URL (percent-encoded) is taken out too
    [mail] = channels(NotifySettings(urls=["mailtos://kb:${PW}@smtp.example.org"]), {"PW": "p@ss/w:rd"})
    assert redact("AUTH for kb:p%40ss%2Fw%3Ard failed", mail.secrets) == "AUTH for kb:*** failed"


class _CountedKeys(list[str]):
    """A channel's remembered keys, counting how often they are read through."""

    reads = 0

    def __iter__(self) -> Iterator[str]:
        type(self).reads += 1
        return super().__iter__()


def test_what_is_new_is_found_in_one_pass_over_what_the_channel_was_told(tmp_path: Path) -> None:
    """Issue 35: the keys a channel was told were made a set once per finding (20k findings: 15 s, 40k: 58 s on
    'nothing new'); now once per kind, whatever the number of findings."""
    found = findings(tmp_path, 2000)
    told = _CountedKeys(found.keys("tokens_absent"))
    kept = {"notified": {"tokens_absent": told}, "last_sent_at": "2026-05-01 06:00:00 UTC"}
    down = Channel("c1", "channel 1 (json)", "", problem="environment variable X not set")
    result = _tell(down, kept, found, "2026-06-01 06:00:00 UTC", NotifySettings(urls=["json://x/"]), Outcome("sent"))
    assert result.status == "nothing new"
    assert _CountedKeys.reads == 1


def test_chat_markup_in_corpus_text_reaches_no_channel_live() -> None:
    """Mentions that would ping a whole channel and links that show one address over another (Slack, Discord,
    Teams, Matrix markup) arrive as plain text; an e-mail address stays as written."""
    line = short("0.8% @everyone @here <!channel> <@U123> [official source](http://evil.example) "
                 "![x](http://evil.example/p.png) ask kb@example.org")
    assert "@everyone" not in line and "@here" not in line and "<!channel>" not in line and "<@U123>" not in line
    assert "](" not in line
    assert "＠everyone ＠here ‹!channel> ‹＠U123> [official source] (http://evil.example)" in line
    assert line.endswith("ask kb@example.org")
