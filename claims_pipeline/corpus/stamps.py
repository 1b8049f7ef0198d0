"""Verification stamps written into the corpus, and dates that describe the writing process, not the world.

Both are masked (replaced by spaces, positions kept) before values are read, so the tracker's own dates are
never demanded from the cited page. Inline stamps also become the claim's `inline_stamp`; the file footer
(`**Last verified**: YYYY-MM-DD`) applies to claims of that file that carry no inline stamp.
"""

from __future__ import annotations

import re

from claims_pipeline.corpus.records import InlineStamp

DATE = r"\d{4}-\d{2}-\d{2}"
_DMY = r"\d{1,2}\s(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s\d{4}"
# A stamp's date: ISO, or day-month-year ("verified 28 May 2026").
STAMP_DATE = rf"(?:{DATE}|{_DMY})"
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                        "dec"), start=1)}

# The reference stamp (docs/decisions/0001): "(2026-05-27 verified; source …", "(2026-05-27 stale-marker)".
STAMP_RE = re.compile(rf"\(({DATE})\s+(re-verified|verified|stale-marker|stale|updated)\b", re.I)
# Real-corpus variants: "(VERIFIED — audit-cbi.md, 2026-05-28)", "(VERIFIED, cip.gov.ag …, audit-cbi.md 2026-05-28)",
# "VERIFIED 2026-05-28", "re-verified 2026-09-24", "fetched 2026-05-28", "re-fetched 2026-05-28". In a
# "(VERIFIED …)" parenthetical the stamp is the date right after the word ("(VERIFIED 2026-05-28; applies from
# 2027-01-01)"), else its LAST date (earlier ones are the content: "effective 2024-08-01 per Regs, audit
# 2026-05-28"); markdown links may sit inside it.
_PAREN_BODY = r"(?:[^()\n]|\[[^\]\n]*\]\([^()\n]*\))"  # text or a markdown link, inside "( … )"
# Words that make a later date the content's ("applies from 2027-01-01"), not a later verification.
_CONTENT_DATE_WORDS = r"(?:applies|apply|applying|effective|from|since|in force|valid|until|takes effect)"
VERIFIED_PAREN_RE = re.compile(
    # the date right after the word, when a later date is the content's: "(VERIFIED 2026-05-28; applies from …)"
    rf"\(\s*(?:re-)?verified\b(?:(?=[\s:,—–-]*{STAMP_DATE}\b{_PAREN_BODY}{{0,300}}?\b{_CONTENT_DATE_WORDS}\b)"
    rf"[\s:,—–-]*"
    # else the last date: "(VERIFIED 2026-05-28, re-verified 2026-09-24)", "(VERIFIED — effective …, audit …)"
    rf"|{_PAREN_BODY}{{0,300}}\b)({STAMP_DATE})\b", re.I)
VERIFIED_BARE_RE = re.compile(rf"\b(?:re-)?verified(?:\s+(?:on|at))?:?\s+({STAMP_DATE})\b", re.I)
FETCHED_RE = re.compile(rf"\b(?:re-)?fetched(?:\s+on)?:?\s+({STAMP_DATE})\b", re.I)
# Masked only (never a stamp): the reference "as of / checked / re-checked DATE", and process dates such as
# "TLS error observed 2026-05-28", "accessed", "retrieved", "last checked", "noted", "reviewed 09 Jan 2026".
ASOF_RE = re.compile(rf"\b(?:as of|checked|re-checked)\s+({DATE})\b", re.I)
PROCESS_DATE_RE = re.compile(
    rf"\b(?:observed|accessed|retrieved|last checked|noted|reviewed)(?:\s+(?:there|on|at))?:?\s+({STAMP_DATE})\b", re.I
)
# "**Last verified**: 2026-05-28", "_Last verified: 2026-05-28_", "Last verified — 2026-05-28", "last verified on
# 28 May 2026": the file's footer on a line citing nothing (file_last_verified), else that line's stamp.
_LAST_VERIFIED = r"(?<![A-Za-z0-9])last[ -]verified\b[*_]*\s*(?:[:—–-][*_]*\s*)?(?:on\s+)?"
LAST_VERIFIED_RE = re.compile(rf"{_LAST_VERIFIED}({STAMP_DATE})(?!\d)", re.I)


def iso_date(date: str) -> str:
    """A stamp date as YYYY-MM-DD ('28 May 2026' -> '2026-05-28')."""
    if date[:4].isdigit():
        return date
    day, month, year = date.replace(".", "").split()
    return f"{year}-{_MONTHS[month[:3].lower()]:02d}-{int(day):02d}"


# Every stamp form, and every masked form but the day-month-year process date, holds an ISO date: a line
# without one skips those regexes. Only whether there is one matters: found from its first '-' (a rarer first
# character than a digit), with the four digits before it checked by a lookbehind; same lines as DATE.
_ISO_ANYWHERE_RE = re.compile(r"-(?<=\d{4}-)\d{2}-\d{2}")

