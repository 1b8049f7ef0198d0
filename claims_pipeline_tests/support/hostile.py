"""Running the real `claims-pipeline` command against hostile input and measuring what it cost: exit code, wall
time and the peak memory of the process itself (os.wait4's rusage, not a guess)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from claims_pipeline_tests.time_scale import scaled

# Raw characters no terminal may receive from a file name or a line: ESC (CSI/OSC sequences), BEL, C1 CSI and
# the bidi controls, marks included.
RAW_UNSAFE = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200f", "\u061c"]
HOSTILE_NAME = "evil\x1b[31mRED\x1b]0;title\x07\u200f\u061c"
GOOD = "## Tax\n- VAT **18 %** ([t](https://tax.gov.xx/v))\n- median **€185,000** ([stats.gov.xa](https://stats.gov.xa/))\n"


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float

    @property
    def err_lines(self) -> list[str]:
        """stderr's lines after the one saying which configuration the command loaded (every command's first)."""
        lines = self.stderr.splitlines()
        return lines[1:] if lines and lines[0].startswith(("claims-pipeline: config ", "claims-pipeline: built-in")) else lines


# The CLI run as `python -m claims_pipeline.cli`, writing its own peak RSS (VmHWM) at exit. Why not the
# rusage of wait4: Linux carries the RSS high-water mark of the process that forked into the child's
# ru_maxrss across exec, so after a long test session (pytest at 400+ MB) every child "peaked" that high.
_PEAK_WRAPPER = """
import atexit, os, runpy
def _peak():
    with open('/proc/self/status') as f:
        kb = next((line.split()[1] for line in f if line.startswith('VmHWM:')), '0')
    with open(os.environ['CLAIMS_PIPELINE_TEST_PEAK_FILE'], 'w') as f:
        f.write(kb)
atexit.register(_peak)
runpy.run_module('claims_pipeline.cli', run_name='__main__', alter_sys=True)
"""


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120.0) -> Ran:
    """`python -m claims_pipeline.cli ARGS` with its peak RSS; killed, and the test failed, after `timeout` s on a
    machine of its own (scaled: time_scale.py)."""
    timeout = scaled(timeout)
    start = time.monotonic()
    peak_file = Path(tempfile.mkdtemp()) / "peak_kb"
    env = {**(os.environ if env is None else env), "CLAIMS_PIPELINE_TEST_PEAK_FILE": str(peak_file)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-c", _PEAK_WRAPPER, *args], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                raise AssertionError(f"claims-pipeline {' '.join(args)} still running after {timeout} s")
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        peak_kb = int(peak_file.read_text()) if peak_file.is_file() else usage.ru_maxrss  # both in KB
        return Ran(proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                   seconds, peak_kb / 1024)


def assert_no_raw_controls(text: str) -> None:
    raw = [repr(c) for c in RAW_UNSAFE if c in text]
    assert not raw, f"raw {', '.join(raw)} reached the output: {text[-1500:]!r}"


def bound_by_file_modes() -> list[str]:
    """A command prefix under which file modes bind the command as they would any user: as root, the owner of this
    checkout (who can read it, its venv and its interpreter wherever the clone is, a 0700 folder included) without
    the two capabilities that let root read past a file's mode. Empty when the tests do not run as root."""
    if os.geteuid() != 0:
        return []
    owner = Path(__file__).resolve().parent.stat()
    if owner.st_uid != 0:  # a user's checkout, tested by root: that user (switching drops every capability)
        return ["setpriv", f"--reuid={owner.st_uid}", f"--regid={owner.st_gid}", "--clear-groups"]
    bypass = "-dac_override,-dac_read_search"
    return ["setpriv", "--inh-caps=-all", f"--bounding-set={bypass}"]


def cli_env(tmp_path: Path) -> dict[str, str]:
    """Homes of this test only (audit and worklist open a Dagster instance)."""
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "CLAIMS_PIPELINE_HOME": str(tmp_path / "home")}
    env.pop("CLAIMS_PIPELINE_CONFIG", None)
    return env
