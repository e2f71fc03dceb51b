"""The SQLite store's in-memory copy of the vectors, grown one filed memory at a time.

Filing a memory adds its row into room kept after the rows held, instead of copying the
whole copy (store/vector_cache.py): the grown copy must be the one built at once, and a
table a reader holds must not change under it while rows are added after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from palimpsest.service import Service
from palimpsest.store import SearchQuery, open_store
from palimpsest.store.vector_cache import Table, VectorCache

from .test_pg_attack import EMBEDDER as WORDS
from .test_pg_attack import MODEL

DIMENSIONS = 384


def rows_of(first: int, count: int) -> list[dict[str, Any]]:
    return [
        {"notebook_id": f"nb_{i % 3}", "kind": ("fact", "note")[i % 2], "status": "active",
         "scope": None, "happened": f"2026-12-01T00:00:{i % 60:02d}.{i:06d}Z",
         "expires_at": None, "tags": '["a", "b"]' if i % 4 == 0 else "[]"}
        for i in range(first, first + count)
    ]  # fmt: skip


def part(cache: VectorCache, vectors: np.ndarray, first: int, count: int) -> Table:
    rowids = np.arange(first, first + count, dtype=np.int64)
    facets = cache.facets(rowids, rows_of(first, count))
    return cache.encoded(rowids, vectors[first : first + count], facets)


def same(one: Table, other: Table) -> bool:
    pairs = [*zip(one[:4], other[:4], strict=True), *zip(one.facets, other.facets, strict=True)]
    pairs.append((one.exact, other.exact))
    return all(
        (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
        for a, b in pairs
    )


def test_rows_added_one_at_a_time_make_the_copy_built_at_once() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((3_000, DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    centre = vectors.mean(axis=0)

    def cache(exact_up_to: int) -> VectorCache:
        return VectorCache(DIMENSIONS, centre, seq=0, generation=0, exact_up_to=exact_up_to)

    for exact_up_to in (10_000, 2_000):  # the floats kept throughout, or dropped on the way
        at_once, grown = cache(exact_up_to), cache(exact_up_to)
        at_once.add(part(at_once, vectors, 0, 3_000))
        grown.add(part(grown, vectors, 0, 500))  # a first load, then filings one by one
        held = grown.table
        copy_of_held = Table(*(np.copy(a) if isinstance(a, np.ndarray) else a for a in held[:5]),
                             held.facets._make(np.copy(a) for a in held.facets))  # fmt: skip
        for first in range(500, 3_000, 7):
            grown.add(part(grown, vectors, first, min(7, 3_000 - first)))
        assert same(grown.table, at_once.table), exact_up_to
        assert same(held, copy_of_held)  # what a reader held is as it was


@pytest.mark.parametrize("rows", [12, 30, 31, 400])
def test_the_same_vector_filed_many_times_scores_the_same_and_comes_newest_first(
    rows: int,
) -> None:
    """One fact filed in several notebooks: each copy must score alike wherever its row
    sits, so that ties go to the newest as on PostgreSQL (a BLAS product sums some rows of
    a small table in blocks of other shapes and gave copies another last bit)."""
    rng = np.random.default_rng(rows)
    for _ in range(20):
        vectors = rng.standard_normal((rows, DIMENSIONS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        copies = sorted(rng.choice(rows, size=6, replace=False).tolist())
        vectors[copies] = vectors[copies[0]]
        cache = VectorCache(DIMENSIONS, vectors.mean(axis=0), seq=0, generation=0,
                            exact_up_to=1_000)  # fmt: skip
        cache.add(part(cache, vectors, 0, rows))
        query = rng.standard_normal(DIMENSIONS).astype(np.float32)
        found = cache.candidates(cache.table, query / np.linalg.norm(query), rows, rows, None)
        assert found.exact is not None
        scored = [(rowid, score) for rowid, score in found.exact if rowid in copies]
        assert len({score for _, score in scored}) == 1
        assert [rowid for rowid, _ in scored] == sorted(copies, reverse=True)


def test_a_snapshot_keeps_its_rows_when_another_thread_catches_the_cache_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read checks that the cache stands at its snapshot, then searches it: another
    thread's newer read catching the cache up in between must not take away the rows its
    snapshot still holds current (the version a later revise ended)."""
    from concurrent.futures import ThreadPoolExecutor

    from palimpsest.embed import NullEmbedder
    from palimpsest.store import sqlite as sqlite_store
    from palimpsest.store.sqlite import SqliteSession

    monkeypatch.setattr(sqlite_store, "EXACT_BELOW", 5)
    store = open_store(str(tmp_path / "race.db"))
    service = Service(store, embedder=WORDS)
    target = service.remember(notebook="n", kind="fact", text="alpha beta gamma")["id"]
    for n in range(8):
        service.remember(notebook="n", kind="fact", text=f"delta omega river {n}")
    vector = WORDS.embed(["alpha beta gamma"])[0]
    query = SearchQuery(text="", limit=3, kinds=("fact",))

    def nearest_now() -> list[str]:
        with store.read("default") as tx:
            return [f.id for f, _ in tx.nearest_found(vector, query, MODEL)]

    assert nearest_now()[0] == target
    original = SqliteSession._nearest_cached
    interleaved = []

    def caught_up_meanwhile(self: SqliteSession, *args: Any, **kwargs: Any) -> Any:
        if not interleaved:  # once: another thread's newer read catches the cache up first
            interleaved.append(True)
            with ThreadPoolExecutor(1) as thread:
                thread.submit(nearest_now).result()
        return original(self, *args, **kwargs)

    # Revised by a writer that embeds nothing, so no read of its own catches the cache up.
    writer = Service(store, embedder=NullEmbedder())
    with store.read("default") as older, ThreadPoolExecutor(1) as writing:
        assert older.last_event() is not None  # the snapshot begins at its first read
        # on a connection of its own: this thread's holds the older snapshot open
        writing.submit(writer.revise, id=target, text="river stone cloud").result()
        monkeypatch.setattr(SqliteSession, "_nearest_cached", caught_up_meanwhile)
        found = [f.id for f, _ in older.nearest_found(vector, query, MODEL)]
    assert interleaved and found[0] == target
    store.close()
