"""A store written by a newer Palimpsest is refused, never opened: this code could not read
what the newer schema holds, and writing to it could break it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from palimpsest.service import Service
from palimpsest.store import open_store
from palimpsest.store.migrations import migrations

from ..conftest import POSTGRES_URL, OwnSchema, needs_postgres, own_postgres_schema


def newest(backend: str) -> int:
    return max(number for number, _ in migrations(backend))


def refused_by_the_cli(db: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", db, "recall", "anything"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stderr


def test_a_sqlite_store_of_a_newer_release_is_refused_and_left_as_it_was(
    db_path: Path, env: dict[str, str]
) -> None:
    store = open_store(str(db_path))
    Service(store).remember(notebook="n", kind="fact", text="Written by a newer release")
    store.close()
    with sqlite3.connect(db_path) as raw:
        raw.execute(f"PRAGMA user_version = {newest('sqlite') + 1}")
    message = refused_by_the_cli(str(db_path), env)
    assert "newer Palimpsest" in message and "Upgrade" in message
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == newest("sqlite") + 1
        assert raw.execute("SELECT text FROM memory_versions").fetchall() == [
            ("Written by a newer release",)
        ]


@pytest.fixture
def newer_postgres_schema() -> Iterator[OwnSchema]:
    """A PostgreSQL schema of this test's own, marked as written by a newer release."""
    with own_postgres_schema("newer") as schema:
        with psycopg.connect(schema.url) as conn:
            conn.execute("CREATE TABLE palimpsest_schema (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO palimpsest_schema VALUES (%s)", (newest("postgres") + 1,))
        yield schema


@needs_postgres
def test_a_postgres_store_of_a_newer_release_is_refused_and_left_as_it_was(
    newer_postgres_schema: OwnSchema, env: dict[str, str]
) -> None:
    assert POSTGRES_URL
    message = refused_by_the_cli(newer_postgres_schema.url, env)
    assert "newer Palimpsest" in message and "Upgrade" in message
    with psycopg.connect(POSTGRES_URL) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (newer_postgres_schema.name,),
        ).fetchall()
    assert [t[0] for t in tables] == ["palimpsest_schema"]  # no migration ran there
