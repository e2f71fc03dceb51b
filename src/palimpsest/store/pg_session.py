"""A PostgreSQL session: the shared SQL (store/session.py) over one psycopg connection, with
full text as a tsvector the store writes and counts (pg_search, ranked on the in-memory
term counts by pg_indexed) and vectors through pgvector (pg_vectors) or, under a filter,
the in-memory copy (pg_vector_cache)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import psycopg

from . import bm25, pg_search, pg_vectors
from .pg_indexed import IndexedWords
from .pg_vector_cache import CachedVectors, VectorCaches
from .rows import Row, found_from_row
from .session import SqlSession
from .term_index import TermIndex
from .values import Found, SearchQuery
from .vector_search import Vectors, narrowed


class PostgresSession(SqlSession, IndexedWords, CachedVectors):
    """A workspace-bound view of the PostgreSQL store inside one transaction."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        workspace: str,
        term_indexes: dict[str, TermIndex] | None = None,  # none for a write: its rows are not in
        vector_caches: VectorCaches | None = None,  # the same
    ):
        super().__init__(workspace)
        self.conn = conn
        self.term_indexes = term_indexes
        self.vector_caches = vector_caches
        # What a read asks once, its snapshot never moving: the workspace's last event,
        # vector generation and versions with content; its settings.
        self._state: tuple[int, int, int] | None = None
        self._settings: dict[str, Any] | None = None
        self.generation_moved = False  # a forget or reindex: the copies start over

    def _next_vector_generation(self) -> None:
        self.generation_moved = True
        super()._next_vector_generation()

    def _read_state(self) -> tuple[int, int, int]:
        if self._state is None or self.term_indexes is None:  # a write moves them
            state = self._row(
                "SELECT (SELECT max(seq) FROM events WHERE workspace = ?) AS seq, "
                "(SELECT generation FROM vector_generations WHERE workspace = ?) AS generation, "
                "(SELECT versions FROM search_stats WHERE workspace = ?) AS versions",
                (self.workspace, self.workspace, self.workspace),
            )
            assert state is not None  # a SELECT of subqueries: always one row
            self._state = (
                int(state["seq"] or 0), int(state["generation"] or 0), int(state["versions"] or 0)
            )  # fmt: skip
        return self._state

    failing = CachedVectors.failing  # what full text's passes ask of the vector copy

    def snapshot_state(self) -> tuple[int, int]:
        """The workspace's last event and vector generation in this read's snapshot."""
        seq, generation, _ = self._read_state()
        return seq, generation

    def settings(self) -> dict[str, Any]:
        if self.term_indexes is None:  # a write may change them
            return super().settings()
        if self._settings is None:
            self._settings = super().settings()
        return dict(self._settings)

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        return self.conn.execute(_placeholders(sql), tuple(params)).fetchall()

    def _run(self, sql: str, params: Iterable[Any] = ()) -> None:
        self.conn.execute(_placeholders(sql), tuple(params))

    def _cursor(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Row]:
        with self.conn.cursor(name="palimpsest_scan") as cursor:
            cursor.execute(_placeholders(sql), tuple(params))
            yield from cursor

    def _tag_condition(self) -> str:
        return "(v.tags::jsonb @> jsonb_build_array(?::text))"

    # -- vectors: pgvector, see pg_vectors ---------------------------------------------

    VECTOR_OUT = "mv.vector::real[]"
    VECTOR_IN = "?::vector"

    def _vector_value(self, vector: Vectors) -> Any:
        return pg_vectors.literal(vector)

    def _vector_from(self, value: Any) -> Vectors:
        return np.asarray(value, dtype=np.float32)

    def nearest_found(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Found, float]]:
        if query.notebook_ids == () or query.limit <= 0:
            return []
        where, args = self.filters(query)
        versions = self._read_state()[2]
        copy = (
            self.vector_cache(model, len(vector), versions)
            if narrowed(query) and query.at_seq is None
            else None
        )
        if copy is not None:
            return self.nearest_cached(*copy, vector, query, model, where, args)
        if pg_vectors.use_index(query, len(vector), versions) or (
            pg_vectors.may_use_index(query, len(vector), versions)
            and pg_vectors.worth_the_index(self._estimated(where, args), query.limit, versions)
        ):
            if self.term_indexes is None:  # a write: a read set them as it began
                self.conn.execute("; ".join(pg_vectors.INDEX_SETTINGS).encode())
            sql, params = pg_vectors.indexed_sql(vector, model, where, args, query.limit)
            rows = self._rows(sql, params)
            if len(rows) >= query.limit or not narrowed(query):
                return [(found_from_row(row), float(row["score"])) for row in rows]
        sql, params = pg_vectors.exact_sql(vector, model, where, args, query.limit)
        return [(found_from_row(row), float(row["score"])) for row in self._rows(sql, params)]

    def _estimated(self, where: list[str], args: list[Any]) -> float:
        """How many rows the planner expects to pass `where` (alias v)."""
        row = self._row(*pg_vectors.estimate_sql(where, args))
        assert row is not None  # EXPLAIN answers one row
        return float(row["QUERY PLAN"][0]["Plan"]["Plan Rows"])

    # -- full text: see pg_search -------------------------------------------------------

    def _search_values(self, columns: dict[str, Any]) -> dict[str, Any]:
        return pg_search.search_values(columns)

    def _indexed(self, rowid: int, columns: Row) -> None:
        self._count_search(1, columns["search_length"])
        self._count_terms_added(pg_search.counted_terms(columns["search_counts"]))

    def _reindexed(self, row: Row) -> None:
        self._set_search(row["rowid"], pg_search.search_values(row))

    def _unindexed(self, row: Row) -> None:
        if row["search_length"] is not None:
            self._count_search(-1, -row["search_length"])
            self._count_terms_removed(pg_search.counted_terms(row["search_counts"]))
        self._set_search(row["rowid"], pg_search.EMPTY)

    def reindex(self) -> None:
        super().reindex()
        self._run("DELETE FROM search_stats")
        self._run(
            "INSERT INTO search_stats(workspace, versions, terms) SELECT workspace, count(*), "
            "sum(search_length) FROM memory_versions WHERE scrubbed = 0 GROUP BY workspace"
        )
        # Absent while the migrations before the one that makes it run (010 builds it then).
        made = self._row("SELECT to_regclass('search_terms') IS NOT NULL AS made")
        if made and made["made"]:
            self._run("DELETE FROM search_terms")
            self._run(pg_search.COUNT_EVERY_TERM)
        # Every version's counts changed: each process's copy of them starts over (pg_indexed).
        made = self._row("SELECT to_regclass('vector_generations') IS NOT NULL AS made")
        if made and made["made"]:
            self._run(
                "INSERT INTO vector_generations(workspace, generation) SELECT id, 1 "
                "FROM workspaces ON CONFLICT (workspace) "
                "DO UPDATE SET generation = vector_generations.generation + 1"
            )

    def _count_terms_added(self, terms: list[str]) -> None:
        """One more version holds each of `terms` (writers of a workspace go one at a time,
        and no two workspaces share a row)."""
        if terms:
            self._run(
                "INSERT INTO search_terms(workspace, term, versions) SELECT ?, t, 1 "
                "FROM unnest(CAST(? AS text[])) AS t ON CONFLICT (workspace, term) "
                "DO UPDATE SET versions = search_terms.versions + 1",
                (self.workspace, terms),
            )

    def _count_terms_removed(self, terms: list[str]) -> None:
        """One version fewer holds each of `terms`: the last one takes the term's row along."""
        if terms:
            where = "workspace = ? AND term = ANY(?)"
            self._run(f"DELETE FROM search_terms WHERE {where} AND versions <= 1",
                      (self.workspace, terms))  # fmt: skip
            self._run(f"UPDATE search_terms SET versions = versions - 1 WHERE {where}",
                      (self.workspace, terms))  # fmt: skip

    def _count_search(self, versions: int, terms: int) -> None:
        """Keep the workspace's search statistics: writers of a workspace go one at a time."""
        self._run(
            "INSERT INTO search_stats(workspace, versions, terms) VALUES (?, ?, ?) "
            "ON CONFLICT (workspace) DO UPDATE SET versions = search_stats.versions + "
            "excluded.versions, terms = search_stats.terms + excluded.terms",
            (self.workspace, versions, terms),
        )

    def _set_search(self, rowid: int, values: dict[str, Any]) -> None:
        assignments = ", ".join(f"{column} = ?" for column in values)
        self._run(
            f"UPDATE memory_versions SET {assignments} WHERE rowid = ?", (*values.values(), rowid)
        )

    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]:
        if query.notebook_ids == ():
            return []
        where, args = self.filters(query)
        terms = query.terms()
        if not terms:
            return self.recent(where, args, query.limit)
        view = self.term_view()
        if view is not None:
            return self._ranked_words(
                self.indexed_pool(view, query, where, args), query, view.stats(terms)
            )
        held = self._row(*pg_search.held_sql(terms, self.workspace))
        assert held is not None  # an aggregate: always one row
        narrowed = pg_search.narrows(query)
        # The best bm25.DEPTH by FTS5's ranking, every word first, re-ranked by bm25.py.
        depth = max(query.limit, bm25.DEPTH)
        if narrowed or pg_search.window_walk(held, len(terms), False) is None:
            rows = self._rows(*pg_search.ranked_sql(terms, held, where, args, depth))
            every = bm25.found_matches((row for row in rows if row["every_term"]), terms)
            rest = bm25.found_matches((row for row in rows if not row["every_term"]), terms)
            if len(every) >= query.limit:
                rest = []
        else:
            # Words in many memories: SQLite's passes, all words then any, each ranking
            # the newest matches first (and not scoring tens of thousands of them).
            passes: list[list[bm25.Match]] = []
            for all_words in (True, False)[: 2 if len(terms) > 1 else 1]:
                rows = self._best(terms, all_words, held, where, args, query.limit, depth)
                passes.append(bm25.found_matches(rows, terms))
                if len(passes[0]) >= query.limit:
                    break
            every, rest = passes[0], passes[1] if len(passes) > 1 else []
        matches = {m.found.id: m for m in every + rest}
        found = bm25.pooled([m.found for m in every], [m.found for m in rest], depth)
        pool = [matches[f.id] for f in found]
        return self._ranked_words(pool, query, pg_search.stats(held, terms))

    def _version_matches(
        self, where: list[str], args: list[Any], terms: list[str]
    ) -> list[bm25.Match]:
        rows = self._rows(*pg_search.counts_sql(terms, where, args))
        return bm25.found_matches(rows, terms)

    def _best(
        self, terms: list[str], every: bool, held: Row, where: list[str], args: list[Any],
        limit: int, depth: int,
    ) -> list[Row]:  # fmt: skip
        """SQLite's `_best`: up to `depth` of the best of the newest WINDOW matches passing
        the filters, or of all matches when fewer than `limit` of those pass."""
        walk = pg_search.window_walk(held, len(terms), every)
        if walk is not None:
            start = self._row(*pg_search.window_sql(terms, every, self.workspace, walk))
            if start is not None:
                newest = ([*where, f"{pg_search.newer(walk)} > ?"], [*args, start["rowid"]])
                rows = self._rows(*pg_search.ranked_sql(terms, held, *newest, depth, every))
                if len(rows) >= limit:
                    return rows
        return self._rows(*pg_search.ranked_sql(terms, held, where, args, depth, every))


def _placeholders(sql: str) -> bytes:
    """Our SQL is written with `?`; psycopg takes `%s` (none of it holds a literal ? or %)."""
    return sql.replace("?", "%s").encode()
