"""PDF → text under page, output, memory and time caps; never raises, never hangs.

First choice: ``pdftotext -layout`` (poppler-utils) in a subprocess. Fallback when it is missing or fails:
pypdf, also in a subprocess (this module run with ``-m``), so a decompression or page bomb is stopped by the
same caps: ``-l``/page loop for pages, a streamed read of stdout for text, ``prlimit`` (util-linux, when present)
for address space and CPU, and a wall-clock timeout that kills the child.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claims_pipeline.web.pdf_columns import read_columns
from claims_pipeline.web.records import FetchStatus

if TYPE_CHECKING:  # the pypdf worker child imports this module: keep its start-up light
    from claims_pipeline.config.settings import PdfSettings

PDF_MAGIC = b"%PDF-"
MAGIC_WINDOW = 1024  # where a body of any type is sniffed as a PDF
# Where a body already taken for a PDF may start its header: scripts print warnings before the file
# (PHP's "headers already sent"), and pdftotext reads past them.
PDF_SEARCH_WINDOW = 65536
MEMORY_CAP_BYTES = 1 << 30  # address space for an extractor child; poppler on real PDFs stays far below
_STDERR_KEEP = 4000
NO_TEXT_NOTE = "PDF has no extractable text layer (scanned image?)"
ENCRYPTED_NOTE = "encrypted PDF (needs a password)"

# Exit codes of the pypdf worker (below), read by the parent.
_EXIT_ENCRYPTED = 3
_EXIT_CORRUPT = 4


@dataclass(slots=True)
class PdfOutcome:
    """What pdf_to_text found; text.py wraps it into a TextOutcome."""

    status: FetchStatus
    text: str | None
    content_kind: str
    note: str


@dataclass(slots=True)
class _Run:
    stdout: bytes
    stderr: str
    returncode: int | None  # None: killed by us (timeout)
    timed_out: bool
    output_capped: bool


def has_pdf_magic(raw: bytes, window: int = MAGIC_WINDOW) -> bool:
    return PDF_MAGIC in raw[:window]


def _limited(cmd: list[str], timeout_s: float) -> list[str]:
    prlimit = shutil.which("prlimit")
    if not prlimit:
        return cmd
    cpu = max(1, int(timeout_s) + 1)
    return [prlimit, f"--as={MEMORY_CAP_BYTES}", f"--cpu={cpu}", "--", *cmd]


def _run_capped(cmd: list[str], timeout_s: float, max_out_bytes: int) -> _Run:
    """Run cmd, read at most max_out_bytes of stdout, kill it at the byte cap or at the deadline."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        chunks: list[bytes] = []
        capped = threading.Event()

        def read() -> None:  # a thread, so the deadline below holds even while the child is silent
            total = 0
            assert proc.stdout is not None
            while chunk := proc.stdout.read(65536):
                chunks.append(chunk)
                total += len(chunk)
                if total >= max_out_bytes:
                    capped.set()
                    proc.kill()
                    break

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        err.seek(0)
        stderr = err.read(_STDERR_KEEP).decode("utf-8", "replace")
    return _Run(b"".join(chunks)[:max_out_bytes], stderr, None if timed_out else proc.returncode, timed_out,
                capped.is_set())


def _first_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()] or lines
    return errors[0][:200] if errors else "no detail"


def _page_count(path: Path, timeout_s: float) -> int | None:
    if not shutil.which("pdfinfo"):
        return None
    run = _run_capped(_limited(["pdfinfo", str(path)], timeout_s), min(timeout_s, 10.0), 64_000)
    for line in run.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("Pages:"):
            try:
                return int(line.split(":", 1)[1])
            except ValueError:
                return None
    return None


def _finish(raw_text: bytes, kind: str, settings: PdfSettings, notes: list[str], *, layout: bool = False) -> PdfOutcome:
    """`layout`: the text is pdftotext -layout's, whose two-column pages are read column by column first."""
    from claims_pipeline.web.html_text import normalise_text

    text = raw_text.decode("utf-8", "replace")
    text = normalise_text(read_columns(text) if layout else text)
    cap_note = f"text capped at {settings.max_text_chars} chars"
    if len(text) > settings.max_text_chars:
        text = text[: settings.max_text_chars]
        if cap_note not in notes:
            notes.append(cap_note)
    if not text.strip():
        return PdfOutcome(FetchStatus.PDF_NO_TEXT, None, kind, NO_TEXT_NOTE)
    return PdfOutcome(FetchStatus.OK, text, kind, "; ".join(notes))


