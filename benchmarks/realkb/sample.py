"""Draw the lines to label by hand in the realkb development set (fixed seeds: the same lines every run).

    .venv/bin/python benchmarks/realkb/sample.py [--data ../shared/data/realkb-dev] [--kb NAME] [--show]

Per knowledge base: 40 lines drawn at random from those with a digit in their visible text (the *digit sample*),
then the other digit lines whose block holds a link, footnote, citation or "Source:" marker, in a seeded random
order (the *claim pool*: the labeller walks it from the top until the KB has 20 claims). `--show` prints each
line with its block, for labelling in a terminal; the text is never written to the repository. Rules:
benchmarks/realkb/README.md.
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass
from pathlib import Path

DIGIT_SAMPLE = 40
DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "realkb-dev"

_FENCE = re.compile(r"^\s*(```|~~~)")
# What a reader does not see as text: link and image targets, reference definitions' URLs, bare URLs, attributes.
_HIDDEN = re.compile(
    r"\]\([^)]*\)"
    r"|^\s*\[[^\]]+\]:\s*\S+"
    r"|(?:https?:|www\.)\S+"
    r"|\b(?:href|src|id|class|name)\s*=\s*(?:\"[^\"]*\"|'[^']*')",
    re.IGNORECASE,
)
_MARKER = re.compile(
    r"\]\(\s*(?:https?:|www\.)|\]\[|\[\^|\{cite|\[@link\(|href\s*=|https?://|\[\[|<sup|#fn"
    r"|^\s*[*_>-]*\s*(?:sources?|quellen?|bronn?e?n?|fuentes?)\s*[*_]*\s*:",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Line:
    file: str  # relative to the KB folder
    no: int  # 1-based
    block: tuple[int, int]  # first and last line of its block (non-blank run)


def kb_files(kb: Path) -> list[Path]:
    return sorted(p for p in kb.rglob("*") if p.is_file() and p.suffix in (".md", ".mdx")
                  and not p.name.upper().startswith("LICENSE"))


def visible_lines(text: str) -> list[str | None]:
    """Each line's visible text, None for a line inside front matter, a code fence or an HTML comment."""
    lines = text.split("\n")
    out: list[str | None] = [None] * len(lines)
    i = 0
    if lines and lines[0].strip() in ("---", "+++"):
        end = next((j for j in range(1, len(lines)) if lines[j].strip() == lines[0].strip()), None)
        if end is not None:
            i = end + 1
    fence: str | None = None
    comment = False
    for j in range(i, len(lines)):
        line = lines[j]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        if comment:
            if "-->" in line:
                comment = False
                line = line.split("-->", 1)[1]
            else:
                continue
        line = re.sub(r"<!--.*?-->", "", line)
        if "<!--" in line:
            line, comment = line.split("<!--", 1)[0], True
        out[j] = _HIDDEN.sub(" ", line)
    return out


def kb_lines(kb: Path) -> tuple[list[Line], list[Line]]:
    """(digit lines, digit lines whose block or the next block carries a source marker)."""
    digit: list[Line] = []
    marked: list[Line] = []
    for path in kb_files(kb):
        rel = path.relative_to(kb).as_posix()
        raw = path.read_text(encoding="utf-8", errors="replace").split("\n")
        vis = visible_lines("\n".join(raw))
        blocks: list[tuple[int, int]] = []
        start = None
        for j, v in enumerate(vis + [None]):
            if v is not None and v.strip():
                start = j if start is None else start
            elif start is not None:
                blocks.append((start, j - 1))
                start = None
        for b, (lo, hi) in enumerate(blocks):
            has_marker = any(_MARKER.search(raw[k]) for k in range(lo, hi + 1))
            # a "Source:" line or a lead-in's list right after the block gives its source to it
            if not has_marker and b + 1 < len(blocks):
                nlo, nhi = blocks[b + 1]
                has_marker = bool(_MARKER.search(raw[nlo])) or (
                    raw[hi].rstrip().endswith(":") and any(_MARKER.search(raw[k]) for k in range(nlo, nhi + 1)))
            for k in range(lo, hi + 1):
                v = vis[k]
                if v is not None and re.search(r"\d", v):
                    line = Line(rel, k + 1, (lo + 1, hi + 1))
                    digit.append(line)
                    if has_marker:
                        marked.append(line)
    return digit, marked


_LIST_NUMBER = re.compile(r"^\s*(?:#+\s*)?(?:[-*+]\s+)?(?:\*\*)?\d+[.)]\s")
FIRST_POOL = 70  # pool lines walked before the figure pool is used (see figure_pool)


def figure_pool(kb: Path, drawn: list[Line], pool: list[Line]) -> list[Line]:
    """Where the claim pool's first FIRST_POOL lines are mostly numbered lists (one KB: a list item per
    organisation, each with its home page), the labeller goes on with the pool's later lines that hold a digit
    besides a list or heading number, in their own seeded order."""
    seen = set(drawn) | set(pool[:FIRST_POOL])
    out = []
    for ln in pool:
        if ln in seen:
            continue
        raw = (kb / ln.file).read_text(encoding="utf-8", errors="replace").split("\n")
        vis = visible_lines("\n".join(raw))[ln.no - 1] or ""
        if re.search(r"\d", _LIST_NUMBER.sub(" ", vis, count=1)):
            out.append(ln)
    random.Random(f"realkb:{kb.name}:figure-pool").shuffle(out)
    return out


def sample(kb: Path) -> tuple[list[Line], list[Line]]:
    """(the digit sample, the claim pool in walking order)."""
    digit, marked = kb_lines(kb)
    drawn = random.Random(f"realkb:{kb.name}:digit").sample(digit, min(DIGIT_SAMPLE, len(digit)))
    drawn.sort(key=lambda ln: (ln.file, ln.no))
    taken = set(drawn)
    pool = [ln for ln in marked if ln not in taken]
    random.Random(f"realkb:{kb.name}:pool").shuffle(pool)
    return drawn, pool


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--kb", action="append", help="only this KB (repeatable)")
    ap.add_argument("--show", action="store_true", help="print each line's block (terminal only)")
    ap.add_argument("--pool", type=int, default=60, help="pool lines to list (default 60)")
    ap.add_argument("--figure-pool", type=int, default=0, help="figure-pool lines to list (default 0)")
    args = ap.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"{args.data}: no such folder (the realkb development set is kept beside the repository)")
    kbs = sorted(p for p in args.data.iterdir() if p.is_dir() and (not args.kb or p.name in args.kb))
    for kb in kbs:
        drawn, pool = sample(kb)
        digit, marked = kb_lines(kb)
        print(f"=== {kb.name}: {len(digit)} digit lines, {len(marked)} with a source marker in their block")
        extra = figure_pool(kb, drawn, pool)[: args.figure_pool] if args.figure_pool else []
        for tag, lines in (("digit", drawn), ("pool", pool[: args.pool]), ("figure-pool", extra)):
            for i, ln in enumerate(lines, 1):
                print(f"--- {tag} {i}: {ln.file}:{ln.no} (block {ln.block[0]}-{ln.block[1]})")
                if args.show:
                    raw = (kb / ln.file).read_text(encoding="utf-8", errors="replace").split("\n")
                    lo, hi = max(ln.block[0], ln.no - 3), min(ln.block[1], ln.no + 3)
                    for k in range(lo, hi + 1):
                        width = 2000 if k == ln.no else 160
                        print(f"{'>' if k == ln.no else ' '}{k:5d}| {raw[k - 1][:width]}")


if __name__ == "__main__":
    main()
