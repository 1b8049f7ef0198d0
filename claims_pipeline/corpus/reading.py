"""Reading one corpus file defensively: binary files are skipped, bad UTF-8 is decoded with replacement."""

from __future__ import annotations

from pathlib import Path

from claims_pipeline.corpus.records import ExtractWarning


def read_markdown(path: Path, rel: str) -> tuple[str | None, list[ExtractWarning]]:
    """The file's text (None when it cannot be used) and the warnings explaining what was done.

    Non-UTF-8 bytes are replaced (U+FFFD) rather than the file dropped, so the valid lines still yield
    their claims; the warning names the first bad line.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [ExtractWarning(rel, 0, f"cannot read file: {exc.strerror or exc}")]
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return None, [ExtractWarning(rel, line, "binary content (NUL byte) in a .md file; file skipped")]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); decoded with replacement characters"
        return data.decode("utf-8-sig", "replace"), [ExtractWarning(rel, line, msg)]


def with_newlines(text: str) -> str:
    """The text with CommonMark's line endings (CRLF, a lone CR) written as '\n', the only break the
    extraction splits on. U+2028, U+0085, form feeds and the like stay inside their line, as they do for
    markdown, editors and `grep -n`: str.splitlines() broke lines there, so line numbers disagreed with the
    editor's and a figure could be parted from its link."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
