"""Shared by the benchmarks that time a real `palimpsest serve --http` process: start it
on a free port and wait until it accepts connections. Not a benchmark itself."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(
    db: Path | str, env: dict[str, str] | None = None, port: int | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`palimpsest serve --http` on `db` (a SQLite file or a PostgreSQL URL), on `port` (a
    free one if None): its (port, process), once it accepts connections."""
    port = port or free_port()
    command = [sys.executable, "-m", "palimpsest", "--db", str(db), "serve", "--http",
               "--port", str(port)]  # fmt: skip
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("the HTTP server did not start") from None
                time.sleep(0.05)
        yield port, process
    finally:
        process.terminate()
        process.wait(timeout=10)
