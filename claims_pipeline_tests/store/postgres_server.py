"""A throwaway PostgreSQL server on 127.0.0.1 for the cache tests (Debian's postgresql package).

initdb + pg_ctl into a temporary folder, trust auth, one port, fsync off (a test server); every test gets a
fresh database. As root the server runs as the `postgres` user (initdb refuses root).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from claims_pipeline_tests.time_scale import scaled

START_TIMEOUT_S = scaled(30)


def postgres_bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextmanager
def postgres_server() -> Iterator[Callable[[], str]]:
    """Yields new_database(): a SQLAlchemy URL of a fresh, empty database on the running server."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries not found: install Debian's postgresql package "
                           "(`make test` does so when run as root)")
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="claims_pg_"))
    data = root / "data"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(data, "postgres")
    port = _free_port()
    subprocess.run(_as_server_user([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                    "--no-sync"]), check=True, capture_output=True, timeout=scaled(120))
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {data} -c fsync=off -c full_page_writes=off"
    subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(data / "log"),
                                    "-w", "-t", str(round(START_TIMEOUT_S)), "start"]), check=True, capture_output=True,
                   timeout=START_TIMEOUT_S + 10)
    admin = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    numbers = itertools.count(1)

    def new_database() -> str:
        name = f"cache_{next(numbers)}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql+psycopg://postgres@127.0.0.1:{port}/{name}"

    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # pg_ctl -w waited already; this only guards against a slow first connection
            try:
                psycopg.connect(admin, connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield new_database
    finally:
        subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=scaled(60))
        shutil.rmtree(root, ignore_errors=True)