_STAMP_VARIANTS = (VERIFIED_PAREN_RE, VERIFIED_BARE_RE, FETCHED_RE, LAST_VERIFIED_RE)
_MASKED = (STAMP_RE, *_STAMP_VARIANTS, ASOF_RE, PROCESS_DATE_RE)
# Cheap pre-check: every masked form contains one of these words (lower-cased line).
_TRIGGERS = ("verified", "stale", "updated", "fetched", "as of", "checked", "observed", "accessed", "retrieved",
             "noted", "reviewed")
# Each regex's own words (every match of it holds one, lower-cased).
_WORDS_OF: dict[re.Pattern[str], tuple[str, ...]] = {
    STAMP_RE: ("verified", "stale", "updated"),
    VERIFIED_PAREN_RE: ("verified",),
    VERIFIED_BARE_RE: ("verified",),
    FETCHED_RE: ("fetched",),
    ASOF_RE: ("as of", "checked"),
    PROCESS_DATE_RE: ("observed", "accessed", "retrieved", "checked", "noted", "reviewed"),
    LAST_VERIFIED_RE: ("verified",),
}
# Characters re.IGNORECASE matches to an ASCII letter which str.lower() leaves non-ASCII (s, i, k).
_FOLDS_TO_ASCII = ("\u017f", "\u0131", "\u0130", "\u212a")


_DMY_RE = re.compile(_DMY)
_DMY_STAMP_WORDS = ("erified", "ERIFIED", "etched", "ETCHED")  # Verified, VERIFIED, fetched, FETCHED
# The forms that accept a day-month-year date: all a line without an ISO date can hold.
_DMY_FORMS = (VERIFIED_PAREN_RE, VERIFIED_BARE_RE, FETCHED_RE, LAST_VERIFIED_RE, PROCESS_DATE_RE)


def find_inline_stamp(line: str, lowered: str | None = None) -> InlineStamp | None:
    """The first stamp on the line: the reference STAMP_RE form first, then the real-corpus variants."""
    if _ISO_ANYWHERE_RE.search(line) is not None:
        m = STAMP_RE.search(line)
        if m:
            return InlineStamp(date=m.group(1), kind=m.group(2).lower().replace("re-verified", "verified"))
    elif not any(w in line for w in _DMY_STAMP_WORDS) or _DMY_RE.search(line) is None:
        return None  # only the day-month-year forms are left: each holds "verified" or "fetched" (plain finds first)
    hits = [m for rx in _gated(_STAMP_VARIANTS, line, lowered) if (m := rx.search(line))]
    if not hits:
        return None
    first = min(hits, key=lambda h: h.start())
    return InlineStamp(date=iso_date(first.group(1)), kind="verified")


def _gated(regexes: tuple[re.Pattern[str], ...], line: str, lowered: str | None) -> tuple[re.Pattern[str], ...]:
    """The regexes whose own trigger word is on the line. Most of them open with `\\b` and would be tried at
    every position; a word lookup is far cheaper. A line holding a character that re.IGNORECASE matches to
    an ASCII letter but str.lower() does not map to one ('ſ', 'ı', …) keeps them all."""
    if not line.isascii() and any(ch in line for ch in _FOLDS_TO_ASCII):
        return regexes
    lowered = line.lower() if lowered is None else lowered
    return tuple(rx for rx in regexes if any(w in lowered for w in _WORDS_OF[rx]))


def mask_stamps(line: str, lowered: str | None = None) -> str:
    """Blank the date of every stamp, as-of, process date and 'Last verified' on the line (same length)."""
    lowered = line.lower() if lowered is None else lowered
    if not any(t in lowered for t in _TRIGGERS):
        return line
    chars = None
    for rx in _gated(_MASKED if _ISO_ANYWHERE_RE.search(line) is not None else _DMY_FORMS, line, lowered):
        for m in rx.finditer(line):
            s, e = m.span(1)
            if chars is None:
                chars = list(line)
            chars[s:e] = " " * (e - s)
    return line if chars is None else "".join(chars)


_FOOTER_START_RE = re.compile(r"[ \t>*_-]*l", re.I)  # up to the 'l' of "Last verified": only markup before it


def file_last_verified(text: str) -> str | None:
    """The file's `Last verified` date: the newest one on a line it opens ('**Last verified**: 2026-05-28 against
    [source](…)') or on a line that cites nothing (a closing note ending with it). Elsewhere on a line with a
    citation it is that line's stamp, not the file's. Found from plain finds of the word (C speed), each line then searched."""
    dates: list[str] = []
    for needle in ("erified", "ERIFIED"):
        i = text.find(needle)
        while i >= 0:
            # "last verified" ends where "erified" does: search just around it, then ask whether its line is the
            # footer: it opens the line ("**Last verified**: … against [source](…)"), or the line cites nothing
            m = LAST_VERIFIED_RE.search(text, max(0, i - 6), i + 48)
            if m is not None:
                start, end = text.rfind("\n", 0, i) + 1, text.find("\n", i)
                if _FOOTER_START_RE.fullmatch(text, start, m.start() + 1) or \
                        text.find("://", start, end if end >= 0 else len(text)) < 0:
                    dates.append(iso_date(m.group(1)))
            i = text.find(needle, i + 1)
    return max(dates) if dates else None
