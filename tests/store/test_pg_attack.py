"""PostgreSQL's in-memory copies (pg_indexed's term counts, pg_vector_cache's vectors)
attacked: each answer is the one SQL alone gives for the same snapshot, under random
filters, odd tags, two workspaces with the same notebook names, other processes' writes
and forgets, and another thread's read catching a copy up in the middle of a search.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import psycopg
import pytest

from palimpsest.embed.base import Vectors, normalise
from palimpsest.service import Service
from palimpsest.service.vectors import model_tag
from palimpsest.store import SearchQuery, Store, bm25, open_store, pg_search, pg_vector_cache
from palimpsest.store.pg_session import PostgresSession

from ..conftest import needs_postgres, own_postgres_schema

pytestmark = needs_postgres

WORDS = "alpha beta gamma delta omega river stone cloud".split()
TAGS = ["red", "a b", "ünï", 'quo"te', "[x]", "50%", "_", "x,y", "RED"]
KINDS = ["fact", "note", "decision"]


class WordsEmbedder:
    """A small deterministic embedder: each word a fixed random direction."""

    name = "attack-words"
    version = "1"
    dimensions = 16

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.sha256(word.encode()).digest()[: self.dimensions]
                rows[i] += np.frombuffer(digest, np.uint8).astype(np.float32) - 127.5
        return normalise(rows)


EMBEDDER = WordsEmbedder()
MODEL = model_tag(EMBEDDER)  # type: ignore[arg-type]


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workspace counts as large, candidates are few; full text's cuts are small."""
    monkeypatch.setattr(pg_vector_cache, "EXACT_BELOW", 5)
    monkeypatch.setattr(pg_vector_cache, "CANDIDATE_VECTORS", 3)
    monkeypatch.setattr(pg_vector_cache, "RESCORED", 2)
    monkeypatch.setattr(pg_search, "WINDOW", 7)
    monkeypatch.setattr(bm25, "DEPTH", 5)


def service_on(store: Store, workspace: str) -> Service:
    return Service(store, workspace=workspace, embedder=EMBEDDER)  # type: ignore[arg-type]


def text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))


def nearest(store: Store, workspace: str, question: str, exact: bool, **filters: Any) -> list[Any]:
    """The copy's answer, or (`exact`) SQL's: the same snapshot asked as a past state."""
    vector = EMBEDDER.embed([question])[0]
    with store.read(workspace) as tx:
        at = tx.snapshot_state()[0] if exact else None  # type: ignore[attr-defined]
        query = SearchQuery(text="", limit=filters.pop("limit", 4), at_seq=at, **filters)
        found = tx.nearest_found(vector, query, MODEL)  # type: ignore[attr-defined]
    return [(f.id, round(score, 5)) for f, score in found]


def words(store: Store, workspace: str, in_write: bool, **filters: Any) -> list[Any]:
    """Full text's answer from a read (the copies) or a write (SQL alone)."""
    query = SearchQuery(**filters)
    opened = store.write(workspace) if in_write else store.read(workspace)
    with opened as tx:
        found = [(f.id, round(s, 6)) for f, s in tx.search_found(query)]
        if in_write:
            tx.discard()
    return found


def filled(rng: random.Random, service: Service, count: int) -> list[str]:
    ids: list[str] = []
    for n in range(count):
        fields: dict[str, Any] = {}
        if rng.random() < 0.6:
            fields["tags"] = rng.sample(TAGS, rng.randint(1, 3))
        if rng.random() < 0.3:
            fields["occurred_at"] = f"20{rng.randint(10, 29)}-0{rng.randint(1, 9)}-01"
        if rng.random() < 0.2:
            fields["expires_at"] = f"20{rng.randint(20, 39)}-01-01"
        made = service.remember(notebook=f"nb{n % 3}", kind=rng.choice(KINDS), text=text(rng),
                                **fields)  # fmt: skip
        if made["id"] not in ids:
            ids.append(made["id"])
        if rng.random() < 0.2:
            service.revise(id=rng.choice(ids), text=text(rng), because="an attack revision")
        if rng.random() < 0.1:
            service.revise(id=rng.choice(ids), status="retracted")
    return ids


