"""PostgreSQL ranks full text's matches on its in-memory copy of the term counts
(store/pg_indexed.py) as it ranks them in SQL (pg_search), through writes, revisions,
forgets, filters and other processes' writes.

A write transaction never uses the copy (its own rows are not in it), so the same search
in a write transaction that writes nothing is SQL's answer for the same state.
"""

from __future__ import annotations

import random
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Memory, now_utc
from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.store import SearchQuery, Store, bm25, open_store, pg_search

from ..conftest import POSTGRES_URL, needs_postgres

pytestmark = needs_postgres

WORDS = "alpha beta gamma delta omega river stone cloud".split()
OTHER = "red green blue".split()  # tags: never a query word, so counts stay whole numbers


def searched(
    store: Store, workspace: str, query: SearchQuery, in_write: bool = False
) -> list[tuple[str, float]]:
    opened = store.write(workspace) if in_write else store.read(workspace)
    with opened as tx:
        return [(found.id, round(score, 9)) for found, score in tx.search_found(query)]


def both(store: Store, workspace: str, query: SearchQuery) -> tuple[list[tuple[str, float]], ...]:
    """The copy's answer (a read) and SQL's (a write that writes nothing)."""
    return searched(store, workspace, query), searched(store, workspace, query, in_write=True)


def copy_of(store: Store, workspace: str) -> object:
    return store._term_indexes.get(workspace)  # type: ignore[attr-defined]


def text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 9)))


def new_workspace() -> str:
    return f"indexed-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def small_cuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cuts small enough that a few dozen memories pass them (as tests/store/test_term_index.py)."""
    monkeypatch.setattr(pg_search, "WINDOW", 7)
    monkeypatch.setattr(bm25, "DEPTH", 5)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(seed=st.integers(0, 10**6), filed=st.integers(5, 40))
def test_the_copy_ranks_every_search_as_sql_does(
    postgres_store: Store, small_cuts: None, seed: int, filed: int
) -> None:
    rng = random.Random(seed)
    workspace = new_workspace()
    service = Service(postgres_store, workspace=workspace, embedder=NullEmbedder())
    ids: list[str] = []
    for n in range(filed):
        kind = rng.choice(["fact", "note", "decision"])
        tags = {"tags": rng.sample(OTHER, rng.randint(1, 2))} if rng.random() < 0.5 else {}
        made = service.remember(notebook=f"nb{n % 3}", kind=kind, text=text(rng), **tags)
        if made["id"] not in ids:  # not the same text again (a duplicate is not filed twice)
            ids.append(made["id"])
        if rng.random() < 0.3:  # a past version stays in the copy, as in the index
            service.revise(id=rng.choice(ids), text=text(rng), because="a test revision")
        if rng.random() < 0.1:
            service.forget(id=ids.pop(rng.randrange(len(ids))), because="a test forget")
        if rng.random() < 0.3:
            with postgres_store.read(workspace) as tx:
                notebooks = [notebook.id for notebook in tx.list_notebooks()]
            narrowed = rng.random()
            query = SearchQuery(
                text=" ".join(rng.sample(WORDS, rng.randint(1, 4))),
                limit=rng.choice([1, 3, 10]),
                kinds=tuple(rng.sample(["fact", "note", "decision"], rng.randint(0, 2))),
                statuses=rng.choice([("active",), ("active", "superseded")]),
                notebook_ids=(rng.choice(notebooks),) if narrowed < 0.3 else None,
                tags=(rng.choice(OTHER),) if 0.3 <= narrowed < 0.5 else (),
                beside=rng.random() < 0.5,
            )
            copied, sql = both(postgres_store, workspace, query)
            assert copied == sql, query
    # the reads ranked on the copy (a forget in this process lets go of it: one more read)
    searched(postgres_store, workspace, SearchQuery(text="alpha"))
    assert copy_of(postgres_store, workspace) is not None


