"""Recall by meaning on SQLite: float32 blobs ranked in numpy, exactly, or for a large
workspace through the sign-code cache (store/vector_cache.py) and then exactly."""

from __future__ import annotations

import itertools
import json
import sqlite3
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from .rows import FOUND_COLUMNS, Row
from .values import Found, SearchQuery
from .vector_rows import VectorRows

# numpy and the modules that search with it are imported where they are first used: a
# process that never searches by meaning never loads them.
if TYPE_CHECKING:
    from .vector_cache import Table, VectorCache
    from .vector_search import Vectors

# Vectors: below this many in a workspace every search is exact; from it on, the
# unfiltered question goes through the cache (store/vector_cache.py): the CANDIDATE_VECTORS
# nearest by their signs are ranked by their int8 copies, and the RESCORED best of those
# are scored exactly under the filters (both widened 8 times while too few pass).
EXACT_BELOW = 20_000
CANDIDATE_VECTORS = 4_000
RESCORED = 100
LOAD_CHUNK = 5_000  # vectors read at a time when a cache is built


class SqliteVectors(VectorRows):
    """The nearest vectors of a SQLite session (mixed into `SqliteSession`)."""

    conn: sqlite3.Connection
    _vector_caches: dict[tuple[str, str], VectorCache] | None
    # A write session sees its own uncommitted rows, which a rollback may undo: it fills a
    # cache only from the state committed before it began (`_committed`).
    _writing: bool
    _committed: tuple[int, int]  # (last event, vector generation)

    @abstractmethod
    def _last_seq(self) -> int:
        """The store's last event (every workspace's)."""

    def nearest_found(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Found, float]]:
        if query.notebook_ids == () or query.limit <= 0:
            return []
        vector = vector.astype("float32", copy=False)
        where, args = self.filters(query)
        copy = self._vector_cache(model, len(vector)) if query.at_seq is None else None
        if copy is not None:
            ids: dict[int, str] = {}  # the memory ids of the rows it read: every one it gives
            best = self._nearest_cached(*copy, vector, query, where, args, model, ids)
            return [(Found(ids[rowid], rowid), score) for rowid, score in best]
        return self._found(self._nearest_exact(vector, where, args, query.limit, model))

    def _nearest_exact(
        self, vector: Vectors, where: list[str], args: list[Any], limit: int, model: str
    ) -> list[tuple[int, float]]:
        """Every matching float32 blob read from the column and scored (a past state)."""
        from . import vector_search

        cursor = self.conn.execute(
            "SELECT v.rowid AS rowid, mv.vector AS vector FROM memory_versions v "
            f"JOIN memory_vectors mv ON mv.version_rowid = v.rowid WHERE {' AND '.join(where)} "
            "AND mv.model = ?",
            [*args, model],
        )
        # A chunk at a time: the scores of every row are kept, never all their vectors.
        best: list[tuple[int, float]] = []
        while chunk := cursor.fetchmany(LOAD_CHUNK):
            found = self._scored(chunk, vector, limit)
            best = vector_search.merged(best, found)[:limit]
        return best

    @staticmethod
    def _scored(rows: list[Row], vector: Vectors, limit: int) -> list[tuple[int, float]]:
        """The best `limit` of (rowid, vector) rows, scored exactly."""
        if not rows:
            return []
        import numpy as np

        from . import vector_search

        matrix = vector_search.from_blobs([row["vector"] for row in rows], len(vector))
        rowids = np.fromiter((row["rowid"] for row in rows), dtype=np.int64, count=len(rows))
        return vector_search.ranked(vector_search.similarities(matrix, vector), rowids, limit)

    # -- the sign-code cache of a large workspace (store/vector_cache.py) ---------------

    def _vector_cache(self, model: str, dimensions: int) -> tuple[VectorCache, Table] | None:
        """The workspace's cache and its table as this snapshot sees them (vector_cache's
        `current_copy`); None while it is small, or searched exactly."""
        if self._vector_caches is None:
            return None
        from .vector_cache import current_copy

        if self._writing:
            seq, generation = self._committed
            if self.vector_generation() != generation:
                return None  # this transaction forgot or reindexed: search exactly
        else:
            seq, generation = self._last_seq(), self.vector_generation()

        def built() -> VectorCache | None:
            return self._built_cache(model, dimensions, seq, generation)

        def caught_up(cache: VectorCache) -> None:
            self._catch_up(cache, model, seq)

        key = (self.workspace, model)
        return current_copy(self._vector_caches, key, seq, generation, dimensions, built,
                            caught_up)  # fmt: skip

    def _built_cache(
        self, model: str, dimensions: int, seq: int, generation: int
    ) -> VectorCache | None:
        import numpy as np

        from . import vector_search
        from .vector_cache import CURRENT_SQL, VectorCache

        counted = self._row(
            "SELECT count(*) AS n FROM memory_vectors WHERE workspace = ? AND model = ?",
            (self.workspace, model),
        )
        if counted is None or int(counted["n"]) == 0:
            return None
        large = int(counted["n"]) >= EXACT_BELOW
        cache: VectorCache | None = None
        rows = self._cursor(CURRENT_SQL.format(vector="mv.vector"),
                            (self.workspace, seq, seq, model))  # fmt: skip
        parts: list[Table] = []  # a chunk at a time: the floats of all are never held
        while chunk := list(itertools.islice(rows, LOAD_CHUNK)):
            matrix = vector_search.from_blobs([r["vector"] for r in chunk], dimensions)
            if cache is None:  # the first chunk's mean centres the signs of all
                cache = VectorCache(dimensions, matrix.mean(axis=0), seq, generation,
                                    EXACT_BELOW)  # fmt: skip
                if large:
                    cache.table = cache.table._replace(exact=None)
            ids = np.fromiter((r["rowid"] for r in chunk), dtype=np.int64, count=len(chunk))
            parts.append(cache.encoded(ids, matrix, cache.facets(ids, chunk)))
        if cache is not None:
            cache.add(*parts)
        return cache

    def _catch_up(self, cache: VectorCache, model: str, seq: int) -> None:
        """Add the versions written after the cache's last event up to event `seq`, and
        drop those they ended (as they stood at `seq`: a write session's own are not)."""
        from . import vector_search
        from .vector_cache import ADDED_SQL, ENDED_SQL

        added = self._rows(ADDED_SQL.format(vector="mv.vector"),
                           (self.workspace, cache.seq, seq, seq, model))  # fmt: skip
        ended = self._rows(ENDED_SQL, (self.workspace, cache.seq, seq))
        dimensions = cache.dimensions
        cache.caught_up(seq, added, ended, lambda b: vector_search.from_blobs(b, dimensions))

    def _nearest_cached(
        self,
        cache: VectorCache,
        table: Table,
        vector: Vectors,
        query: SearchQuery,
        where: list[str],
        args: list[Any],
        model: str,
        ids: dict[int, str],
    ) -> list[tuple[int, float]]:
        """The copy's best candidates among the rows passing the filters (read from the
        copy's facets), scored exactly from the column under the same filters in SQL,
        widened until enough pass; versions newer than the copy (a write session's own)
        are scored too. The SQL filters have the last word: a version this transaction
        ended is still in the copy, and is left out there. Each row read puts its memory
        id in `ids`."""
        from . import vector_search

        mask = cache.passing(table, query) if vector_search.narrowed(query) else None
        conditions = " AND ".join(where)
        limit = query.limit
        count, keep = max(CANDIDATE_VECTORS, limit * 40), max(RESCORED, limit * 4)
        newer = self._rows(
            f"SELECT {FOUND_COLUMNS}, mv.vector AS vector FROM memory_versions v "
            "JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
            f"WHERE v.from_seq > ? AND {conditions} AND mv.model = ?",
            [cache.seq, *args, model],
        )
        ids.update((row["rowid"], row["memory_id"]) for row in newer)
        while True:
            found = cache.candidates(table, vector, count, keep, mask)
            listed = json.dumps(found.rowids.tolist())
            # CROSS JOIN: SQLite then walks the candidates and looks each row up, instead
            # of scanning the workspace for rows in the list.
            walk = "FROM json_each(?) AS c CROSS JOIN memory_versions v ON v.rowid = c.value"
            if found.exact is not None:  # scored in the copy: SQL only confirms the filters
                confirmed = f"SELECT {FOUND_COLUMNS} {walk} WHERE {conditions}"
                rows = self._rows(confirmed, [listed, *args])
                ids.update((row["rowid"], row["memory_id"]) for row in rows)
                best = [(rowid, score) for rowid, score in found.exact if rowid in ids]
            else:
                rows = self._rows(
                    f"SELECT {FOUND_COLUMNS}, mv.vector AS vector {walk} "
                    "JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
                    f"WHERE {conditions} AND mv.model = ?",
                    [listed, *args, model],
                )
                ids.update((row["rowid"], row["memory_id"]) for row in rows)
                best = self._scored(rows, vector, limit)
            if len(best) + len(newer) >= limit or found.every:
                new = [row for row in newer if row["rowid"] not in dict(best)]
                return vector_search.merged(best[:limit], self._scored(new, vector, limit))[:limit]
            count, keep = count * 8, keep * 8

    def _found(self, best: list[tuple[int, float]]) -> list[tuple[Found, float]]:
        """The version rows `best` names, with their memory ids, in its order."""
        if not best:
            return []
        rows = self._rows(
            f"SELECT {FOUND_COLUMNS} FROM memory_versions v "
            f"WHERE v.rowid IN ({', '.join('?' * len(best))})",
            [rowid for rowid, _ in best],
        )
        ids = {int(row["rowid"]): row["memory_id"] for row in rows}
        return [(Found(ids[rowid], rowid), score) for rowid, score in best]
