"""PostgreSQL's nearest vectors under a filter, ranked on an in-memory copy as SQLite's are.

A filter that narrows the memories (a notebook, kind, tag, scope, time range) kept the
search exact: every passing row's vector read and scored in SQL, some 8 us a row, so a
notebook of 2,000 memories cost 17 ms at 100,000. Each process now holds SQLite's copy
(store/vector_cache.py: sign codes, int8 vectors and each row's filter facets) of a large
workspace's current vectors, one per workspace and model, and picks the rows passing
the filters in numpy; the copy's best candidates are then scored exactly from the column
under the same filters in SQL, widened while too few pass, as SQLite does. The answer is
exact among the candidates, which are approximate as the HNSW index's are.

The copy follows the workspace's events as the term copy does (pg_indexed): a read's
snapshot holds every event up to the workspace's last, so the versions filed since the
copy's last event are added, those they ended dropped, and a forget or reindex (which
moves the vector generation) starts it over. A write, a past state and a snapshot older
than the copy search as before (pg_vectors).
"""

from __future__ import annotations

import itertools
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from . import Found, SearchQuery
from .pg_vectors import literal
from .rows import FOUND_COLUMNS, Row, found_from_row
from .vector_cache import (
    ADDED_SQL,
    CURRENT_SQL,
    ENDED_SQL,
    Mask,
    RowIds,
    Table,
    VectorCache,
    current_copy,
)
from .vector_search import Vectors

# As SQLite's (sqlite.py): from this many versions on a workspace's copy is kept; the
# CANDIDATE_VECTORS nearest by their signs are ranked by their int8 copies and the
# RESCORED best of those scored exactly under the filters (widened 8 times while short).
EXACT_BELOW = 20_000
CANDIDATE_VECTORS = 4_000
RESCORED = 100
LOAD_CHUNK = 5_000
# The vector in pgvector's binary form: int16 dimensions, int16 unused, big-endian floats.
_HEADER = 4

VectorCaches = dict[tuple[str, str], VectorCache]


def _vectors(blobs: list[bytes], dimensions: int) -> Vectors:
    width = _HEADER + 4 * dimensions
    joined = b"".join(blob if len(blob) == width else bytes(width) for blob in blobs)
    matrix = np.frombuffer(joined, dtype=">f4").reshape(len(blobs), -1)[:, _HEADER // 4 :]
    return matrix.astype(np.float32)


class CachedVectors:
    """The vector-copy part of a PostgreSQL session (mixed into `PostgresSession`)."""

    workspace: str
    vector_caches: VectorCaches | None  # None in a write: its own rows are not in

    @abstractmethod
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def _cursor(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Row]: ...

    @abstractmethod
    def snapshot_state(self) -> tuple[int, int]: ...

    def vector_cache(
        self, model: str, dimensions: int, versions: int
    ) -> tuple[VectorCache, Table] | None:
        """The workspace's copy and its table as this snapshot sees it, brought up to its
        last event; None where SQL searches instead (a write, a small workspace, an older
        snapshot). The table is taken under the copy's lock with the check of its event:
        another read catching the copy up later drops the versions its events ended, which
        this snapshot still holds current."""
        if self.vector_caches is None or versions < EXACT_BELOW:
            return None
        seq, generation = self.snapshot_state()
        return current_copy(self.vector_caches, (self.workspace, model), seq, generation,
                            dimensions, lambda: self._built(model, dimensions, seq, generation),
                            lambda cache: self._caught_up(cache, model, seq))  # fmt: skip

    def _built(self, model: str, dimensions: int, seq: int, generation: int) -> VectorCache | None:
        rows = self._cursor(CURRENT_SQL.format(vector="vector_send(mv.vector)"),
                            (self.workspace, seq, seq, model))  # fmt: skip
        cache: VectorCache | None = None
        parts: list[Table] = []  # a chunk at a time: the floats of all are never held
        while chunk := list(itertools.islice(rows, LOAD_CHUNK)):
            matrix = _vectors([bytes(r["vector"]) for r in chunk], dimensions)
            if cache is None:  # the first chunk's mean centres the signs of all
                cache = VectorCache(dimensions, matrix.mean(axis=0), seq, generation)
                cache.table = cache.table._replace(exact=None)
            ids = np.fromiter((r["rowid"] for r in chunk), dtype=np.int64, count=len(chunk))
            parts.append(cache.encoded(ids, matrix, cache.facets(ids, chunk)))
        if cache is not None:
            cache.add(*parts)
        return cache

    def _caught_up(self, cache: VectorCache, model: str, seq: int) -> None:
        """Add the versions filed after the copy's last event up to `seq`, and drop those
        they ended."""
        added = self._rows(ADDED_SQL.format(vector="vector_send(mv.vector)"),
                           (self.workspace, cache.seq, seq, seq, model))  # fmt: skip
        ended = self._rows(ENDED_SQL, (self.workspace, cache.seq, seq))
        dimensions = cache.dimensions
        cache.caught_up(seq, added, ended, lambda b: _vectors([bytes(x) for x in b], dimensions))

    def failing(self, query: SearchQuery) -> Callable[[RowIds], Mask] | None:
        """Which of some version rows a copy of the workspace's vectors knows to fail the
        filters of `query` (None: no copy). A version row never changes what the filters
        read, so a copy of any age may say so; a row it lacks is not said to fail."""
        caches = [c for (workspace, _), c in (self.vector_caches or {}).items()
                  if workspace == self.workspace]  # fmt: skip
        if not caches:
            return None
        cache = caches[0]
        table = cache.table
        mask = cache.passing(table, query)
        if mask is None or not len(table.rowids):
            return None

        def fails(rowids: RowIds) -> Mask:
            at = np.minimum(np.searchsorted(table.rowids, rowids), len(table.rowids) - 1)
            known: Mask = (table.rowids[at] == rowids) & ~mask[at]
            return known

        return fails

    def nearest_cached(
        self, cache: VectorCache, table: Table, vector: Vectors, query: SearchQuery, model: str,
        where: list[str], args: list[Any],
    ) -> list[tuple[Found, float]]:  # fmt: skip
        """The copy's best candidates among the rows passing the filters (read from its
        facets, `table` as `vector_cache` gave it), scored exactly from the column under
        the same filters in SQL, widened until enough pass. The SQL filters have the last
        word."""
        mask = cache.passing(table, query)
        limit = query.limit
        count, keep = max(CANDIDATE_VECTORS, limit * 40), max(RESCORED, limit * 4)
        value = literal(vector)
        while True:
            found = cache.candidates(table, vector, count, keep, mask)
            rows = self._rows(
                f"SELECT {FOUND_COLUMNS}, 1 - (mv.vector <=> ?::vector) AS score "
                "FROM unnest(CAST(? AS bigint[])) AS c(id) "
                "JOIN memory_versions v ON v.rowid = c.id "
                f"JOIN memory_vectors mv ON mv.version_rowid = v.rowid WHERE {' AND '.join(where)} "
                "AND mv.model = ? AND vector_dims(mv.vector) = ? "
                "ORDER BY mv.vector <=> ?::vector, v.rowid DESC LIMIT ?",
                [value, found.rowids.tolist(), *args, model, len(vector), value, limit],
            )
            if len(rows) >= limit or found.every:
                return [(found_from_row(row), float(row["score"])) for row in rows]
            count, keep = count * 8, keep * 8