def random_filters(rng: random.Random, notebooks: list[str]) -> dict[str, Any]:
    filters: dict[str, Any] = {}
    if rng.random() < 0.3:
        filters["notebook_ids"] = tuple(rng.sample(notebooks, rng.randint(1, len(notebooks))))
    if rng.random() < 0.4:
        filters["kinds"] = tuple(rng.sample([*KINDS, "rule"], rng.randint(1, 3)))
    if rng.random() < 0.4:
        filters["tags"] = tuple(rng.sample([*TAGS, "nowhere"], rng.randint(1, 2)))
    if rng.random() < 0.3:
        filters["statuses"] = rng.choice([("retracted",), ("active", "superseded")])
    if rng.random() < 0.2:
        filters["since"] = f"20{rng.randint(10, 29)}-01-01"
    if rng.random() < 0.2:
        filters["until"] = f"20{rng.randint(10, 29)}-01-01"
    if rng.random() < 0.2:
        filters["alive_at"] = f"20{rng.randint(20, 39)}-06-01"
    if rng.random() < 0.1:
        filters["scopes"] = ("workspace",)
    if not filters:
        filters["kinds"] = ("fact",)
    return filters


@pytest.mark.usefixtures("large")
@pytest.mark.parametrize("seed", range(3))
def test_the_copies_answer_as_sql_in_two_workspaces_of_the_same_notebooks(
    postgres_store: Store, seed: int
) -> None:
    rng = random.Random(seed)
    mine, theirs = (f"attack-{uuid.uuid4().hex[:12]}" for _ in range(2))
    their_ids = set(filled(rng, service_on(postgres_store, theirs), 25))
    service = service_on(postgres_store, mine)
    filled(rng, service, 25)
    # another process's store: it writes and forgets while this one reads
    other = open_store(postgres_store.url)
    try:
        writer = service_on(other, mine)
        for round_ in range(6):
            with postgres_store.read(mine) as tx:
                notebooks = [nb.id for nb in tx.list_notebooks()] + ["nb_none"]
            for _ in range(6):
                filters = random_filters(rng, notebooks)
                question = text(rng)
                copied = nearest(postgres_store, mine, question, False, **filters)
                assert copied == nearest(postgres_store, mine, question, True, **filters), filters
                assert not their_ids & {i for i, _ in copied}
                wording = {"text": question, "limit": rng.choice([1, 3, 10]), **filters}
                if rng.random() < 0.3:  # as of a past event
                    with postgres_store.read(mine) as tx:
                        last = tx.snapshot_state()[0]  # type: ignore[attr-defined]
                    wording["at_seq"] = rng.randint(max(last - 40, 1), last)
                read = words(postgres_store, mine, False, **wording)
                assert read == words(postgres_store, mine, True, **wording), wording
                assert not their_ids & {i for i, _ in read}
            assert (mine, MODEL) in postgres_store._vector_caches  # type: ignore[attr-defined]
            ids = filled(rng, writer, 3)
            if round_ % 2:
                writer.forget(id=rng.choice(ids), because="an attack forget")
    finally:
        other.close()