def _with_pdftotext(path: Path, settings: PdfSettings, max_out: int) -> PdfOutcome | str:
    """An outcome, or the reason pdftotext failed (then the caller falls back to pypdf)."""
    exe = shutil.which("pdftotext")
    if not exe:
        return "pdftotext not installed"
    cmd = [exe, "-layout", "-enc", "UTF-8"]
    if settings.max_pages > 0:
        cmd += ["-l", str(settings.max_pages)]
    run = _run_capped(_limited([*cmd, str(path), "-"], settings.timeout_s), settings.timeout_s, max_out)
    if run.timed_out:
        return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pdftotext",
                          f"PDF extraction timed out after {settings.timeout_s:g}s (page or decompression bomb?)")
    notes: list[str] = []
    if run.output_capped:
        notes.append(f"text capped at {settings.max_text_chars} chars")
    elif run.returncode != 0:
        if "password" in run.stderr.lower():
            return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pdftotext", ENCRYPTED_NOTE)
        if run.returncode is not None and run.returncode < 0:  # killed by prlimit (memory / CPU)
            return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pdftotext",
                              f"PDF extraction stopped by resource limits (signal {-run.returncode}; bomb?)")
        return f"pdftotext exit {run.returncode}: {_first_error(run.stderr)}"
    pages_read = run.stdout.count(b"\f")
    if settings.max_pages > 0 and pages_read >= settings.max_pages:
        total = _page_count(path, settings.timeout_s)
        if total is None or total > settings.max_pages:
            notes.append(f"read the first {settings.max_pages} of {total or 'more'} pages (page cap)")
    if "error" in run.stderr.lower() and not notes:
        notes.append(f"damaged PDF, partly read: {_first_error(run.stderr)}")
    return _finish(run.stdout, "pdf:pdftotext", settings, notes, layout=True)


def _with_pypdf(path: Path, settings: PdfSettings, max_out: int) -> PdfOutcome:
    cmd = [sys.executable, "-m", "claims_pipeline.web.pdf_text", str(path), str(settings.max_pages), str(max_out)]
    run = _run_capped(_limited(cmd, settings.timeout_s), settings.timeout_s, max_out)
    if run.timed_out:
        return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pypdf",
                          f"PDF extraction timed out after {settings.timeout_s:g}s (page or decompression bomb?)")
    if run.returncode == _EXIT_ENCRYPTED:
        return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pypdf", ENCRYPTED_NOTE)
    notes: list[str] = []
    if run.output_capped:
        notes.append(f"text capped at {settings.max_text_chars} chars")
    elif run.returncode != 0:
        detail = _first_error(run.stderr)
        if run.returncode is not None and run.returncode < 0:
            detail = f"stopped by resource limits (signal {-run.returncode})"
        return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pypdf", f"corrupt PDF: {detail}")
    return _finish(run.stdout, "pdf:pypdf", settings, notes)


def pdf_outcome(raw: bytes, settings: PdfSettings) -> PdfOutcome:
    """Extract a PDF's text: pdftotext first, pypdf when pdftotext is missing or fails."""
    if not settings.enabled:
        return PdfOutcome(FetchStatus.BINARY, None, "binary", "pdf extraction disabled")
    if not has_pdf_magic(raw, PDF_SEARCH_WINDOW):
        return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pdftotext",
                          f"corrupt PDF: no {PDF_MAGIC.decode()} header in the first {PDF_SEARCH_WINDOW} bytes")
    max_out = settings.max_text_chars * 4 + 4096  # UTF-8 worst case, plus slack for layout spaces
    fd, name = tempfile.mkstemp(suffix=".pdf", prefix="claims-pdf-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        first = _with_pdftotext(path, settings, max_out)
        if isinstance(first, PdfOutcome):
            return first
        second = _with_pypdf(path, settings, max_out)
        if second.status is FetchStatus.PDF_ERROR and second.note.startswith("corrupt PDF"):
            second.note = f"corrupt PDF: {first}; pypdf: {second.note.removeprefix('corrupt PDF: ')}"
        return second
    except OSError as exc:  # temp dir full, exec failure
        return PdfOutcome(FetchStatus.PDF_ERROR, None, "pdf:pdftotext", f"PDF extraction failed: {exc}")
    finally:
        path.unlink(missing_ok=True)


def _pypdf_worker(path: str, max_pages: int, max_out: int) -> int:
    """Child-process entry: print page texts (form-feed separated) to stdout; exit code says what failed."""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    out = sys.stdout.buffer
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            return _EXIT_ENCRYPTED
        pages = reader.pages
        n = len(pages) if max_pages <= 0 else min(max_pages, len(pages))
        written = 0
        for i in range(n):
            chunk = ((pages[i].extract_text() or "") + "\f").encode("utf-8", "replace")
            out.write(chunk)
            written += len(chunk)
            if written >= max_out:
                break
        out.flush()
        return 0
    except FileNotDecryptedError:
        return _EXIT_ENCRYPTED
    except (PdfReadError, Exception) as exc:  # anything pypdf raises on a damaged file
        if "decrypt" in str(exc).lower() or "password" in str(exc).lower():
            return _EXIT_ENCRYPTED
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return _EXIT_CORRUPT


if __name__ == "__main__":
    sys.exit(_pypdf_worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
