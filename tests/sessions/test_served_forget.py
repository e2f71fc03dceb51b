"""A session's record is erased by forget like anything else: checked on the bytes of the
SQLite files, and of PostgreSQL's table files after the rewrite (`palimpsest scrub`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.service import Service
from palimpsest.store import Store, open_store

from ..conftest import needs_postgres, own_postgres_database
from ..memory.test_forget_scrub import files_holding, secret_word, table_files_holding


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """SQLite here: the test reads its files' bytes (PostgreSQL's test is below)."""
    opened = open_store(str(db_path))
    yield opened
    opened.close()


def test_forget_erases_a_session_s_record_from_every_sqlite_file(
    service: Service, db_path: Path
) -> None:
    word = secret_word()
    service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    for n in range(30):
        service.in_session(f"other-{n}").recall(query=f"deploy step {n}")
    asked = service.in_session("private")
    asked.recall(query=f"deploy for {word}")
    asked.recall(query="deploy", tags=[word])
    assert files_holding(db_path.parent, word.encode())
    answer = service.forget_served(session="private", because="it named a customer")
    assert answer == {"session": "private", "forgotten": True, "servings": 2,
                      "scrub_pending": False}  # fmt: skip
    assert files_holding(db_path.parent, word.encode()) == []
    assert len(service.served(limit=100)["sessions"]) == 30


@needs_postgres
def test_forget_and_scrub_erase_a_session_s_record_from_postgres_files() -> None:
    word = secret_word()
    with own_postgres_database("served_forget") as url:
        store = open_store(url)
        try:
            service = Service(store)
            service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
            service.in_session("private").recall(query=f"deploy for {word}")
            service.served_log.flush()
            assert table_files_holding(url, "served", word)
            answer = service.forget_served(session="private", because="it named a customer")
            assert answer["scrub_pending"] is True
            assert "served" in service.scrub()["locked_seconds"]
            assert table_files_holding(url, "served", word) == []
        finally:
            store.close()
