"""Vectors in the store, with the real model, on both stores (issue 10).

Every memory version gets a vector in its own transaction; `nearest` ranks by meaning
under every filter `search` has; a changed text is embedded anew and an unchanged one
reuses its predecessor's vector; forget leaves no vector behind; both stores agree on
the top of a fixed corpus; the null embedder writes none and everything still works.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from palimpsest.domain.model import Event, Memory
from palimpsest.embed import Embedder, NullEmbedder, load_embedder
from palimpsest.service import Service
from palimpsest.service.vectors import embedding_text, model_tag
from palimpsest.store import SearchQuery, Store, open_store, pg_vectors

from ..conftest import POSTGRES_URL, needs_postgres, own_postgres_database

CORPUS = {
    "cat": "The cat sat on the mat all afternoon.",
    "mail": "Login emails are dropped by the spam filter.",
    "market": "The stock market fell sharply today.",
    "release": "We ship to production with make release.",
    "pool": "The database connection pool holds 20 connections.",
    "rain": "It rained all weekend in Lisbon.",
    "guitar": "She plays the guitar in a jazz band.",
    "vaccine": "The vaccine trial enrolled 3000 volunteers.",
}
# question -> the CORPUS entry that answers it by meaning alone (no word in common)
QUESTIONS = {
    "feline": "cat",
    "why are password reset messages not arriving": "mail",
    "equities crashed": "market",
    "deploying the app": "release",
    "musician": "guitar",
}


def fill(service: Service, notebook: str = "notes") -> dict[str, str]:
    """The corpus remembered; name -> memory id."""
    return {
        name: service.remember(notebook=notebook, kind="fact", text=text)["id"]
        for name, text in CORPUS.items()
    }


def nearest(service: Service, text: str, **filters: object) -> list[tuple[str, float]]:
    vector = service.vectors.vector_of(text)
    assert vector is not None
    query = SearchQuery(text="", **filters)  # type: ignore[arg-type]
    with service.store.read(service.workspace) as tx:
        found = tx.nearest(vector, query, model_tag(service.embedder))
    return [(memory.id, score) for memory, score in found]


def stored(service: Service, memory_id: str, version: int) -> np.ndarray | None:
    with service.store.read(service.workspace) as tx:
        return tx.vector_of(memory_id, version, model_tag(service.embedder))


def test_every_version_has_its_vector_tagged_with_the_model(meaning: Service) -> None:
    mid = meaning.remember(notebook="n", kind="fact", text="The cat sat on the mat.")["id"]
    vector = stored(meaning, mid, 1)
    assert vector is not None and vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1) < 1e-4
    expected = meaning.embedder.embed(["The cat sat on the mat."])[0]
    assert float(vector @ expected) > 0.9999
    with meaning.store.read(meaning.workspace) as tx:
        assert tx.vector_of(mid, 1, "another-model recipe=1") is None


def test_a_changed_text_is_embedded_anew_and_an_unchanged_one_keeps_its_vector(
    meaning: Service,
) -> None:
    mid = meaning.remember(notebook="n", kind="fact", text="The cat sat on the mat.")["id"]
    meaning.revise(id=mid, text="The stock market fell sharply today.")
    meaning.revise(id=mid, tags=["finance"])  # tags are not embedded: the vector is kept
    meaning.revise(id=mid, title="Markets")  # the title is: embedded anew
    first, second, third, fourth = (stored(meaning, mid, v) for v in (1, 2, 3, 4))
    assert first is not None and second is not None and third is not None
    assert fourth is not None
    assert float(first @ second) < 0.5
    assert np.array_equal(second, third)
    assert not np.array_equal(third, fourth)
    latest = _memory(meaning, mid)
    assert latest is not None and embedding_text(latest, None).startswith("Markets\n")
    assert [m for m, _ in nearest(meaning, "equities crashed", limit=1)] == [mid]


def _memory(service: Service, memory_id: str) -> Memory | None:
    with service.store.read(service.workspace) as tx:
        return tx.get_memory(memory_id)


def test_every_kind_of_write_stores_the_new_versions_vector(meaning: Service) -> None:
    old = meaning.remember(notebook="n", kind="fact", text="Deploys run on Fridays.")["id"]
    new = meaning.remember(
        notebook="n", kind="fact", text="Deploys run on Mondays.", supersedes=[old]
    )["id"]
    meaning.revise(id=new, move_to="elsewhere", because="belongs there")
    meaning.revert(id=new, version=1, because="moved by mistake")
    with meaning.store.read(meaning.workspace) as tx:
        for memory_id in (old, new):
            for version in tx.memory_versions(memory_id):
                found = tx.vector_of(memory_id, version.version, model_tag(meaning.embedder))
                assert found is not None, (memory_id, version.version, version.op)


def test_nearest_finds_by_meaning(meaning: Service) -> None:
    ids = fill(meaning)
    for question, answer in QUESTIONS.items():
        found = nearest(meaning, question, limit=3)
        assert found[0][0] == ids[answer], question
        assert found[0][1] >= found[1][1] >= found[2][1]


def test_searches_name_versions_that_are_read_only_when_shown(meaning: Service) -> None:
    """Recall ranks the versions `search_found` and `nearest_found` name, and reads whole
    only the ones it shows: they name what `search` and `nearest` read, with the same
    scores, and `versions_of_rows` reads each, a past version as it was then."""
    ids = fill(meaning)
    meaning.revise(id=ids["pool"], tags=["db"])
    with meaning.store.read(meaning.workspace) as tx:
        last = tx.last_event()
        assert last is not None
        before = last.seq
    meaning.revise(id=ids["pool"], text="The database connection pool holds 40 connections.")
    vector = meaning.vectors.vector_of("how many connections does the database take")
    assert vector is not None
    model = model_tag(meaning.embedder)
    now = SearchQuery(text="database connection pool", limit=4)
    then = SearchQuery(text="database connection pool", limit=4, at_seq=before)
    with meaning.store.read(meaning.workspace) as tx:
        for query in (now, then):
            for found, read in (
                (tx.search_found(query), tx.search(query)),
                (tx.nearest_found(vector, query, model), tx.nearest(vector, query, model)),
            ):
                assert [(f.id, score) for f, score in found] == [(m.id, s) for m, s in read]
                versions = tx.versions_of_rows([f.rowid for f, _ in found])
                assert [versions[f.rowid] for f, _ in found] == [m for m, _ in read]
        (pool_then, _), *_ = tx.search(then)
        assert pool_then.id == ids["pool"] and "20 connections" in pool_then.text
        assert tx.versions_of_rows([]) == {}


def test_nearest_honours_every_filter(meaning: Service) -> None:
    ids = fill(meaning)
    other = meaning.remember(
        notebook="pets", kind="decision", text="We adopted a kitten.", tags=["home"]
    )["id"]
    pets = meaning.notebooks()["notebooks"]
    pets_id = next(nb["id"] for nb in pets if nb["name"] == "pets")
    everything = {m for m, _ in nearest(meaning, "feline", limit=50)}
    assert everything == {*ids.values(), other}
    assert [m for m, _ in nearest(meaning, "feline", notebook_ids=(pets_id,))] == [other]
    assert nearest(meaning, "feline", notebook_ids=()) == []
    assert [m for m, _ in nearest(meaning, "feline", kinds=("decision",))] == [other]
    assert [m for m, _ in nearest(meaning, "feline", tags=("home",))] == [other]
    assert len(nearest(meaning, "feline", limit=2)) == 2
    # Retired memories leave by default, and come back when their status is asked for.
    with meaning.store.read(meaning.workspace) as tx:
        seq_before = tx.last_event().seq  # type: ignore[union-attr]
    meaning.revise(id=ids["cat"], status="retracted")
    assert ids["cat"] not in {m for m, _ in nearest(meaning, "feline", limit=50)}
    retracted = nearest(meaning, "feline", statuses=("retracted",))
    assert [m for m, _ in retracted] == [ids["cat"]]
    # The state at a past event: the cat was still active then.
    past = nearest(meaning, "feline", limit=1, at_seq=seq_before, kinds=("fact",))
    assert [m for m, _ in past] == [ids["cat"]]
    # Times: occurred_at else recorded_at, and expiry.
    dated = meaning.remember(
        notebook="n", kind="fact", text="A tabby cat was seen.", occurred_at="2020-01-01"
    )["id"]
    assert [m for m, _ in nearest(meaning, "feline", until="2020-12-31")] == [dated]
    assert dated not in {m for m, _ in nearest(meaning, "feline", since="2021-01-01", limit=50)}
    brief = meaning.remember(
        notebook="n", kind="fact", text="The lion naps.", expires_at="2030-01-01"
    )["id"]
    assert brief in {m for m, _ in nearest(meaning, "feline", limit=50)}
    late = nearest(meaning, "feline", alive_at="2031-01-01", limit=50)
    assert brief not in {m for m, _ in late}


def test_forget_leaves_no_vector_behind(meaning: Service) -> None:
    ids = fill(meaning)
    meaning.revise(id=ids["cat"], text="The cat slept on the mat.")
    meaning.forget(id=ids["cat"], because="test")
    assert stored(meaning, ids["cat"], 1) is None
    assert stored(meaning, ids["cat"], 2) is None
    assert ids["cat"] not in {m for m, _ in nearest(meaning, "feline", limit=50)}
    meaning.revise(id=ids["rain"], text="It snowed all weekend in Oslo.")
    meaning.forget(id=ids["rain"], version=1, because="test")
    assert stored(meaning, ids["rain"], 1) is None
    assert stored(meaning, ids["rain"], 2) is not None
    with meaning.store.read(meaning.workspace) as tx:
        left = {m.id for m in tx.stale_vectors(model_tag(meaning.embedder), 100)}
    assert left == set()  # nothing with content lacks a vector, nothing forgotten has one


def test_the_null_embedder_stores_no_vector_and_recall_still_works(
    store: Store, workspace: str
) -> None:
    plain = Service(store, workspace=workspace, embedder=NullEmbedder())
    mid = plain.remember(notebook="n", kind="fact", text="The cat sat on the mat.")["id"]
    plain.revise(id=mid, text="The cat sat on the rug.")
    assert plain.vectors.vector_of("anything") is None
    assert [hit["id"] for hit in plain.recall(query="cat")["hits"]] == [mid]
    with store.read(workspace) as tx:
        assert tx.vector_of(mid, 1, model_tag(plain.embedder)) is None
        assert len(tx.stale_vectors(model_tag(load_embedder("minilm")), 10)) == 2


def _corpus_service(store: Store, workspace: str, minilm: Embedder) -> Service:
    service = Service(store, workspace=workspace, embedder=minilm)
    fill(service)
    fill(service, notebook="second")  # the same texts again: ties the stores must break alike
    return service


@needs_postgres
@pytest.mark.parametrize("use_index", [False, True], ids=["exact", "hnsw"])
def test_both_stores_return_the_same_top_k(
    tmp_path: Path, postgres_store: Store, minilm: Embedder, use_index: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """On a fixed corpus, within a stated tolerance: the same set of the best k, and
    scores within 1e-4 (float32 in numpy against pgvector's double-precision sums)."""
    if use_index:  # the index answers even this small workspace
        monkeypatch.setattr(pg_vectors, "EXACT_BELOW", 0)
    lite = open_store(str(tmp_path / "a.db"))
    try:
        a = _corpus_service(lite, "default", minilm)
        b = _corpus_service(postgres_store, f"test-{tmp_path.name[-12:]}", minilm)
        for question in [*QUESTIONS, "weather", "medicine", "numbers"]:
            ours = nearest(a, question, limit=4)
            theirs = nearest(b, question, limit=4)
            assert [round(s, 4) for _, s in ours] == pytest.approx(
                [round(s, 4) for _, s in theirs], abs=1e-4
            )
            texts_a = sorted(_text(a, m) for m, _ in ours)
            texts_b = sorted(_text(b, m) for m, _ in theirs)
            assert texts_a == texts_b, question
    finally:
        lite.close()


@needs_postgres
@pytest.mark.parametrize("worth", [False, True], ids=["exact", "hnsw"])
def test_a_kind_filter_over_a_large_workspace_finds_what_an_exact_search_finds(
    postgres_store: Store, minilm: Embedder, worth: bool, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:  # fmt: skip
    """A kind passing many rows of a large workspace takes the index (pg_vectors'
    `worth_the_index`); one passing fewer than the limit still answers all of them (the
    index's short answer is made exact)."""
    service = Service(postgres_store, workspace=f"kinds-{tmp_path.name[-12:]}", embedder=minilm)
    fill(service)
    decided = service.remember(notebook="notes", kind="decision", text="We deploy on Fridays.")
    exact = {
        question: nearest(service, question, limit=4, kinds=("fact",)) for question in QUESTIONS
    }
    monkeypatch.setattr(pg_vectors, "EXACT_BELOW", 0)  # the workspace counts as large
    monkeypatch.setattr(pg_vectors, "worth_the_index", lambda *_: worth)
    for question in QUESTIONS:
        assert [i for i, _ in nearest(service, question, limit=4, kinds=("fact",))] == [
            i for i, _ in exact[question]
        ]
        assert [i for i, _ in nearest(service, question, limit=4, kinds=("decision",))] == [
            decided["id"]
        ]


def _text(service: Service, memory_id: str) -> str:
    memory = _memory(service, memory_id)
    assert memory is not None
    return str(memory.text)


@needs_postgres
def test_copy_carries_the_vectors(tmp_path: Path, minilm: Embedder) -> None:
    from palimpsest.service import copy_between

    assert POSTGRES_URL
    source = tmp_path / "source.db"
    workspace = f"copy-{tmp_path.name[-12:]}"  # a workspace of this test's own there
    lite = open_store(str(source))
    ids = fill(Service(lite, workspace=workspace, embedder=minilm))
    lite.close()
    answer = copy_between(str(source), POSTGRES_URL, workspace)
    assert answer["copied"]["memory_vectors"] == len(CORPUS)
    target = open_store(POSTGRES_URL)
    try:
        b = Service(target, workspace=workspace, embedder=minilm)
        for name in ids:
            memory = next(m for m, _ in nearest(b, CORPUS[name], limit=1))
            assert _text(b, memory) == CORPUS[name]
        with target.read(workspace) as tx:
            assert tx.stale_vectors(model_tag(minilm), 10) == []
    finally:
        target.close()


# -- forget: the vector's bytes leave the files, index included ------------------------

FORGOTTEN_TEXT = "The zebra crossing by the school was repainted violet on {n}."


def vector_bytes(vector: np.ndarray) -> bytes:
    """A vector as SQLite keeps it: little-endian float32."""
    return vector.astype("<f4", copy=False).tobytes()


def vector_prints(service: Service, memory_id: str) -> list[bytes]:
    """The first 32 bytes of each version's float32 vector, as stored and as a cosine
    index stores it: pgvector's HNSW normalises each vector again (in double precision),
    which changes the last bits of some of ours."""
    with service.store.read(service.workspace) as tx:
        versions = [v.version for v in tx.memory_versions(memory_id)]
    prints = []
    for version in versions:
        vector = stored(service, memory_id, version)
        assert vector is not None
        wide = vector.astype(np.float64)
        renormalised = (wide / np.sqrt(wide @ wide)).astype(np.float32)
        prints += [vector_bytes(vector)[:32], vector_bytes(renormalised)[:32]]
    return prints


def files_with(folder: Path, prints: list[bytes]) -> list[str]:
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and any(fp in p.read_bytes() for fp in prints)
    )


@pytest.mark.parametrize("checkpointed", [False, True], ids=["in-wal", "in-db-file"])
def test_forget_leaves_no_vector_bytes_in_the_sqlite_files(
    tmp_path: Path, minilm: Embedder, checkpointed: bool
) -> None:
    folder = tmp_path / "store"
    store = open_store(str(folder / "palimpsest.db"))
    try:
        service = Service(store, embedder=minilm)
        fill(service)
        mid = service.remember(notebook="n", kind="fact", text=FORGOTTEN_TEXT.format(n=1))["id"]
        service.revise(id=mid, text=FORGOTTEN_TEXT.format(n=2))
        fill(service, notebook="after")
        prints = vector_prints(service, mid)
        if checkpointed:
            assert store.scrub()
        assert files_with(folder, prints), "the vectors are on disk before the forget"
        assert service.forget(id=mid, because="test")["scrub_pending"] is False
        assert files_with(folder, prints) == []
        assert len(nearest(service, "zebra crossing", limit=50)) == 2 * len(CORPUS)
    finally:
        store.close()


@pytest.fixture
def private_postgres() -> Iterator[str]:
    """A new database on the test server, dropped at the end: its files are this test's."""
    with own_postgres_database("vectors") as url:
        yield url


def postgres_files(url: str) -> tuple[Path, Path]:
    """The database's folder, and the file of the HNSW index on the vectors."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # what is in shared buffers reaches the files
        row = conn.execute(
            "SELECT current_setting('data_directory'), "
            "pg_relation_filepath('vectors_hnsw'), pg_relation_filepath('memory_vectors')"
        ).fetchone()
    assert row is not None
    root = Path(str(row[0]))
    return (root / str(row[2])).parent, root / str(row[1])


@needs_postgres
def test_forget_and_scrub_leave_no_vector_bytes_in_postgres_table_or_hnsw_index(
    private_postgres: str, minilm: Embedder
) -> None:
    store = open_store(private_postgres)
    try:
        service = Service(store, embedder=minilm)
        fill(service)
        mid = service.remember(notebook="n", kind="fact", text=FORGOTTEN_TEXT.format(n=1))["id"]
        prints = vector_prints(service, mid)
        folder, index = postgres_files(private_postgres)
        assert any(fp in index.read_bytes() for fp in prints), "the index holds the vector"
        assert len(files_with(folder, prints)) >= 2  # the table's file and the index's
        assert service.forget(id=mid, because="test")["scrub_pending"] is True
        assert files_with(folder, prints), "a forget alone leaves the bytes (until scrub)"
        done = store.rewrite()
        assert done.pending == 0 and "memory_vectors" in done.locked_seconds
        folder, index = postgres_files(private_postgres)
        assert files_with(folder, prints) == []
        # The index was rebuilt under its own name, and answers.
        with psycopg.connect(private_postgres) as conn:
            names = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors'"
            ).fetchall()
        assert {"vectors_hnsw", "vectors_model"} <= {n[0] for n in names}
        top = nearest(service, CORPUS["cat"], limit=1)
        assert _text(service, top[0][0]) == CORPUS["cat"]
    finally:
        store.close()


# -- SQLite's cache of a large workspace: never misses another process's writes ----------


def column_answer(service: Service, text: str, **filters: object) -> list[tuple[str, float]]:
    """The exact search from the float32 column: the same question asked of the current
    state by its event number (a past state is never answered from the copy)."""
    vector = service.vectors.vector_of(text)
    assert vector is not None
    with service.store.read(service.workspace) as tx:
        last = tx._last_seq()  # type: ignore[attr-defined]
        query = SearchQuery(text="", at_seq=last, **filters)  # type: ignore[arg-type]
        return [(m.id, s) for m, s in tx.nearest(vector, query, service.vectors.model)]


def cached_is_exact_for(service: Service) -> None:
    """The copy answers every question, unfiltered or filtered, as the column does."""
    notebook = _notebook_id(service)
    for question in [*QUESTIONS, "feline", "a cat"]:
        for filters in ({}, {"kinds": ("fact",)}, {"notebook_ids": (notebook,)}):
            exact = column_answer(service, question, limit=3, **filters)
            cached = nearest(service, question, limit=3, **filters)
            assert [m for m, _ in cached] == [m for m, _ in exact], (question, filters)
            assert [s for _, s in cached] == pytest.approx([s for _, s in exact], abs=1e-6)


def _notebook_id(service: Service) -> str:
    return str(service.notebooks()["notebooks"][0]["id"])


def test_the_sqlite_cache_sees_every_write_of_another_process(
    tmp_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores on one file stand for two processes: each has its own cache. The cache
    answers as the exact search does, and follows the other's writes, revisions,
    retirements, forgets and reindex (which write no event)."""
    from palimpsest.store import sqlite as sqlite_store

    monkeypatch.setattr(sqlite_store, "EXACT_BELOW", 5)  # the corpus counts as large
    monkeypatch.setattr(sqlite_store, "CANDIDATE_VECTORS", 6)  # and candidates are few
    monkeypatch.setattr(sqlite_store, "RESCORED", 3)
    path = str(tmp_path / "shared.db")
    here, there = open_store(path), open_store(path)
    try:
        mine = Service(here, embedder=minilm)
        theirs = Service(there, embedder=minilm)
        ids = fill(theirs)

        def cached_is_exact() -> None:
            cached_is_exact_for(mine)

        cached_is_exact()
        assert here._vector_caches, "the unfiltered question built the cache"
        kitten = theirs.remember(notebook="pets", kind="fact", text="A kitten purrs.")["id"]
        assert [m for m, _ in nearest(mine, "feline", limit=2)] == [kitten, ids["cat"]]
        cached_is_exact()
        theirs.revise(id=kitten, text="The stock exchange index dropped.")
        cached_is_exact()
        assert nearest(mine, "equities crashed", limit=1)[0][0] == kitten
        theirs.revise(id=ids["cat"], status="retracted")
        assert ids["cat"] not in [m for m, _ in nearest(mine, "feline", limit=8)]
        cached_is_exact()
        theirs.forget(id=kitten, because="test")
        assert kitten not in [m for m, _ in nearest(mine, "equities crashed", limit=8)]
        cached_is_exact()
        # A memory filed with no vector, then reindexed: no event, yet the cache sees it.
        plain = Service(there, embedder=NullEmbedder())
        tiger = plain.remember(notebook="pets", kind="fact", text="A tiger hunts at dusk.")["id"]
        assert tiger not in [m for m, _ in nearest(mine, "feline", limit=20)]
        assert theirs.reindex()["reindexed"] == 1
        assert tiger in [m for m, _ in nearest(mine, "big cat", limit=3)]
        cached_is_exact()
        # A write session never fills the cache, and still sees the versions it lacks.
        lion = theirs.remember(notebook="pets", kind="fact", text="The lion sleeps.")["id"]
        vector = mine.vectors.vector_of("a lion asleep")
        assert vector is not None
        with here.write("default") as tx:
            found_in_write = tx.nearest(vector, SearchQuery(text="", limit=1), mine.vectors.model)
            tx.discard()
        assert [m.id for m, _ in found_in_write] == [lion]
        assert nearest(mine, "a lion asleep", limit=1)[0][0] == lion
        # A process whose first search is in a write transaction builds its cache from
        # what was committed before: its own uncommitted version is found, and after the
        # rollback it is in no cache.
        third = open_store(path)
        try:
            writer = Service(third, embedder=minilm)
            draft = Memory(id="m_draft", workspace="default", notebook_id=_notebook_id(mine),
                           kind="fact", text="A cheetah sprints.", version=1, owner=None,
                           recorded_at="2026-01-01T00:00:00Z", author="user:a")  # fmt: skip
            vector = writer.vectors.vector_of("A cheetah sprints.")
            assert vector is not None
            with third.write("default") as tx:
                seq = tx.append_event(Event(0, "op_x", "2026-01-01T00:00:00Z", "user:a",
                                            "remember", "memory", draft.id, draft.notebook_id,
                                            1, ("created",)))  # fmt: skip
                tx.put_memory(draft, seq)
                tx.put_vector(draft.id, seq, vector, writer.vectors.model)
                inside = tx.nearest(vector, SearchQuery(text="", limit=1), writer.vectors.model)
                tx.discard()
            assert [m.id for m, _ in inside] == ["m_draft"]
            assert third._vector_caches, "the write session built the cache"  # type: ignore[attr-defined]
            assert "m_draft" not in [m for m, _ in nearest(writer, "A cheetah sprints.", limit=5)]
            cached_is_exact_for(writer)
        finally:
            third.close()
    finally:
        here.close()
        there.close()


@needs_postgres
def test_a_role_that_may_not_create_pgvector_is_told_what_to_run() -> None:
    """pgvector is not a trusted extension: an ordinary owner's first start must say what
    an administrator runs, not fail as a bug, and leave the database unmigrated."""
    from palimpsest.domain.errors import ValidationError

    assert POSTGRES_URL
    tag = uuid.uuid4().hex[:10]
    role, name = f"vectors_app_{tag}", f"vectors_own_{tag}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'app'".encode())
        admin.execute(f"CREATE DATABASE {name} OWNER {role}".encode())
    server = POSTGRES_URL.split("@", 1)[1].rsplit("/", 1)[0]
    try:
        with pytest.raises(ValidationError, match=r"CREATE EXTENSION vector;"):
            open_store(f"postgresql://{role}:app@{server}/{name}")
        admin_url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(admin_url, autocommit=True) as admin:
            assert admin.execute("SELECT to_regclass('memory_versions')").fetchone() == (None,)
            admin.execute("CREATE EXTENSION vector")
        opened = open_store(f"postgresql://{role}:app@{server}/{name}")
        opened.close()
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())
            admin.execute(f"DROP ROLE IF EXISTS {role}".encode())


