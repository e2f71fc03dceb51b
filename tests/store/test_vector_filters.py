"""SQLite's in-memory copy of the vectors filters in numpy (store/vector_cache.py facets):
under every filter recall has, alone and together, it gives the answer the exact search
of the column gives (the same memories, the same scores), for a small workspace (floats
held) and a large one (sign codes and int8), and a write session still sees its own
versions and not those it ended.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.embed import Embedder
from palimpsest.service import Service
from palimpsest.service.vectors import model_tag
from palimpsest.store import SearchQuery, open_store
from palimpsest.store import sqlite as sqlite_store

TEXTS = [
    ("pets", "fact", "The cat sat on the mat all afternoon.", {"tags": ["home"]}),
    ("pets", "decision", "We adopted a kitten from the shelter.", {"tags": ["home", "vet"]}),
    ("pets", "note", "The dog barks at the mailman.", {"occurred_at": "2020-05-01"}),
    ("ops", "fact", "Login emails are dropped by the spam filter.", {"tags": ["mail"]}),
    ("ops", "error", "The deploy failed: the cache timed out.", {"expires_at": "2030-01-01"}),
    ("ops", "decision", "We ship to production with make release.", {}),
    (
        "ops",
        "rule",
        "Never deploy on a Friday.",
        {"scope": "workspace", "falsifier": "A Friday deploy went well.", "severity": "costly"},
    ),
    ("zoo", "fact", "A tiger hunts at dusk.", {"occurred_at": "2019-03-03", "tags": ["vet"]}),
    ("zoo", "note", "The lion sleeps in the shade.", {}),
    ("zoo", "fact", "The market fell sharply today.", {}),
]
QUESTIONS = ["feline", "pets at home", "deploying the app", "email problems", "big cats"]


def filled(service: Service) -> dict[str, str]:
    ids = {}
    for notebook, kind, text, fields in TEXTS:
        ids[text] = service.remember(notebook=notebook, kind=kind, text=text, **fields)["id"]
    service.revise(id=ids["The lion sleeps in the shade."], status="retracted")
    service.revise(id=ids["The cat sat on the mat all afternoon."], text="The cat naps on the mat.")
    return ids


def filter_cases(service: Service) -> list[dict[str, Any]]:
    notebooks = {nb["name"]: nb["id"] for nb in service.notebooks()["notebooks"]}
    return [
        {},
        {"notebook_ids": (notebooks["pets"],)},
        {"notebook_ids": (notebooks["pets"], notebooks["zoo"])},
        {"notebook_ids": ("nb_unknown",)},
        {"kinds": ("fact",)},
        {"kinds": ("fact", "note")},
        {"kinds": ("rule",), "scopes": ("workspace",)},
        {"scopes": ("notebook",)},
        {"tags": ("home",)},
        {"tags": ("home", "vet")},
        {"tags": ("unknown",)},
        {"statuses": ("retracted",)},
        {"statuses": ("active", "retracted")},
        {"since": "2020-01-01"},
        {"until": "2020-12-31"},
        {"since": "2019-01-01", "until": "2020-01-01", "kinds": ("fact",)},
        {"alive_at": "2031-01-01"},
        {"alive_at": "2029-01-01", "notebook_ids": (notebooks["ops"],)},
    ]


def answers(service: Service, question: str, exact: bool, **filters: Any) -> list[Any]:
    vector = service.vectors.vector_of(question)
    assert vector is not None
    with service.store.read(service.workspace) as tx:
        at = tx._last_seq() if exact else None  # type: ignore[attr-defined]
        query = SearchQuery(text="", limit=4, at_seq=at, **filters)
        found = tx.nearest(vector, query, model_tag(service.embedder))
    return [(memory.id, round(score, 5)) for memory, score in found]


@pytest.mark.parametrize("size", ["small", "large"])
def test_the_copy_filters_as_the_column_does(
    tmp_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch, size: str
) -> None:
    if size == "large":  # the corpus counts as large: sign codes, int8, few candidates
        monkeypatch.setattr(sqlite_store, "EXACT_BELOW", 5)
        monkeypatch.setattr(sqlite_store, "CANDIDATE_VECTORS", 3)
        monkeypatch.setattr(sqlite_store, "RESCORED", 2)
    store = open_store(str(tmp_path / "filters.db"))
    try:
        service = Service(store, embedder=minilm)
        filled(service)
        answers(service, "warm up", exact=False)  # builds the copy
        cache = next(iter(store._vector_caches.values()))  # type: ignore[attr-defined]
        assert (cache.table.exact is None) == (size == "large")
        for filters in filter_cases(service):
            for question in QUESTIONS:
                column = answers(service, question, exact=True, **filters)
                assert answers(service, question, exact=False, **filters) == column, filters
        # A notebook filter naming a notebook with no memory yet, then one filed there.
        service.remember(notebook="new", kind="fact", text="A puma stalks its prey.")
        new = next(nb["id"] for nb in service.notebooks()["notebooks"] if nb["name"] == "new")
        assert len(answers(service, "feline", exact=False, notebook_ids=(new,))) == 1
    finally:
        store.close()


def test_a_write_session_filters_its_own_versions_in_and_the_ended_ones_out(
    tmp_path: Path, minilm: Embedder
) -> None:
    store = open_store(str(tmp_path / "writer.db"))
    try:
        service = Service(store, embedder=minilm)
        ids = filled(service)
        answers(service, "warm up", exact=False)  # builds the copy
        tiger = ids["A tiger hunts at dusk."]
        vector = service.vectors.vector_of("big cats")
        assert vector is not None
        query = SearchQuery(text="", limit=3, kinds=("fact",), tags=("vet",))
        with store.write("default") as tx:
            # The tiger's version ends inside this transaction: the copy still holds it.
            tx._run("UPDATE memory_versions SET to_seq = 999999 WHERE memory_id = ?", (tiger,))
            found = tx.nearest(vector, query, model_tag(service.embedder))
            tx.discard()
        assert tiger not in [m.id for m, _ in found]
        with store.read("default") as tx:
            again = tx.nearest(vector, query, model_tag(service.embedder))
        assert [m.id for m, _ in again] == [tiger]
    finally:
        store.close()
