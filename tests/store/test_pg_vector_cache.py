"""PostgreSQL's in-memory copy of a large workspace's vectors (store/pg_vector_cache.py):
under every filter it gives the answer the exact search of the column gives, and it
follows the writes, revisions, retirements and forgets of another process."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from palimpsest.embed import Embedder
from palimpsest.service import Service
from palimpsest.service.vectors import model_tag
from palimpsest.store import SearchQuery, Store, open_store, pg_vector_cache

from ..conftest import needs_postgres
from .test_vector_filters import QUESTIONS, filled, filter_cases

pytestmark = needs_postgres


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus counts as large, and candidates are few (so the answer widens)."""
    monkeypatch.setattr(pg_vector_cache, "EXACT_BELOW", 5)
    monkeypatch.setattr(pg_vector_cache, "CANDIDATE_VECTORS", 3)
    monkeypatch.setattr(pg_vector_cache, "RESCORED", 2)


def answers(service: Service, question: str, exact: bool, **filters: Any) -> list[Any]:
    vector = service.vectors.vector_of(question)
    assert vector is not None
    with service.store.read(service.workspace) as tx:
        at = tx.snapshot_state()[0] if exact else None  # type: ignore[attr-defined]
        query = SearchQuery(text="", limit=4, at_seq=at, **filters)
        found = tx.nearest(vector, query, model_tag(service.embedder))
    return [(memory.id, round(score, 5)) for memory, score in found]


def copies(store: Store) -> dict[Any, Any]:
    return store._vector_caches  # type: ignore[attr-defined,no-any-return]


def agree(service: Service, cases: list[dict[str, Any]]) -> None:
    for filters in cases:
        for question in QUESTIONS:
            column = answers(service, question, exact=True, **filters)
            assert answers(service, question, exact=False, **filters) == column, filters


@pytest.mark.usefixtures("large")
def test_the_copy_filters_as_the_column_does(postgres_store: Store, minilm: Embedder) -> None:
    service = Service(postgres_store, workspace=f"copy-{uuid.uuid4().hex[:12]}", embedder=minilm)
    filled(service)
    answers(service, "warm up", exact=False, kinds=("fact",))  # builds the copy
    assert (service.workspace, model_tag(minilm)) in copies(postgres_store)
    agree(service, filter_cases(service)[1:])  # the unfiltered question takes the index
    service.remember(notebook="new", kind="fact", text="A puma stalks its prey.")
    new = next(nb["id"] for nb in service.notebooks()["notebooks"] if nb["name"] == "new")
    assert len(answers(service, "feline", exact=False, notebook_ids=(new,))) == 1


@pytest.mark.usefixtures("large")
def test_the_copy_follows_another_process(postgres_store: Store, minilm: Embedder) -> None:
    workspace = f"follow-{uuid.uuid4().hex[:12]}"
    theirs = Service(postgres_store, workspace=workspace, embedder=minilm)
    ids = filled(theirs)
    there = open_store(postgres_store.url)
    try:
        mine = Service(there, workspace=workspace, embedder=minilm)
        cases = [{"kinds": ("fact",)}, {"tags": ("vet",)}, {"statuses": ("retracted",)}]
        agree(mine, cases)
        assert copies(there), "a filtered question built the copy"
        kitten = theirs.remember(notebook="pets", kind="fact", text="A kitten purrs.")["id"]
        assert answers(mine, "feline", exact=False, kinds=("fact",))[0][0] == kitten
        theirs.revise(id=kitten, text="The stock exchange index dropped.")
        assert answers(mine, "equities crashed", exact=False, kinds=("fact",))[0][0] == kitten
        agree(mine, cases)
        tiger = ids["A tiger hunts at dusk."]
        theirs.revise(id=tiger, status="retracted")
        assert tiger not in [m for m, _ in answers(mine, "big cats", False, kinds=("fact",))]
        agree(mine, cases)
        theirs.forget(id=kitten, because="test")
        assert kitten not in [m for m, _ in answers(mine, "equities", False, kinds=("fact",))]
        agree(mine, cases)
    finally:
        there.close()


@pytest.mark.usefixtures("large")
def test_full_text_under_a_filter_skips_what_the_copy_knows_fails(
    postgres_store: Store, minilm: Embedder
) -> None:
    """The vector copy's facets leave out of full text's passes the rows they fail: the
    answer is the one a write (ranking in SQL, no copy) gives."""
    service = Service(postgres_store, workspace=f"words-{uuid.uuid4().hex[:12]}", embedder=minilm)
    filled(service)
    answers(service, "warm up", exact=False, kinds=("fact",))  # builds the copy
    cases: list[dict[str, Any]] = [
        {"kinds": ("fact",)}, {"kinds": ("decision", "note")}, {"statuses": ("retracted",)},
        {"since": "2020-01-01"}, {"kinds": ("rule",), "scopes": ("workspace",)},
    ]  # fmt: skip
    for filters in cases:
        for text in ["the cat", "deploy cache", "the market fell", "lion shade"]:
            query = SearchQuery(text=text, limit=3, **filters)
            with postgres_store.read(service.workspace) as tx:
                assert tx.failing(query) is not None  # type: ignore[attr-defined]
                read = [(f.id, round(s, 6)) for f, s in tx.search_found(query)]
            with postgres_store.write(service.workspace) as tx:
                written = [(f.id, round(s, 6)) for f, s in tx.search_found(query)]
                tx.discard()
            assert read == written, (filters, text)
