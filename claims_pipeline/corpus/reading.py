"""Reading one corpus file defensively: bounded in size, binary files are skipped, bad UTF-8 is decoded with
replacement, UTF-16 and UTF-32 with a byte-order mark are read as text."""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from claims_pipeline.corpus.records import ExtractWarning

DEFAULT_MAX_FILE_BYTES = 20_000_000  # extraction.max_file_bytes' default


# Binary detection looks at the first bytes: a NUL there and the file is skipped without reading the rest.
HEAD_BYTES = 8192


def read_markdown(path: Path, rel: str, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> tuple[str | None, list[ExtractWarning]]:
    """The file's text (None when it cannot be used) and the warnings explaining what was done.

    Reads at most max_bytes, from a regular file only: the walker already left out FIFOs, devices and big
    files, and the same tests run on the open file, so one swapped in since (a FIFO would block, /dev/zero
    never end) is refused too. Non-UTF-8 bytes are replaced (U+FFFD) rather than the file dropped, so the
    valid lines still yield their claims; the warning names the first bad line.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, [ExtractWarning(rel, 0, f"cannot read file: {exc.strerror or exc}")]
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None, [ExtractWarning(rel, 0, "not a regular file; skipped")]
            if st.st_size > max_bytes:
                return None, [ExtractWarning(rel, 0, f"file of {st.st_size:,} bytes, over extraction.max_file_bytes "
                                                     f"({max_bytes:,}); skipped unread")]
            data = fh.read(min(HEAD_BYTES, max_bytes + 1))
            if (b"\x00" not in data or _wide_bom(data)) and len(data) == HEAD_BYTES:
                data += fh.read(max_bytes + 1 - len(data))
    except OSError as exc:
        return None, [ExtractWarning(rel, 0, f"cannot read file: {exc.strerror or exc}")]
    if len(data) > max_bytes:  # grew since it was looked at
        return None, [ExtractWarning(rel, 0, f"file over extraction.max_file_bytes ({max_bytes:,}); skipped")]
    if (codec := _wide_bom(data)) is not None:  # UTF-16/32 text (Windows editors save it): its NULs are not binary
        text = data.decode(codec, "replace")
        if "\ufffd" in text:
            bad = text.index("\ufffd")
            return text, [ExtractWarning(rel, text.count("\n", 0, bad) + 1,
                                         f"not valid {codec.upper()}; decoded with replacement characters")]
        return text, []
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


def _wide_bom(data: bytes) -> str | None:
    """The codec a UTF-16 or UTF-32 byte-order mark names (the codec then drops the mark), or None. UTF-32's
    marks first: UTF-32-LE's begins with UTF-16-LE's."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def open_regular(path: Path) -> tuple[BinaryIO, os.stat_result]:
    """The file opened for reading, and its stat, when it is a regular file; else an OSError (EINVAL). Opened
    with O_NONBLOCK, so a FIFO swapped in since the walk is refused at once, never waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    fh = os.fdopen(fd, "rb")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
    except BaseException:
        fh.close()
        raise
    return fh, st


def read_regular(path: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most max_bytes, or an OSError whose strerror says why not: a corpus file
    read again after the walk (the verdict step's claim lines and corrections) may have become a FIFO (never
    blocks: O_NONBLOCK), a link to /dev/zero or a 2 GB file since, and is then refused, not read."""
    fh, st = open_regular(path)
    with fh:
        if st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"over extraction.max_file_bytes ({max_bytes:,})")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew since it was looked at
        raise OSError(errno.EFBIG, f"over extraction.max_file_bytes ({max_bytes:,})")
    return data


def with_newlines(text: str) -> str:
    """The text with CommonMark's line endings (CRLF, a lone CR) written as '\n', the only break the
    extraction splits on. U+2028, U+0085, form feeds and the like stay inside their line, as they do for
    markdown, editors and `grep -n`: str.splitlines() broke lines there, so line numbers disagreed with the
    editor's and a figure could be parted from its link."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
