"""The claim's context words: the significant words a figure should sit near on the cited page."""

from __future__ import annotations

import re

# Markdown links, bare URLs and the tracker's own stamps say nothing about the figure's context.
_LINK_RE = re.compile(r"\[[^\]]*\]\([^)]*\)|https?://\S+|`[^`]*`")
_STAMP_RE = re.compile(r"\(\s*\d{4}-\d{2}-\d{2}\s+(?:re-verified|verified|stale-marker|stale|updated)[^)]*\)", re.I)
_WORD_RE = re.compile(r"[^\W\d_]+")

_STOPWORDS = frozenset(
    """
    about above after again against also among and any are around because been before being below between
    both but can could default did does doing down during each either else even every few for from further
    had has have having here how into its itself just least less like made make many may might more most
    much must near neither never next none nor not now off often once only other others our out over own
    per plus same see should since some such than that the their them then there these they this those
    through thus under until upon very was were what when where which while who whom whose why will with
    within without would yet your you source sources secondary primary verify verified stale marker updated
    pour dans avec sans sont leur leurs une des les aux par sur sous entre depuis selon plus moins cette
    ces est sera été être aussi ainsi donc mais para por con sin los las del una unos unas como entre desde
    und der die das den dem des ein eine einer mit von für auf aus bei nach über unter oder sowie
    approx approximately circa around typically usually commonly cited note see also check
    """.split()
)


def claim_prose(claim_text: str) -> str:
    """The claim without its links, bare URLs and the tracker's stamps: what it says."""
    return _STAMP_RE.sub(" ", _LINK_RE.sub(" ", claim_text))


def context_words(claim_text: str, limit: int = 24) -> list[str]:
    """Casefolded significant words of the claim, in order of first appearance (≥4 letters, or an acronym)."""
    text = claim_prose(claim_text)
    out: list[str] = []
    seen: set[str] = set()
    for m in _WORD_RE.finditer(text):
        word = m.group(0)
        folded = word.casefold()
        is_acronym = len(word) >= 2 and word.isupper()
        if folded in seen or folded in _STOPWORDS:
            continue
        if len(folded) < 4 and not is_acronym:
            continue
        seen.add(folded)
        out.append(folded)
        if len(out) >= limit:
            break
    return out
