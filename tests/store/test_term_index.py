"""SQLite ranks full text's matches on its in-memory term index (store/term_index.py)
exactly as FTS5 ranks them, through writes, revisions, forgets and other connections.

A write transaction never uses the index (its own rows are not in it), so the same search
in a write transaction that writes nothing is FTS5's answer for the same state.
"""

from __future__ import annotations

import itertools
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.store import SearchQuery, Store, bm25, open_store
from palimpsest.store import sqlite as sqlite_store
from palimpsest.store.term_index import TermIndex

WORDS = "alpha beta gamma delta omega river stone cloud".split()
OTHER = "red green blue".split()  # tags: never a query word, so counts stay whole numbers


def searched(store: Store, query: SearchQuery, in_write: bool = False) -> list[tuple[str, float]]:
    opened = store.write("default") if in_write else store.read("default")
    with opened as tx:
        return [(found.id, round(score, 9)) for found, score in tx.search_found(query)]


def both(store: Store, query: SearchQuery) -> tuple[list[tuple[str, float]], ...]:
    """The index's answer (a read) and FTS5's (a write that writes nothing)."""
    return searched(store, query), searched(store, query, in_write=True)


def text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 9)))


@pytest.fixture
def small_cuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cuts small enough that a few dozen memories pass them: the window of newest
    matches, the widening when too few pass, the depth re-scored. CANDIDATES stays above
    every corpus: at its cut FTS5 orders a tie as it likes."""
    monkeypatch.setattr(sqlite_store, "WINDOW", 7)
    monkeypatch.setattr(bm25, "DEPTH", 5)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(seed=st.integers(0, 10**6), filed=st.integers(5, 40))
def test_the_index_ranks_every_search_as_fts5_does(
    tmp_path_factory: pytest.TempPathFactory, small_cuts: None, seed: int, filed: int
) -> None:
    rng = random.Random(seed)
    store = open_store(str(tmp_path_factory.mktemp("index") / "palimpsest.db"))
    service = Service(store, embedder=NullEmbedder())
    try:
        ids = []
        for n in range(filed):
            kind = rng.choice(["fact", "note", "decision"])
            tags = {"tags": rng.sample(OTHER, rng.randint(1, 2))} if rng.random() < 0.5 else {}
            notebook = f"nb{n % 3}"
            filed_id = service.remember(notebook=notebook, kind=kind, text=text(rng), **tags)["id"]
            if filed_id not in ids:  # not the same text again (a duplicate is not filed twice)
                ids.append(filed_id)
            if rng.random() < 0.3:  # a past version stays in the index, as in FTS5
                service.revise(id=rng.choice(ids), text=text(rng), because="a test revision")
            if rng.random() < 0.1:
                service.forget(id=ids.pop(rng.randrange(len(ids))), because="a test forget")
            if rng.random() < 0.3:
                query = SearchQuery(
                    text=" ".join(rng.sample(WORDS, rng.randint(1, 4))),
                    limit=rng.choice([1, 3, 10]),
                    kinds=tuple(rng.sample(["fact", "note", "decision"], rng.randint(0, 2))),
                    statuses=rng.choice([("active",), ("active", "superseded")]),
                    beside=rng.random() < 0.5,
                )
                index, fts5 = both(store, query)
                assert index == fts5, query
    finally:
        store.close()


@pytest.fixture
def sqlite(db_path: Path) -> Store:
    opened = open_store(str(db_path))
    yield opened
    opened.close()


def test_another_connections_writes_are_found_and_an_older_snapshot_keeps_its_own(
    sqlite: Store, db_path: Path
) -> None:
    service = Service(sqlite, embedder=NullEmbedder())
    first = service.remember(notebook="n", kind="note", text="alpha beta")["id"]
    for other_words in ("gamma", "delta", "omega"):  # so that "alpha" weighs something
        service.remember(notebook="n", kind="note", text=other_words)
    query = SearchQuery(text="alpha", limit=10)
    assert [i for i, _ in searched(sqlite, query)] == [first]  # the index is built
    other = open_store(str(db_path))  # another process's writes
    try:
        with sqlite.read("default") as before:  # a snapshot taken before the next write
            then = before.search_found(query)
            assert [found.id for found, _ in then] == [first]
            second = Service(other, embedder=NullEmbedder()).remember(
                notebook="n", kind="note", text="alpha alpha"
            )["id"]
            with ThreadPoolExecutor(1) as thread:  # another snapshot, on its own connection
                now = thread.submit(searched, sqlite, query).result()
            assert [i for i, _ in now] == [second, first]  # the index caught up
            # the older snapshot, now behind the index, is ranked as it stood (its scores
            # too: one version, not two)
            assert before.search_found(query) == then
        index, fts5 = both(sqlite, query)
        assert index == fts5
    finally:
        other.close()


def test_a_forgotten_version_leaves_the_index_with_its_words(sqlite: Store) -> None:
    service = Service(sqlite, embedder=NullEmbedder())
    kept = service.remember(notebook="n", kind="note", text="alpha gamma")["id"]
    gone = service.remember(notebook="n", kind="note", text="alpha alpha omega")["id"]
    query = SearchQuery(text="alpha omega", limit=10)
    assert [i for i, _ in searched(sqlite, query)] == [gone, kept]
    service.forget(id=gone, because="a test: its words must leave the index too")
    index, fts5 = both(sqlite, query)
    assert [i for i, _ in index] == [kept]
    assert index == fts5  # the figures too: one version fewer, its length out of the total


def test_rows_added_one_at_a_time_make_the_index_built_at_once_and_a_view_keeps_its_rows() -> None:
    rng = random.Random(5)
    rows = [(rowid, bm25.stored_counts({"text": text(rng), "title": None, "why": None,
                                         "tags_text": None, "notebook_id": "nb_1"}))
            for rowid in range(1, 301)]  # fmt: skip
    counted = [(rowid, str(c["search_counts"]), int(c["search_length"])) for rowid, c in rows]
    at_once, grown = TermIndex(generation=0), TermIndex(generation=0)
    at_once.add(counted, seq=300)
    grown.add(counted[:10], seq=10)
    early = grown.view()
    held = {term: early.posting(term) for term in WORDS}
    for at in range(10, 300):
        grown.add(counted[at : at + 1], seq=at + 1)
    built, kept = at_once.view(), grown.view()
    assert (built.size, built.total) == (kept.size, kept.total) == (300, sum(c[2] for c in counted))
    for term in WORDS:
        assert np.array_equal(built.posting(term).rows, kept.posting(term).rows)
        assert np.array_equal(built.posting(term).counts, kept.posting(term).counts)
        assert np.array_equal(early.posting(term).rows, held[term].rows)  # unchanged under it
    assert early.size == 10
    terms = ["alpha", "omega"]
    stats = built.stats(terms)
    ranked = built.ranked(built.matching(terms, every=False), terms, stats, cap=None)
    again = kept.ranked(kept.matching(terms, every=False), terms, kept.stats(terms), None)
    assert all(np.array_equal(a, b) for a, b in zip(ranked, again, strict=True))
    # best first, the newest first on a tie
    pairs = list(zip(ranked.scores.tolist(), ranked.rowids.tolist(), strict=True))
    assert all(a > b for a, b in itertools.pairwise(pairs))


def test_the_index_scores_each_match_as_fts5s_bm25_does(sqlite: Store) -> None:
    rng = random.Random(9)
    service = Service(sqlite, embedder=NullEmbedder())
    for n in range(60):
        service.remember(notebook=f"nb{n % 4}", kind="note", text=text(rng),
                         title=" ".join(rng.sample(WORDS, 2)), why=text(rng))  # fmt: skip
    terms = ["alpha", "omega", "river"]
    with sqlite.read("default") as tx:
        expression = "{text title why tags_text} : (" + " OR ".join(terms) + ")"
        matched = "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ?"
        fts5 = {row["rowid"]: -row["rank"] for row in tx._rows(matched, [expression])}
        view = tx._term_view()
        assert view is not None
        ranked = view.ranked(view.matching(terms, every=False), terms, view.stats(terms), None)
    assert set(ranked.rowids.tolist()) == set(fts5)
    for rowid, score in zip(ranked.rowids.tolist(), ranked.scores.tolist(), strict=True):
        assert score == pytest.approx(fts5[rowid], rel=1e-12)


def test_counts_are_read_back_exactly_packed_or_not() -> None:
    """A first load keeps counts in fifths where that is exact (the column weights make
    them so); any other count is kept as it is."""
    index = TermIndex(generation=0)
    index.add([(1, '{"alpha": 0.3, "beta": 1.4}', 3), (2, '{"alpha": 2.0, "beta": 0.6}', 2)], 2)
    index.add([(3, '{"beta": 0.4}', 1)], seq=3)
    view = index.view()
    assert view.posting("alpha").counts.tolist() == [0.3, 2.0]
    assert view.posting("beta").counts.tolist() == [1.4, 0.6, 0.4]
    assert view.posting("beta").rows.tolist() == [0, 1, 2]


def test_words_of_any_script_score_alike_on_the_index_and_fts5(sqlite: Store) -> None:
    """Term counts are kept as JSON with non-ASCII keys escaped: FTS5's path read them as 0
    for such a word (SQLite's json_extract did not match the escaped key)."""
    service = Service(sqlite, embedder=NullEmbedder())
    for text_ in ("東京 東京 大阪", "東京 京都 奈良 神戸", "Москва Москва", "other words"):
        service.remember(notebook="n", kind="note", text=text_)
    for words in ("東京", "москва", "東京 神戸"):
        index, fts5 = both(sqlite, SearchQuery(text=words, limit=10, beside=True))
        assert index == fts5 and index and all(score > 0 for _, score in index), words


def test_a_snapshot_from_before_a_forget_leaves_the_index_alone(sqlite: Store) -> None:
    """It searches with FTS5 instead of loading an index of its own generation (which the
    next current search would load again, and so on)."""
    service = Service(sqlite, embedder=NullEmbedder())
    kept = service.remember(notebook="n", kind="note", text="alpha beta")["id"]
    gone = service.remember(notebook="n", kind="note", text="alpha gamma")["id"]
    query = SearchQuery(text="alpha", limit=10)
    with sqlite.read("default") as before:
        assert {found.id for found, _ in before.search_found(query)} == {kept, gone}
        with ThreadPoolExecutor(1) as thread:  # the forget and a current search, elsewhere
            thread.submit(service.forget, id=gone, because="a test forget").result()
            assert [i for i, _ in thread.submit(searched, sqlite, query).result()] == [kept]
        current = sqlite._term_indexes["default"]  # type: ignore[attr-defined]
        assert {found.id for found, _ in before.search_found(query)} == {kept, gone}
        assert sqlite._term_indexes["default"] is current  # type: ignore[attr-defined]


def test_more_ties_than_candidates_give_the_newest_on_every_store(
    store: Store, workspace: str
) -> None:
    """600 memories scoring alike for one word: the newest first, as every tie is ranked
    (FTS5's own cut at CANDIDATES kept any 500 of them)."""
    service = Service(store, workspace=workspace, embedder=NullEmbedder())
    ids = []
    for first in (0, 300):
        items = [{"notebook": "n", "kind": "note", "text": f"alpha p{n:04d}"}
                 for n in range(first, first + 300)]  # fmt: skip
        ids += [result["id"] for result in service.remember(items=items)["results"]]
    newest = ids[::-1][:5]
    with store.read(workspace) as tx:
        found = tx.search_found(SearchQuery(text="alpha", limit=5))
    assert [memory.id for memory, _ in found] == newest
