"""A throwaway Redis server on 127.0.0.1 for the Celery tests (Debian's redis-server package).

One port, no persistence (no RDB, no AOF), no protected-mode surprises: it listens on loopback only. The
server runs in the foreground as this test's own child and is stopped by its pid.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from claims_pipeline_tests.time_scale import scaled

START_TIMEOUT_S = scaled(15)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def redis_server() -> Iterator[str]:
    """Yields the server's base URL, redis://127.0.0.1:<port> (add /<db> for a database)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found: install Debian's redis-server package "
                           "(`make test` does so when run as root)")
    import redis

    root = Path(tempfile.mkdtemp(prefix="claims_redis_"))
    port = _free_port()
    proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(root),
                             "--save", "", "--appendonly", "no", "--logfile", str(root / "redis.log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                redis.Redis.from_url(url, socket_connect_timeout=1).ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {port}: "
                                       + (root / "redis.log").read_text(errors="replace")[-2000:]) from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