def test_another_processs_writes_are_found_and_an_older_snapshot_keeps_its_own(
    postgres_store: Store,
) -> None:
    assert POSTGRES_URL
    workspace = new_workspace()
    service = Service(postgres_store, workspace=workspace, embedder=NullEmbedder())
    first = service.remember(notebook="n", kind="note", text="alpha beta")["id"]
    for other_words in ("gamma", "delta", "omega"):  # so that "alpha" weighs something
        service.remember(notebook="n", kind="note", text=other_words)
    query = SearchQuery(text="alpha", limit=10)
    assert [i for i, _ in searched(postgres_store, workspace, query)] == [first]
    assert copy_of(postgres_store, workspace) is not None
    other = open_store(POSTGRES_URL)  # another process's writes
    try:
        with postgres_store.read(workspace) as before:  # a snapshot before the next write
            then = before.search_found(query)
            second = Service(other, workspace=workspace, embedder=NullEmbedder()).remember(
                notebook="n", kind="note", text="alpha alpha"
            )["id"]
            with ThreadPoolExecutor(1) as thread:  # another snapshot, on its own connection
                now = thread.submit(searched, postgres_store, workspace, query).result()
            assert [i for i, _ in now] == [second, first]  # the copy caught up
            # the older snapshot, now behind the copy, is ranked as it stood
            assert before.search_found(query) == then
        copied, sql = both(postgres_store, workspace, query)
        assert copied == sql
    finally:
        other.close()


def test_a_write_committed_after_another_workspaces_later_one_is_found(
    postgres_store: Store,
) -> None:
    """Event numbers are handed out across workspaces, but only a workspace's own writers
    commit in their order: the copy follows the workspace's last event, not the store's."""
    mine, theirs = new_workspace(), new_workspace()
    service = Service(postgres_store, workspace=mine, embedder=NullEmbedder())
    service.remember(notebook="n", kind="note", text="alpha beta")
    Service(postgres_store, workspace=theirs, embedder=NullEmbedder()).remember(
        notebook="n", kind="note", text="words of theirs"
    )
    query = SearchQuery(text="alpha", limit=10)
    assert len(searched(postgres_store, mine, query)) == 1
    opened, release = threading.Event(), threading.Event()
    late = new_id("m")

    def remember_slowly() -> None:
        # A write held open after its event is numbered, as a slow writer's would be.
        with postgres_store.write(mine) as tx:
            notebook = tx.list_notebooks()[0]
            memory = Memory(
                id=late, workspace=mine, notebook_id=notebook.id, version=1,
                recorded_at=now_utc(), author="user:test", owner="user:test", kind="note",
                text="alpha gamma",
            )  # fmt: skip
            event = Event(0, new_id("op"), memory.recorded_at, "user:test", "remember",
                          "memory", late, notebook.id, 1, ("created",))  # fmt: skip
            tx.put_memory(memory, tx.append_event(event))
            opened.set()
            release.wait(10)

    with ThreadPoolExecutor(1) as thread:
        pending = thread.submit(remember_slowly)
        assert opened.wait(10)
        Service(postgres_store, workspace=theirs, embedder=NullEmbedder()).remember(
            notebook="n", kind="note", text="more words of theirs"
        )
        assert len(searched(postgres_store, mine, query)) == 1  # not committed yet
        release.set()
        pending.result()
    found = [i for i, _ in searched(postgres_store, mine, query)]
    assert late in found and len(found) == 2


def test_a_forgotten_version_leaves_the_copy_with_its_words(postgres_store: Store) -> None:
    workspace = new_workspace()
    service = Service(postgres_store, workspace=workspace, embedder=NullEmbedder())
    kept = service.remember(notebook="n", kind="note", text="alpha gamma")["id"]
    gone = service.remember(notebook="n", kind="note", text="alpha alpha omega")["id"]
    query = SearchQuery(text="alpha omega", limit=10)
    assert [i for i, _ in searched(postgres_store, workspace, query)] == [gone, kept]
    service.forget(id=gone, because="a test: its words must leave the copy too")
    copied, sql = both(postgres_store, workspace, query)
    assert [i for i, _ in copied] == [kept]
    assert copied == sql


def test_a_reindex_starts_every_copy_over(postgres_store: Store) -> None:
    workspace = new_workspace()
    service = Service(postgres_store, workspace=workspace, embedder=NullEmbedder())
    service.remember(notebook="n", kind="note", text="alpha gamma")
    searched(postgres_store, workspace, SearchQuery(text="alpha"))
    before = copy_of(postgres_store, workspace)
    with postgres_store.write(workspace) as tx:
        tx.reindex()  # type: ignore[attr-defined]
    searched(postgres_store, workspace, SearchQuery(text="alpha"))
    assert copy_of(postgres_store, workspace) is not before
