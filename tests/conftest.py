"""Shared fixtures: every service test runs on both stores.

SQLite: a real file in a temporary folder. PostgreSQL: the server whose URL is in
PALIMPSEST_TEST_POSTGRES (scripts/test starts one with ../shared/scripts/start-postgres and
sets it); each test gets a workspace of its own there, so tests never see each other's
memories. Without that variable the PostgreSQL runs are skipped, and say so.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.service import Service
from palimpsest.store import Store, open_store

POSTGRES_URL = os.environ.get("PALIMPSEST_TEST_POSTGRES")
needs_postgres = pytest.mark.skipif(
    not POSTGRES_URL, reason="set PALIMPSEST_TEST_POSTGRES (scripts/test does) to run on PostgreSQL"
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "palimpsest.db"


@pytest.fixture(scope="session")
def postgres_store() -> Iterator[Store]:
    assert POSTGRES_URL
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


@pytest.fixture
def anyio_backend() -> str:
    """The MCP tests run on asyncio, as the SDK's own server does."""
    return "asyncio"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """For subprocesses: no store selection inherited from the caller, a private home."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    base.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    return base
