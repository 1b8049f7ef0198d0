"""report/write.py: a report that cannot be written says which folder (issue 35: a full disk's error named none)."""

from __future__ import annotations

from pathlib import Path

_FULL = """
import resource, sys
from pathlib import Path
from claims_pipeline.report.write import write_reports
from claims_pipeline_tests.report.test_sections import scenario
audit = scenario()[0]
resource.setrlimit(resource.RLIMIT_FSIZE, (512, resource.RLIM_INFINITY))
try:
    write_reports(audit, Path(sys.argv[1]))
except OSError as exc:
    print(exc.errno, exc.filename)
"""


def test_a_report_that_cannot_be_written_for_want_of_room_names_its_folder(tmp_path: Path):
    """A write() refused (a full disk; here a file size limit, which any user can set) named no file."""
    import errno
    import os
    import subprocess
    import sys

    out = tmp_path / "reports" / "20260701T000000"
    done = subprocess.run([sys.executable, "-c", _FULL, str(out)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.stdout.split() == [str(errno.EFBIG), str(out)], done.stderr[-2000:]
