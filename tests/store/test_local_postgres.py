"""The test run's own PostgreSQL: there with pgvector, its own, and gone when the run ends.

A clone's `./scripts/test` must run every PostgreSQL test with nothing installed beside
it, and must never stop or kill a server it did not start. These tests check the server
of this very run, then run pytest itself as a subprocess to see a whole session start and
stop one, use a developer's server instead, and sweep the leftover of a killed run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from .. import conftest
from ..local_postgres import LocalPostgres, installed_binaries, running, sweep_abandoned

REPO = Path(__file__).resolve().parents[2]
OWN_SERVER_TEST = "tests/store/test_local_postgres.py::test_the_run_has_a_postgres_of_its_own"
DATABASE_KILL_TEST = "tests/store/test_crash.py::test_postgres_survives_the_database_server_killed"

needs_the_wheel = pytest.mark.skipif(installed_binaries() is None, reason=conftest.POSTGRES_ABSENT)


def own_server() -> LocalPostgres:
    if conftest.LOCAL_POSTGRES is None:
        pytest.skip("PALIMPSEST_TEST_POSTGRES names a server of the developer's: no server of ours")
    conftest.ensure_postgres()  # started by the first test that needs it: maybe this one
    return conftest.LOCAL_POSTGRES


def pytest_run(*args: str, postgres: str | None = None) -> subprocess.CompletedProcess[str]:
    """pytest in a subprocess, in this checkout, with no server named unless `postgres`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    if postgres is not None:
        env["PALIMPSEST_TEST_POSTGRES"] = postgres
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def processes_mentioning(text: str) -> list[int]:
    """The pids whose command line names `text` (a server's directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and text.encode() in argv:
            found.append(int(entry.name))
    return found


@pytest.mark.postgres
def test_the_run_has_a_postgres_of_its_own() -> None:
    server = own_server()
    url = urlsplit(conftest.POSTGRES_URL or "")
    assert (url.hostname, url.port) == ("127.0.0.1", server.port)
    assert server.root.name.startswith(f"palimpsest-pg-{os.getpid()}-")  # this run's
    with psycopg.connect(server.url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        assert conn.execute("SHOW data_directory").fetchone() == (str(server.data),)
        vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert vector.fetchone() is not None
        assert conn.execute("SELECT '[1,2]'::vector <-> '[4,6]'::vector").fetchone() == (5.0,)
    postmaster = server.postmaster()
    assert postmaster is not None
    assert os.stat(f"/proc/{postmaster}").st_uid != 0  # PostgreSQL refuses root


@needs_the_wheel
def test_a_session_starts_its_server_and_leaves_nothing_behind() -> None:
    done = pytest_run(OWN_SERVER_TEST)
    assert done.returncode == 0, done.stdout[-3000:]
    last = done.stdout.strip().splitlines()[-2:]
    assert re.fullmatch(r"1 passed in [\d.]+s", last[-1]), last
    found = re.search(r"this run's own, .* in (\S+), now stopped and deleted$", last[0])
    assert found, last
    root = found.group(1)
    assert not Path(root).exists()
    assert processes_mentioning(root) == []


@needs_the_wheel
def test_a_session_that_needs_no_postgres_starts_none() -> None:
    """Starting one costs seconds: a run of SQLite tests alone should not pay them."""
    done = pytest_run("tests/test_layers.py")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "PostgreSQL" not in done.stdout, done.stdout[-3000:]


@needs_the_wheel
def test_a_developers_server_is_used_and_never_killed() -> None:
    server = own_server()  # the developer's server, for the run below
    before = server.postmaster()
    done = pytest_run(DATABASE_KILL_TEST, OWN_SERVER_TEST, postgres=server.url)
    assert done.returncode == 0, done.stdout[-3000:]
    last = done.stdout.strip().splitlines()
    assert re.fullmatch(r"2 skipped in [\d.]+s", last[-1]), last[-6:]
    skipped = "\n".join(last[-6:])
    assert "test_crash.py" in skipped and "a server this run did not start" in skipped
    assert "PostgreSQL: the server of PALIMPSEST_TEST_POSTGRES" in skipped
    assert server.postmaster() == before  # still the same process: never killed


@needs_the_wheel
def test_the_server_of_a_killed_run_is_stopped_and_deleted_by_the_next() -> None:
    binaries = installed_binaries()
    starter = (  # starts a server, says where, then waits to be killed
        "from tests.local_postgres import LocalPostgres, installed_binaries\n"
        "print(LocalPostgres.start_new(installed_binaries()).root, flush=True)\n"
        "input()\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", starter],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as owner:
        assert owner.stdout is not None
        root = Path(owner.stdout.readline().strip())
        owner.kill()  # no chance to stop its server
    left = LocalPostgres.at(root)
    postmaster = left.postmaster()
    assert binaries and postmaster is not None
    sweep_abandoned()
    assert not root.exists()
    assert not running(postmaster, left.data)


@needs_the_wheel
def test_a_session_ended_by_sigterm_in_a_test_still_stops_its_server() -> None:
    """As a CI time-out or `kill PID` ends a run: the server must not outlive it."""
    victim = "tests/store/test_crash.py::test_postgres_survives_serve_killed_mid_stream"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env["PYTHONUNBUFFERED"] = "1"
    with subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-vv", victim],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    ) as session:
        assert session.stdout is not None
        said = b""
        while victim.encode() not in said:  # -vv names the test as it starts
            more = os.read(session.stdout.fileno(), 4096)
            assert more, said.decode()[-3000:]
            said += more
        [root] = Path(tempfile.gettempdir()).glob(f"palimpsest-pg-{session.pid}-*")
        # The test's setup starts the server (the first test to need one does): wait for it.
        deadline = time.monotonic() + 120
        while LocalPostgres.at(root).postmaster() is None:
            assert time.monotonic() < deadline, "the victim's server never started"
            time.sleep(0.1)
        session.terminate()
        output = (said + session.stdout.read()).decode()
        session.wait(timeout=120)
    assert "KeyboardInterrupt" in output, output[-3000:]
    assert not root.exists(), output[-3000:]
    assert processes_mentioning(str(root)) == []


def test_a_stale_pid_file_never_gets_another_process_killed(tmp_path: Path) -> None:
    """A dead run's postmaster.pid may name a pid the system has given to another process."""
    root = tmp_path / "palimpsest-pg-1-stale"
    (root / "data").mkdir(parents=True)
    with subprocess.Popen(["sleep", "60"]) as bystander:
        (root / "data" / "postmaster.pid").write_text(f"{bystander.pid}\n{root / 'data'}\n")
        left = LocalPostgres.at(root)
        assert left.postmaster() is None
        left.remove()
        assert bystander.poll() is None  # still running
        bystander.kill()
    assert not root.exists()


@needs_the_wheel
def test_a_server_by_hand_prints_its_url_and_goes_at_sigterm() -> None:
    """`python -m tests.local_postgres`, for a benchmark: a working URL, then nothing left."""
    with subprocess.Popen(
        [sys.executable, "-m", "tests.local_postgres"],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    ) as by_hand:
        assert by_hand.stdout is not None
        url = by_hand.stdout.readline().strip()
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'")
            assert found.fetchone() == (1,)
        [root] = Path(tempfile.gettempdir()).glob(f"palimpsest-pg-{by_hand.pid}-*")
        by_hand.terminate()
        assert by_hand.wait(timeout=60) == 0
    assert not root.exists()
    assert processes_mentioning(str(root)) == []
