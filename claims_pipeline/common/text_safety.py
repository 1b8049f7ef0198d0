"""Characters from a page or the corpus that nobody may receive raw: control characters, which a terminal obeys
(ESC sequences retitle the window, clear the screen, fake a status line), and bidi embeddings, overrides and
isolates, which make a line read backwards. The stored page text keeps them (its hash must not move); whatever
shows text to a person runs it through one of these."""

from __future__ import annotations

import re

_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"  # C0 but tab and line breaks, DEL, C1
# Every bidi control alike: embeddings, overrides and isolates, and the marks (ALM, LRM, RLM), which also
# reorder what follows them (an RLM before "2024-01" shows the figures in another order).
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNSAFE_RE = re.compile(f"[{_CONTROLS}{_BIDI_CONTROLS}]")
# a terminal line: carriage returns too (they overwrite what was printed)
TERMINAL_UNSAFE_RE = re.compile(f"[\r{_CONTROLS}{_BIDI_CONTROLS}]")


def replaced(text: str) -> str:
    """Every unsafe character shown as U+FFFD (reports). Most text has none: a search is a fraction of a sub's
    cost on such text, and a report neutralises every cell it shows (benchmarks/README.md)."""
    return UNSAFE_RE.sub("\ufffd", text) if UNSAFE_RE.search(text) else text


def json_escaped(doc: str) -> str:
    """Serialised JSON with every unsafe character as a \\uXXXX escape: the same data, nothing a terminal obeys."""
    return UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", doc)


def terminal_escaped(text: str) -> str:
    """Text to print on a terminal: unsafe characters written out as \\xNN (\\x1b for ESC) or \\uNNNN."""
    return TERMINAL_UNSAFE_RE.sub(_written_out, text)


# a file name in a one-line message: line breaks and tabs too (a name holding "\n" would print a forged line of
# its own: "warning: x.md: ...\nall clean"), and the Unicode line and paragraph separators
NAME_UNSAFE_RE = re.compile(f"[\t\n\r\u2028\u2029{_CONTROLS}{_BIDI_CONTROLS}]")


def name_escaped(text: str) -> str:
    """A one-line message that may quote file names: terminal_escaped, and line breaks written out (\x0a)."""
    return NAME_UNSAFE_RE.sub(_written_out, text)


def _written_out(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