def test_the_exact_sqlite_search_gives_the_same_answer_a_chunk_at_a_time(
    tmp_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exact search reads the vectors a chunk at a time (memory stays flat at 100k)."""
    from palimpsest.store import sqlite as sqlite_store

    lite = open_store(str(tmp_path / "chunks.db"))
    try:
        service = _corpus_service(lite, "default", minilm)
        whole = {q: nearest(service, q, limit=5) for q in [*QUESTIONS, "weather"]}
        monkeypatch.setattr(sqlite_store, "LOAD_CHUNK", 3)
        for question, answer in whole.items():
            chunked = nearest(service, question, limit=5)
            # The corpus is there twice: equal vectors may swap places by a last-bit difference
            texts = [_text(service, m) for m, _ in chunked]
            assert texts == [_text(service, m) for m, _ in answer], question
            assert [s for _, s in chunked] == pytest.approx([s for _, s in answer], abs=1e-6)
    finally:
        lite.close()


def test_a_small_sqlite_store_answers_filtered_questions_from_the_copy_exactly(
    tmp_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below EXACT_BELOW the copy holds the float32 vectors: a filtered question reads the
    passing rowids from SQL and no vector blob, gives the column's exact answer, and
    follows another process's writes; a write session still finds its own versions."""
    from palimpsest.store import sqlite as sqlite_store
    from palimpsest.store import vector_search

    path = str(tmp_path / "small.db")
    here, there = open_store(path), open_store(path)
    try:
        mine = Service(here, embedder=minilm)
        theirs = Service(there, embedder=minilm)
        ids = fill(theirs)
        cached_is_exact_for(mine)  # builds the copy
        read: list[int] = []
        real = vector_search.from_blobs

        def counted(blobs: list[bytes], dimensions: int) -> np.ndarray:
            read.append(len(blobs))
            return real(blobs, dimensions)

        monkeypatch.setattr(vector_search, "from_blobs", counted)
        notebook = _notebook_id(mine)
        assert nearest(mine, "feline", limit=1, notebook_ids=(notebook,))[0][0] == ids["cat"]
        assert nearest(mine, "feline", limit=1, kinds=("fact",))[0][0] == ids["cat"]
        assert read == [], "a filtered question on a small store read vector blobs"
        monkeypatch.setattr(vector_search, "from_blobs", real)
        kitten = theirs.remember(notebook="pets", kind="fact", text="A kitten purrs.")["id"]
        assert nearest(mine, "feline", limit=1, kinds=("fact",))[0][0] == kitten
        theirs.revise(id=ids["cat"], status="retracted")
        retired = nearest(mine, "feline", limit=3, statuses=("retracted",))
        assert [m for m, _ in retired] == [ids["cat"]]
        assert ids["cat"] not in [m for m, _ in nearest(mine, "feline", limit=8, kinds=("fact",))]
        cached_is_exact_for(mine)
        assert here._vector_caches, "the copy was kept for a small store"  # type: ignore[attr-defined]
        cache = next(iter(here._vector_caches.values()))  # type: ignore[attr-defined]
        assert cache.table.exact is not None and len(cache) <= sqlite_store.EXACT_BELOW
        # A write session's own uncommitted version passes a filter and is found.
        draft = Memory(id="m_draft", workspace="default", notebook_id=notebook, kind="fact",
                       text="A cheetah sprints.", version=1, owner=None,
                       recorded_at="2026-01-01T00:00:00Z", author="user:a")  # fmt: skip
        vector = mine.vectors.vector_of("A cheetah sprints.")
        assert vector is not None
        with here.write("default") as tx:
            seq = tx.append_event(Event(0, "op_x", "2026-01-01T00:00:00Z", "user:a", "remember",
                                        "memory", draft.id, notebook, 1, ("created",)))  # fmt: skip
            tx.put_memory(draft, seq)
            tx.put_vector(draft.id, seq, vector, mine.vectors.model)
            query = SearchQuery(text="", limit=1, kinds=("fact",))
            inside = tx.nearest(vector, query, mine.vectors.model)
            tx.discard()
        assert [m.id for m, _ in inside] == ["m_draft"]
        assert "m_draft" not in [m for m, _ in nearest(mine, "A cheetah sprints.", limit=5)]
    finally:
        here.close()
        there.close()


BACKUP = "The backup job runs nightly at two."


def test_one_fact_filed_in_many_notebooks_comes_back_newest_first_now_and_as_of(
    meaning: Service,
) -> None:
    """Equal scores go to the newest on both stores, from the copy of the vectors and from
    an exact search of a past state alike (a BLAS product once gave copies of one vector
    scores apart in the last bit, in an order of their own)."""
    meaning.change_settings(changes={"recall.weight.context": 0, "recall.weight.episode": 0},
                            because="only the vectors' order")  # fmt: skip
    filed = []
    for n in range(12):
        for extra in range(n % 4):
            meaning.remember(notebook="filler", kind="fact", text=f"Filler {n} {extra}: tea.")
        again = meaning.remember(notebook=f"nb{n:02d}", kind="fact", text=BACKUP)
        filed.append(again["id"])
    meaning.remember(notebook="later", kind="note", text="Something else entirely.")
    then = meaning.inspect(id=filed[-1])["memory"]["recorded_at"]
    for as_of in (None, then):
        hits = meaning.recall(query="when does the backup run", limit=12, as_of=as_of)["hits"]
        assert [h["id"] for h in hits if h["id"] in filed] == filed[::-1], as_of
