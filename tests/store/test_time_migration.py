"""Migration 003: times a previous release stored with a short year get four digits.

Before it, `999-06-01T...` sorted after `2026-...` as text, so an expiry in 900 never
passed and since/until mis-ordered. SQLite: a store made by the previous release
(tests/fixtures, see make_store_before_003.py). PostgreSQL: a schema of the test's own at
the previous schema version, holding rows written as that release wrote them. Both are
then opened by the CLI, which migrates them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from palimpsest.store.migrations import migrations, statements

from ..conftest import needs_postgres, own_postgres_schema
from ..mcp_helpers import versions_whole

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_before_003.db"
MIGRATION = 3

# (text, occurred_at, expires_at) as the previous release stored them.
PAST_ROWS = [
    ("The abbey was founded", "999-06-01T00:00:00.000000Z", None),
    ("The village was named", "99-06-01T00:00:00.000000Z", None),
    ("The charter was digitised", "2020-06-01T00:00:00.000000Z", None),
    ("A truce held", None, "900-01-01T00:00:00.000000Z"),
    ("The walls still stand", None, "2999-01-01T00:00:00.000000Z"),
]


def cli(db: str, env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", db, *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def recalled(db: str, env: dict[str, str], *filters: str) -> set[str]:
    return {hit["text"] for hit in cli(db, env, "recall", *filters)["hits"]}


def check_times_compare_in_order(db: str, env: dict[str, str]) -> None:
    assert recalled(db, env) == {
        "The abbey was founded", "The village was named", "The charter was digitised",
        "The walls still stand",
    }  # fmt: skip
    assert recalled(db, env, "--until", "1500-01-01") == {
        "The abbey was founded", "The village was named",
    }  # fmt: skip
    assert recalled(db, env, "--since", "0500-01-01", "--until", "1500-01-01") == {
        "The abbey was founded"
    }
    assert "The charter was digitised" in recalled(db, env, "--since", "1500-01-01")
    abbey = cli(db, env, "recall", "abbey")["hits"][0]["id"]
    shown = cli(db, env, "inspect", abbey)
    assert shown["memory"]["occurred_at"] == "0999-06-01T00:00:00.000000Z"
    for version in versions_whole(shown).values():
        if version:
            assert version["occurred_at"] == "0999-06-01T00:00:00.000000Z"


def test_a_sqlite_store_of_the_previous_release_is_migrated(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "before.db"
    shutil.copy(FIXTURE, db)
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] < MIGRATION
        stored = {r[0] for r in raw.execute("SELECT occurred_at FROM memory_versions")}
        assert "999-06-01T00:00:00.000000Z" in stored  # written as that release wrote it
    check_times_compare_in_order(str(db), env)
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] >= MIGRATION
        times = raw.execute("SELECT occurred_at, expires_at FROM memory_versions").fetchall()
    assert_stored_with_four_digit_years(times)


@pytest.fixture
def previous_postgres_url() -> Iterator[str]:
    """A PostgreSQL schema of this test's own, at the schema before 003, with past rows."""
    with own_postgres_schema("before003") as schema:
        with psycopg.connect(schema.url) as conn:
            conn.execute("CREATE TABLE palimpsest_schema (version INTEGER NOT NULL)")
            for number, script in migrations("postgres"):
                if number < MIGRATION:
                    for statement in statements(script):
                        conn.execute(statement.encode())
                    conn.execute("INSERT INTO palimpsest_schema VALUES (%s)", (number,))
            write_past_rows(conn)
        yield schema.url


def write_past_rows(conn: psycopg.Connection[Any]) -> None:
    at = "2026-11-30T10:00:00.000000Z"
    conn.execute("INSERT INTO workspaces VALUES ('default', %s)", (at,))
    conn.execute(
        "INSERT INTO notebooks(id, workspace, name, created_at) VALUES ('nb_1', 'default', "
        "'annals', %s)",
        (at,),
    )
    for n, (text, occurred_at, expires_at) in enumerate(PAST_ROWS):
        memory = f"m_past{n}"
        row = conn.execute(
            "INSERT INTO events(workspace, op_id, at, actor, op, target_type, target_id, "
            "notebook_id, version, fields) VALUES ('default', 'op_1', %s, 'user:local', "
            "'remember', 'memory', %s, 'nb_1', 1, '[\"created\"]') RETURNING seq",
            (at, memory),
        ).fetchone()
        assert row is not None
        conn.execute("INSERT INTO memories(id, workspace) VALUES (%s, 'default')", (memory,))
        conn.execute(
            "INSERT INTO memory_versions(memory_id, version, workspace, from_seq, notebook_id, "
            "kind, status, text, norm_text, tags, tags_text, occurred_at, recorded_at, "
            "expires_at, owner, author, anchors) VALUES (%s, 1, 'default', %s, 'nb_1', 'fact', "
            "'active', %s, %s, '[]', '', %s, %s, %s, 'user:local', 'user:local', '[]')",
            (memory, row[0], text, text.casefold(), occurred_at, at, expires_at),
        )


def assert_stored_with_four_digit_years(rows: Any) -> None:
    """Every stored time has a four-digit year, the year 999 one among them: none skipped."""
    stored = [t for row in rows for t in row if t is not None]
    assert "0999-06-01T00:00:00.000000Z" in stored
    assert all(len(t.split("-", 1)[0]) == 4 for t in stored)


@needs_postgres
def test_a_postgres_store_of_the_previous_release_is_migrated(
    previous_postgres_url: str, env: dict[str, str]
) -> None:
    url = previous_postgres_url
    check_times_compare_in_order(url, env)
    with psycopg.connect(url) as conn:
        version = conn.execute("SELECT max(version) FROM palimpsest_schema").fetchone()
        times = conn.execute("SELECT occurred_at, expires_at FROM memory_versions").fetchall()
    assert version is not None and version[0] >= MIGRATION
    assert_stored_with_four_digit_years(times)
