"""PostgreSQL keeps BM25's document frequencies (`search_terms`) as its writers go.

Each term's count is what a search would count among the versions with content, through
every kind of write, two writers at once, and a migration of a store that had none; a
word that only forgotten memories held leaves the table, as it leaves SQLite's FTS5
vocabulary (tests/memory/test_forget_scrub.py), since the word may be the secret itself.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from palimpsest.service import Service
from palimpsest.store import Store, open_store, pg_search, sqlite_search

from ..conftest import POSTGRES_URL, needs_postgres, own_postgres_schema

pytestmark = needs_postgres

KEPT = "SELECT term, versions FROM search_terms WHERE workspace = %s"
# What the writers' counts must equal: the versions with content holding each term.
COUNTED = (
    "SELECT t.term, count(*) FROM memory_versions v, jsonb_object_keys(v.search_counts) t(term) "
    "WHERE v.workspace = %s AND v.scrubbed = 0 GROUP BY t.term"
)


def term_counts(url: str, workspace: str) -> tuple[dict[str, int], dict[str, int]]:
    """(the counts the writers kept, the counts the rows hold) of `workspace`."""
    with psycopg.connect(url) as conn:
        kept = dict(conn.execute(KEPT, (workspace,)).fetchall())
        counted = dict(conn.execute(COUNTED, (workspace,)).fetchall())
    return kept, counted


def secret_word() -> str:
    # Lowercase letters and digits ending in a digit: its own term, unstemmed.
    return f"zqxj{uuid.uuid4().hex[:10]}7"


def test_term_counts_follow_every_write(postgres_store: Store) -> None:
    workspace = f"terms-{uuid.uuid4().hex[:12]}"
    service = Service(postgres_store, workspace=workspace)
    kept = service.remember(notebook="n", kind="fact", text="The pool holds twenty")["id"]
    gone = service.remember(notebook="n", kind="fact", text="The cache is cold", title="cache")
    service.revise(id=kept, text="The pool holds thirty connections", tags=["pool-size"])
    service.revise(id=kept, append=" at most")
    service.forget(id=kept, version=2, because="a test of the counts")
    service.forget(id=gone["id"], because="a test of the counts")
    written, counted = term_counts(postgres_store.url, workspace)
    assert written == counted
    # Versions 1 and 3 of the kept memory hold "pool"; "connect" only version 3.
    assert counted["pool"] == 2 and counted["connect"] == 1
    assert "cold" not in written and "cach" not in written


def test_a_word_only_forgotten_memories_held_leaves_the_counts(postgres_store: Store) -> None:
    workspace = f"terms-{uuid.uuid4().hex[:12]}"
    service = Service(postgres_store, workspace=workspace)
    word = secret_word()
    first = service.remember(notebook="n", kind="note", text=f"Ana's code is {word}")["id"]
    second = service.remember(notebook="n", kind="note", text=f"Ana again: {word} code")["id"]
    written, _ = term_counts(postgres_store.url, workspace)
    assert written[word] == 2 and written["code"] == 2
    service.forget(id=first, because="personal data")
    assert term_counts(postgres_store.url, workspace)[0][word] == 1
    service.forget(id=second, because="personal data")
    written, counted = term_counts(postgres_store.url, workspace)
    assert word not in written and "code" not in written and written == counted == {}
    with psycopg.connect(postgres_store.url) as conn:
        named = conn.execute("SELECT count(*) FROM search_terms WHERE term = %s", (word,))
        assert named.fetchone() == (0,)


def test_two_writers_at_once_lose_no_count(postgres_store: Store) -> None:
    """Two threads in one workspace and one in another, all on the same words."""
    mine = f"terms-{uuid.uuid4().hex[:12]}"
    other = f"terms-{uuid.uuid4().hex[:12]}"
    failures: list[BaseException] = []

    def write(workspace: str, writer: int) -> None:
        service = Service(postgres_store, workspace=workspace)
        try:
            for n in range(15):
                text = f"shared words pool cache writer{writer} n{n}"
                made = service.remember(notebook="n", kind="fact", text=text)
                if n % 3 == 0:
                    service.revise(id=made["id"], append=" revised pool")
                if n % 5 == 0:
                    service.forget(id=made["id"], because="a test of the counts")
        except BaseException as exc:  # the assertion below names it
            failures.append(exc)

    threads = [
        threading.Thread(target=write, args=(w, n)) for n, w in enumerate((mine, mine, other))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    for workspace, writers in ((mine, 2), (other, 1)):
        written, counted = term_counts(postgres_store.url, workspace)
        assert written == counted
        # 15 memories a writer, 3 forgotten; 4 of the 12 kept were revised (two versions).
        assert written["share"] == writers * (12 + 4)


@pytest.fixture
def store_before_010() -> Iterator[str]:
    """A store at schema 009 with memories in two workspaces: what 010 finds."""
    with own_postgres_schema("before010") as schema:
        store = open_store(schema.url)
        try:
            for workspace in ("default", "second"):
                service = Service(store, workspace=workspace)
                made = service.remember(notebook="n", kind="fact", text="The pool holds twenty")
                service.revise(id=made["id"], text="The pool holds thirty connections")
                service.remember(notebook="n", kind="fact", text=f"{workspace} cache is cold")
        finally:
            store.close()
        with psycopg.connect(schema.url) as conn:  # as the release before 010 left it
            conn.execute("DROP TABLE search_terms")
            # and without what later migrations made (011 and after run again on opening)
            later = (
                "seen_commands, agent_sessions, web_sessions, users, access_keys, "
                "failed_auth, served, replica_state, replica_seqs, replica_queue"
            )
            conn.execute(f"DROP TABLE {later}")
            conn.execute("DROP INDEX events_feedback, workspaces_name, versions_current_tags")
            conn.execute("ALTER TABLE events DROP COLUMN key_id")
            conn.execute("ALTER TABLE workspaces DROP COLUMN name")
            conn.execute("ALTER TABLE memory_versions DROP COLUMN screened")
            conn.execute("DELETE FROM palimpsest_schema WHERE version >= 10")
        yield schema.url


def test_migration_010_counts_the_terms_a_store_already_holds(store_before_010: str) -> None:
    store = open_store(store_before_010)
    try:
        assert store.schema_version() >= 10
        for workspace in ("default", "second"):
            written, counted = term_counts(store_before_010, workspace)
            assert written == counted and written["pool"] == 2 and written[workspace] == 1
        # and a search reads them (a term with no row would fail its idf or be 0)
        hits = Service(store).recall(query="thirty pool")["hits"]
        assert [hit["text"] for hit in hits] == ["The pool holds thirty connections"]
    finally:
        store.close()


def test_search_ranks_by_the_kept_counts_as_by_counting(postgres_store: Store) -> None:
    """A rare word outranks a common one: the counts reach the ranking."""
    assert POSTGRES_URL
    service = Service(postgres_store, workspace=f"terms-{uuid.uuid4().hex[:12]}")
    for n in range(6):
        service.remember(notebook="n", kind="fact", text=f"cache note {n}")
    service.remember(notebook="n", kind="fact", text="cache eviction")
    service.remember(notebook="n", kind="fact", text="eviction storm")
    hits = [hit["text"] for hit in service.recall(query="cache eviction")["hits"]]
    assert hits[:2] == ["cache eviction", "eviction storm"]


# Words in more memories than the window: both stores rank the newest matches only, unless
# fewer than the limit of those pass the filters. A window of 4 makes a few memories enough.
WINDOWED = [
    ("ops", "fact", "pool size twenty"),
    ("ops", "fact", "pool pool timeout"),
    ("dev", "note", "the pool drains slowly"),
    ("dev", "fact", "cache pool warmup"),
    ("ops", "note", "pool and cache sizes"),
    ("dev", "fact", "cache misses"),
    ("ops", "fact", "pool cache pool cache"),
    ("dev", "note", "a long note about the pool that the cache shares with the queue"),
    ("ops", "fact", "queue"),
    ("dev", "fact", "pool"),
]
WINDOW_QUERIES: list[dict[str, object]] = [
    {"query": "pool"},
    {"query": "pool", "limit": 2},
    {"query": "pool cache"},
    {"query": "pool cache", "limit": 3},
    {"query": "cache queue", "limit": 4},
    {"query": "pool", "notebook": "ops", "limit": 2},
    {"query": "pool", "kind": "note", "limit": 2},  # older than the window: all are ranked
    {"query": "pool cache", "kind": "note"},
]  # (no tag filter: SQLite's match holds the tag, so its BM25 counts the tag's words too)


# With 50 memories of other words first, the words are in few of the versions: PostgreSQL
# finds the window from every match's row id instead of walking the newest versions back.
@pytest.mark.parametrize("others", [0, 50])
def test_both_stores_rank_within_the_same_window(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, others: int
) -> None:
    assert POSTGRES_URL
    monkeypatch.setattr(sqlite_search, "WINDOW", 4)
    monkeypatch.setattr(pg_search, "WINDOW", 4)
    answers = []
    for store in (open_store(str(db_path)), open_store(POSTGRES_URL)):
        service = Service(store, workspace=f"window-{uuid.uuid4().hex[:12]}")
        for n in range(others):
            service.remember(notebook="old", kind="fact", text=f"unrelated words {n}")
        ids = {}
        for n, (notebook, kind, text) in enumerate(WINDOWED):
            made = service.remember(notebook=notebook, kind=kind, text=text)
            ids[made["id"]] = text
            if n == 4:  # a past version in the window too
                service.revise(id=made["id"], append=" and pool")
        answers.append(
            [[ids[hit["id"]] for hit in service.recall(**q)["hits"]] for q in WINDOW_QUERIES]  # type: ignore[arg-type]
        )
        store.close()
    assert answers[0] == answers[1]
    # Two of the newest four "pool" matches fill a limit of 2: the best one overall, older,
    # is not ranked; for a limit of 10 the window is too short and all matches are.
    assert "pool pool timeout" in answers[0][0] and "pool pool timeout" not in answers[0][1]


def test_postgres_window_is_sqlites() -> None:
    assert pg_search.WINDOW == sqlite_search.WINDOW


def test_a_reindex_counts_the_terms_anew() -> None:
    """A migration that changes the term rules indexes every version anew: the counts follow."""
    with own_postgres_schema("reindex") as schema:
        store = open_store(schema.url)
        try:
            service = Service(store)
            made = service.remember(notebook="n", kind="fact", text="The pool holds twenty")
            service.revise(id=made["id"], text="The pool holds thirty")
            with psycopg.connect(schema.url) as conn:  # counts gone astray, to be rebuilt
                conn.execute("UPDATE search_terms SET versions = 7")
                conn.execute("INSERT INTO search_terms VALUES ('default', 'stale', 1)")
            with store.write("default") as tx:
                tx.reindex()  # type: ignore[attr-defined]
            written, counted = term_counts(schema.url, "default")
            assert written == counted and written["pool"] == 2 and "stale" not in written
        finally:
            store.close()
