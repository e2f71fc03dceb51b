"""A command the guard kept is erased by forget like anything else: checked on the bytes of
the SQLite files, and of PostgreSQL's table files after the rewrite (`palimpsest scrub`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.service import Service
from palimpsest.store import Store, open_store

from ..agent_runs import ran
from ..conftest import needs_postgres, own_postgres_database
from ..memory.test_forget_scrub import files_holding, secret_word, table_files_holding


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """SQLite here: the test reads its files' bytes (PostgreSQL's test is below)."""
    opened = open_store(str(db_path))
    yield opened
    opened.close()


def test_forget_erases_a_kept_command_from_every_sqlite_file(
    service: Service, db_path: Path
) -> None:
    word = secret_word()
    for n in range(50):
        ran(service, f"make step{n}")
    ran(service, f"curl https://example.test/{word}")
    kept = [c for c in service.seen()["commands"] if word in c["command"]]
    assert kept and files_holding(db_path.parent, word.encode())
    answer = service.forget(id=kept[0]["id"], because="it names a private host")
    assert answer["results"] == [{"id": kept[0]["id"], "forgotten": True}]
    assert answer["scrub_pending"] is False
    assert files_holding(db_path.parent, word.encode()) == []
    assert len(service.seen()["commands"]) == 50


@needs_postgres
def test_forget_and_scrub_erase_a_kept_command_from_postgres_files() -> None:
    word = secret_word()
    with own_postgres_database("guard_forget") as url:
        store = open_store(url)
        try:
            service = Service(store)
            ran(service, f"curl https://example.test/{word}")
            seen_id = service.seen()["commands"][0]["id"]
            assert table_files_holding(url, "seen_commands", word)
            assert service.forget(id=seen_id, because="a private host")["scrub_pending"] is True
            assert "seen_commands" in service.scrub()["locked_seconds"]
            assert table_files_holding(url, "seen_commands", word) == []
        finally:
            store.close()
