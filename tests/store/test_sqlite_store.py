"""What is particular to the SQLite store: migrations and the shape of full-text search."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from palimpsest.domain.errors import Retryable, ValidationError
from palimpsest.service import Service, base
from palimpsest.store import Store, bm25, open_store, sqlite, sqlite_search
from palimpsest.store.migrations import migrations, statements
from palimpsest.store.sqlite import SqliteStore
from palimpsest.store.sqlite_search import CANDIDATES

from .test_time_migration import FIXTURE


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """SQLite only: migrations, FTS5 search passes and per-thread connections are SQLite's own."""
    opened = open_store(str(db_path))
    yield opened
    opened.close()


def test_a_new_file_gets_every_migration(db_path: Path) -> None:
    store = SqliteStore(db_path)
    assert store.schema_version() == migrations("sqlite")[-1][0] >= 2
    store.close()


def test_an_older_file_is_upgraded_in_place_keeping_its_memories(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    number, first = migrations("sqlite")[0]
    for statement in statements(first):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {number}")
    conn.close()
    store = open_store(str(db_path))
    service = Service(store)
    mid = service.remember(notebook="p", kind="fact", text="upgraded stores still search")["id"]
    store.close()
    reopened = open_store(str(db_path))
    assert Service(reopened).recall(query="search")["hits"][0]["id"] == mid
    reopened.close()


def test_a_store_before_kept_term_counts_gets_them_for_every_version(db_path: Path) -> None:
    """Migration 012: full text's re-scoring reads each version's kept counts; a store
    written before them gets them for every version with content."""
    store = open_store(str(db_path))
    service = Service(store)
    mid = service.remember(notebook="p", kind="fact", text="Kestrels hover over the meadow")["id"]
    service.revise(id=mid, text="Kestrels hover over the wet meadow", because="a new version")
    store.close()
    with sqlite3.connect(db_path, isolation_level=None) as raw:  # as 011 left it
        raw.execute("ALTER TABLE memory_versions DROP COLUMN search_counts")
        raw.execute("ALTER TABLE memory_versions DROP COLUMN search_length")
        raw.execute("DROP TABLE served")  # and without what later migrations made
        raw.execute("ALTER TABLE memory_versions DROP COLUMN screened")
        raw.execute("DROP TABLE web_sessions")
        raw.execute("DROP TABLE replica_state")
        raw.execute("DROP TABLE replica_seqs")
        raw.execute("DROP TABLE replica_queue")
        raw.execute("PRAGMA user_version = 11")
    raw.close()
    store = open_store(str(db_path))
    store.close()
    with sqlite3.connect(db_path) as raw:
        rows = raw.execute(
            "SELECT text, title, why, tags_text, notebook_id, search_counts, search_length "
            "FROM memory_versions"
        ).fetchall()
    raw.close()
    assert len(rows) == 2
    names = ("text", "title", "why", "tags_text", "notebook_id")
    for *content, counts, length in rows:
        columns = dict(zip(names, content, strict=True))
        assert bm25.stored_counts(columns) == {"search_counts": counts, "search_length": length}


def test_memories_with_every_word_rank_before_those_with_some(service: Service) -> None:
    for n in range(5):
        service.remember(notebook="p", kind="fact", text=f"deploy deploy deploy note {n}")
    both = service.remember(notebook="p", kind="fact", text="how to deploy the gateway")["id"]
    hits = service.recall(query="deploy gateway", limit=6, near_misses=True)["hits"]
    assert hits[0]["id"] == both
    assert len(hits) == 6  # every match, the weak ones the floor leaves out too


def test_filters_find_matches_beyond_the_best_candidates(service: Service) -> None:
    """A notebook filter must not lose matches ranked below the first candidate batch."""
    for n in range(CANDIDATES + 20):
        service.remember(notebook="busy", kind="fact", text=f"shared shared word {n}")
    wanted = {
        service.remember(notebook="quiet", kind="fact", text=f"shared word, quietly {n} {n}")["id"]
        for n in range(3)
    }
    hits = service.recall(query="shared", notebook="quiet")["hits"]
    assert {h["id"] for h in hits} == wanted


def test_a_query_of_only_stopwords_still_searches(service: Service) -> None:
    mid = service.remember(notebook="p", kind="note", text="to be or not to be")["id"]
    assert [h["id"] for h in service.recall(query="to be")["hits"]] == [mid]


def test_words_in_very_many_memories_still_reach_older_filtered_ones(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranking starts with the newest matches; a filter that needs older ones widens it."""
    monkeypatch.setattr(sqlite_search, "WINDOW", 30)
    monkeypatch.setattr(sqlite_search, "CANDIDATES", 10)
    old = service.remember(notebook="quiet", kind="fact", text="common ground, long ago")["id"]
    for n in range(60):
        service.remember(notebook="busy", kind="fact", text=f"common words {n}")
    newest = [h["id"] for h in service.recall(query="common", limit=5)["hits"]]
    assert len(newest) == 5
    assert [h["id"] for h in service.recall(query="common", notebook="quiet")["hits"]] == [old]
    tagged = service.remember(notebook="busy", kind="fact", text="common tagged", tags=["a-b"])
    assert [h["id"] for h in service.recall(query="common", tags=["a-b"])["hits"]] == [tagged["id"]]


def test_connections_of_finished_threads_are_closed(service: Service) -> None:
    for _ in range(20):
        worker = threading.Thread(target=lambda: service.recall(query="anything"))
        worker.start()
        worker.join()
    store = service.store
    assert isinstance(store, SqliteStore)
    assert len(store._connections) <= 2


def test_a_busy_database_is_retried_then_answered_retryable(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holding the write lock: a short wait is retried, a long one refused."""
    monkeypatch.setattr(sqlite, "BUSY_TIMEOUT_MS", 50)
    store = SqliteStore(db_path)
    service = Service(store)
    blocker = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(Retryable):
            service.remember(notebook="p", kind="fact", text="blocked throughout")
        # The lock is released when the first attempt has been refused and the service backs
        # off (its sleep), not after a fixed time that a slow machine could outrun.
        back_offs: list[float] = []

        def release_then_back_off(seconds: float) -> None:
            if not back_offs:
                blocker.execute("COMMIT")
            back_offs.append(seconds)

        # Only the service's clock module is replaced, not time.sleep for every thread.
        monkeypatch.setattr(base, "time", SimpleNamespace(sleep=release_then_back_off))
        filed = service.remember(notebook="p", kind="fact", text="written on a retry")
        assert len(back_offs) == 1  # refused once while locked, written on the retry
        assert [h["id"] for h in service.recall(query="blocked retry")["hits"]] == [filed["id"]]
    finally:
        blocker.close()
        store.close()


def tables(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return sorted(row[0] for row in conn.execute("SELECT name FROM sqlite_master"))
    finally:
        conn.close()


def test_another_programs_database_is_refused_and_left_as_it_was(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(ValidationError, match="another program"):
        open_store(str(db_path))
    assert tables(db_path) == ["accounts"]


def test_an_open_store_is_read_while_another_process_writes(db_path: Path) -> None:
    """Opening a store that needs no migration takes no write lock: a recall goes on."""
    first = Service(open_store(str(db_path)))
    first.remember(notebook="n", kind="fact", text="Backups run nightly")
    first.close()
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        reader = Service(open_store(str(db_path)))
        assert len(reader.recall(query="backups")["hits"]) == 1
        reader.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_store_locked_while_it_needs_migrating_is_retryable(db_path: Path) -> None:
    shutil.copy(FIXTURE, db_path)
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(Retryable):
            open_store(str(db_path))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    store = open_store(str(db_path))  # once free, it opens and migrates
    assert store.schema_version() == migrations("sqlite")[-1][0]
    store.close()