@pytest.mark.usefixtures("large")
def test_a_snapshot_keeps_its_rows_when_another_thread_catches_the_copy_up(
    postgres_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read checks that the copy stands at its snapshot, then searches it: another
    read catching the copy up in between must not take the rows of its snapshot away."""
    workspace = f"attack-{uuid.uuid4().hex[:12]}"
    service = service_on(postgres_store, workspace)
    target = service.remember(notebook="n", kind="fact", text="alpha beta gamma")["id"]
    for n in range(8):
        service.remember(notebook="n", kind="fact", text=" ".join(WORDS[n % 8 :][:3]) + f" {n}")
    question = "alpha beta gamma"
    assert nearest(postgres_store, workspace, question, False, kinds=("fact",))[0][0] == target
    vector = EMBEDDER.embed([question])[0]
    original = PostgresSession.nearest_cached
    interleaved = []

    def caught_up_meanwhile(self: PostgresSession, *args: Any, **kwargs: Any) -> Any:
        if not interleaved:  # once: another thread's newer read catches the copy up first
            interleaved.append(True)
            with ThreadPoolExecutor(1) as thread:
                thread.submit(nearest, postgres_store, workspace, "x", False,
                              kinds=("fact",)).result()  # fmt: skip
        return original(self, *args, **kwargs)

    with postgres_store.read(workspace) as older:
        seq = older.snapshot_state()[0]  # type: ignore[attr-defined]
        service.revise(id=target, text="river stone cloud", because="ends the version asked")
        monkeypatch.setattr(PostgresSession, "nearest_cached", caught_up_meanwhile)
        query = SearchQuery(text="", limit=3, kinds=("fact",))
        found = older.nearest_found(vector, query, MODEL)  # type: ignore[attr-defined]
        monkeypatch.setattr(PostgresSession, "nearest_cached", original)
        exact = older.nearest_found(  # type: ignore[attr-defined]
            vector, SearchQuery(text="", limit=3, kinds=("fact",), at_seq=seq), MODEL
        )
    assert interleaved
    assert [f.id for f, _ in found] == [f.id for f, _ in exact]
    assert found[0][0].id == target


@pytest.mark.usefixtures("large")
def test_a_forget_leaves_no_copy_of_the_forgotten_in_the_forgetting_process(
    postgres_store: Store,
) -> None:
    """The copies hold a forgotten memory's words and vector until a read starts them
    over: the process that forgets lets go of them as it commits, not at its next read."""
    workspace = f"attack-{uuid.uuid4().hex[:12]}"
    service = service_on(postgres_store, workspace)
    secret = service.remember(notebook="n", kind="fact", text="hunter2 alpha")["id"]
    for n in range(6):
        service.remember(notebook="n", kind="fact", text=f"alpha {WORDS[n]}")
    assert words(postgres_store, workspace, False, text="alpha", limit=10)
    assert nearest(postgres_store, workspace, "hunter2", False, kinds=("fact",))[0][0] == secret
    caches = postgres_store._vector_caches  # type: ignore[attr-defined]
    indexes = postgres_store._term_indexes  # type: ignore[attr-defined]
    assert workspace in indexes and (workspace, MODEL) in caches
    service.forget(id=secret, because="it was a password")
    assert workspace not in indexes
    assert not [key for key in caches if key[0] == workspace]
    assert secret not in [i for i, _ in words(postgres_store, workspace, False, text="hunter2")]


def test_migration_014_indexes_the_tags_of_a_store_of_the_release_before() -> None:
    """A store at 013 (odd tags, a forgotten memory, a past version) takes 014, finds by
    tag as before, and opening it again runs nothing twice."""
    with own_postgres_schema("before014") as schema:
        store = open_store(schema.url)
        try:
            service = Service(store, workspace="default")
            kept = service.remember(notebook="n", kind="fact", text="alpha", tags=TAGS)["id"]
            service.revise(id=kept, text="alpha beta")
            gone = service.remember(notebook="n", kind="fact", text="omega", tags=["red"])["id"]
            service.forget(id=gone, because="test")
        finally:
            store.close()
        with psycopg.connect(schema.url) as conn:  # as the release before 014 left it
            conn.execute("DROP INDEX versions_current_tags")
            # and without what later migrations made
            conn.execute(
                "DROP TABLE served, web_sessions, replica_state, replica_seqs, replica_queue"
            )
            conn.execute("ALTER TABLE memory_versions DROP COLUMN screened")
            conn.execute("DELETE FROM palimpsest_schema WHERE version >= 14")
        for _ in range(2):
            store = open_store(schema.url)
            try:
                assert store.schema_version() >= 14
                for tag in TAGS:
                    for in_write in (False, True):
                        found = words(store, "default", in_write, text="alpha", tags=(tag,))
                        assert [i for i, _ in found] == [kept], tag
            finally:
                store.close()
        with psycopg.connect(schema.url) as conn:
            applied = conn.execute(
                "SELECT count(*) FROM palimpsest_schema WHERE version = 14"
            ).fetchone()
            index = conn.execute("SELECT to_regclass('versions_current_tags')").fetchone()
        assert applied == (1,) and index is not None and index[0] is not None


@pytest.mark.usefixtures("large")
@pytest.mark.parametrize("tag", ["_", "red"])
def test_a_tag_of_no_words_ranks_as_sql_ranks_it(postgres_store: Store, tag: str) -> None:
    """A tag with no index terms (`_`) cannot narrow the matches: SQL ranks such a search
    by the newest matches' window (as SQLite does), so the copy must too."""
    workspace = f"attack-{uuid.uuid4().hex[:12]}"
    service = service_on(postgres_store, workspace)
    for n in range(4):  # the best matches, oldest
        service.remember(notebook="n", kind="fact", text=f"alpha alpha alpha {WORDS[n + 1]}",
                         tags=[tag])  # fmt: skip
    for n in range(10):  # newer, weaker matches: the window
        filler = " ".join(WORDS[1:] * 2)
        service.remember(notebook="n", kind="fact", text=f"alpha {filler} {n}", tags=[tag])
    for limit in (1, 3):
        wording = {"text": "alpha", "limit": limit, "tags": (tag,)}
        read = words(postgres_store, workspace, False, **wording)
        assert read == words(postgres_store, workspace, True, **wording), wording
