"""The team store: PostgreSQL through psycopg 3 and a connection pool.

Any number of stateless Palimpsest processes may share one database. Writers of a
workspace take a transaction-scoped advisory lock first, so event sequence numbers are
handed out in commit order: no reader ever sees event N+1 before N. Readers take a
repeatable-read snapshot and never wait for writers.

Full text is store/terms.py's terms in a tsvector column with a GIN index, ranked by BM25
as SQLite ranks (pg_search), so both stores find the same memories: a read ranks on each
process's in-memory copy of the term counts (pg_indexed), a write in SQL. Nearest vectors
are pgvector's (pg_vectors), or under a filter a copy of the vectors in memory
(pg_vector_cache). A forget sets the content and search columns to NULL at once, but the
old row versions keep their bytes in the table, TOAST and index files: VACUUM marks the
space free without erasing it. So a forget stays pending (`scrub_pending`) until
`rewrite` has copied each table that held the text into new files (`pg_rewrite`: online,
with brief locks). A server never runs it by itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ..domain.errors import PalimpsestError, Retryable, ValidationError
from . import Found, Rewrite, SearchQuery, bm25, pg_rewrite, pg_search, pg_vectors, shown
from .migrations import migrations, refuse_newer, statements
from .pg_indexed import IndexedWords
from .pg_vector_cache import CachedVectors, VectorCaches
from .rows import Row, found_from_row
from .session import SqlSession, key_race, name_race
from .term_index import TermIndex
from .vector_search import Vectors, narrowed

POOL_SIZE = 10
# How long a call waits for a connection before answering retryable: a database that is
# down should fail fast (the service retries a few times), not hang the client.
POOL_WAIT_SECONDS = 5
CONNECT_SECONDS = 5  # the first connection's limit: a host that never answers
MIGRATION_LOCK = 7_305_301  # any constant: one migrator at a time across processes
# Migrations after whose SQL every version is indexed anew by store/terms.py's rules.
REINDEX_AFTER = frozenset({6})
# A read's start in one round trip (no parameters: psycopg sends the statements at once),
# with the settings of a search through the HNSW index (they touch no other query). The
# LOCK comes before the snapshot (a LOCK takes none): a scrub's copy swapped in later
# holds rows newer than this snapshot, so a read reaching it would find it empty.
_READ_START = "; ".join((
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    *pg_vectors.INDEX_SETTINGS,
    f"LOCK TABLE {', '.join(pg_rewrite.REWRITTEN)} IN ACCESS SHARE MODE",
)).encode()  # fmt: skip


# What libpq says when the server answered but refused (it gives no SQLSTATE at connect
# time); only these phrases are read, the message itself is never shown: it names the user.
REFUSALS = {
    "password authentication failed": "refused the user or password",
    "no password supplied": "wants a password, and the URL gives none",
    "does not exist": "has no such database or user",
}


def _why_not_connected(url: str, exc: Exception) -> str:
    said = str(exc)
    for phrase, meaning in REFUSALS.items():
        if phrase in said:
            return f"The PostgreSQL server at {shown(url)} {meaning}: check the URL."
    return (
        f"Cannot reach the PostgreSQL server at {shown(url)} ({type(exc).__name__}); "
        "check that it runs and that the URL, user and password are right."
    )


class PostgresStore:
    def __init__(self, url: str):
        self.url = url
        # Each workspace's term counts, copied for ranking full text (see pg_indexed).
        self._term_indexes: dict[str, TermIndex] = {}
        # Each workspace's current vectors, copied for filtered searches (pg_vector_cache).
        self._vector_caches: VectorCaches = {}
        try:
            # One plain connection first: a wrong URL, password or database fails at once,
            # where the pool would retry it in the background until its timeout.
            psycopg.connect(url, connect_timeout=CONNECT_SECONDS).close()
            self.pool = ConnectionPool(
                url,
                min_size=1,
                max_size=POOL_SIZE,
                # as the first connection: a bad option in the URL fails it at once too
                kwargs={"row_factory": dict_row, "connect_timeout": CONNECT_SECONDS},
                configure=_find_pgvector,
                open=True,
                timeout=POOL_WAIT_SECONDS,
                # A restart or failover leaves every pooled connection dead: test each one
                # as it is handed out (an empty query) and replace the dead ones first.
                check=ConnectionPool.check_connection,
            )
            self.pool.wait(timeout=30)
        except (psycopg.Error, PoolTimeout) as exc:
            raise ValidationError(_why_not_connected(url, exc)) from None
        try:
            self._migrate()
        except ValidationError:
            self.pool.close()
            raise

    def _migrate(self) -> None:
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS palimpsest_schema (version INTEGER NOT NULL)")
            # Every migration not yet applied, by number: branches add them out of order.
            applied = self._applied(conn)
            refuse_newer("postgres", max(applied, default=0))
            for number, script in migrations("postgres"):
                if number not in applied:
                    for statement in statements(script):
                        with _extension_needed(statement):
                            conn.execute(statement.encode())
                    if number in REINDEX_AFTER:
                        PostgresSession(conn, "").reindex()
                    conn.execute("INSERT INTO palimpsest_schema VALUES (%s)", (number,))

    def schema_version(self) -> int:
        with self.pool.connection() as conn:
            return self._version(conn)

    @staticmethod
    def _applied(conn: psycopg.Connection[Any]) -> set[int]:
        rows: list[Row] = conn.execute("SELECT version FROM palimpsest_schema").fetchall()
        return {int(row["version"]) for row in rows}

    @staticmethod
    def _version(conn: psycopg.Connection[Any]) -> int:
        row: Row | None = conn.execute(
            "SELECT max(version) AS version FROM palimpsest_schema"
        ).fetchone()
        return int(row["version"] or 0) if row else 0

    @contextmanager
    def read(self, workspace: str) -> Iterator[PostgresSession]:
        with _translated(), self.pool.connection() as conn, conn.transaction():
            conn.execute(_READ_START)
            yield PostgresSession(conn, workspace, self._term_indexes, self._vector_caches)

    @contextmanager
    def write(self, workspace: str) -> Iterator[PostgresSession]:
        with _translated(), self.pool.connection() as conn, conn.transaction():
            # Writers of one workspace go one at a time, so sequence order is commit order.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (workspace,))
            session = PostgresSession(conn, workspace)
            session.ensure_workspace()
            yield session
            if session.discarded:
                raise psycopg.Rollback()
        if session.generation_moved:
            self._let_go(workspace)

    def _let_go(self, workspace: str) -> None:
        """Drop this process's copies of `workspace` (a forget or reindex committed): they
        hold a forgotten version's words and vector, which the next read would only then
        replace. A read whose snapshot is older builds its own again, as it may."""
        self._term_indexes.pop(workspace, None)
        for key in [key for key in self._vector_caches if key[0] == workspace]:
            self._vector_caches.pop(key, None)

    scrubs_in_place = False

    def scrub(self, workspace: str | None = None) -> bool:
        """Whether every forget of `workspace` has been through a rewrite (none is run here)."""
        if workspace is not None:
            with self.read(workspace) as tx:
                return not tx.pending_scrubs()
        with _translated(), self.pool.connection() as conn:
            return pg_rewrite.count_pending(conn) == 0

    def rewrite(self) -> Rewrite:
        """Copy each table that may hold forgotten bytes into new files (see pg_rewrite)."""
        with _translated(), psycopg.connect(self.url, autocommit=True) as conn:
            locked, finished = pg_rewrite.rewrite(conn)
            conn.execute("DELETE FROM scrub_pending WHERE id = ANY(%s)", (finished,))
            pending = pg_rewrite.count_pending(conn)
            blocked = pending and locked and not pg_rewrite.may_rewrite_catalog(conn)
            return Rewrite(locked, pending, pg_rewrite.CATALOG_WARNING if blocked else None)

    def close(self) -> None:
        self.pool.close()


@contextmanager
def _extension_needed(statement: str) -> Iterator[None]:
    """A CREATE EXTENSION the server or the role refuses becomes a refusal saying what to do."""
    try:
        yield
    except (pg_errors.InsufficientPrivilege, pg_errors.UndefinedFile) as exc:
        if not statement.startswith("CREATE EXTENSION"):
            raise
        name = statement.split()[-1]
        cause = (
            "this role may not create it"
            if isinstance(exc, pg_errors.InsufficientPrivilege)
            else "the server does not have it installed"
        )
        raise ValidationError(
            f"This PostgreSQL database lacks the extension `{name}` (pgvector 0.8 or later, "
            f"for recall by meaning), and {cause}: install pgvector on the server and, as a "
            f"superuser, run `CREATE EXTENSION {name};` in this database once; then try again."
        ) from None


def _find_pgvector(conn: psycopg.Connection[Any]) -> None:
    """Put pgvector's schema on a new connection's search path when it is not: a store in a
    schema of its own (`options=-csearch_path=...`) names the type and its operators
    unqualified, and the extension lives once per database, in whichever schema made it."""
    row: Row | None = conn.execute(
        "SELECT quote_ident(n.nspname) AS schema FROM pg_extension e "
        "JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector' AND n.nspname <> ALL (current_schemas(false))"
    ).fetchone()
    if row is not None:
        conn.execute(
            "SELECT set_config('search_path', current_setting('search_path') || ', ' || %s, false)",
            (row["schema"],),
        )
    conn.commit()


@contextmanager
def _translated() -> Iterator[None]:
    """The one place where driver errors become Palimpsest errors."""
    try:
        yield
    except PalimpsestError:
        raise
    except pg_errors.UniqueViolation as exc:
        if exc.diag.constraint_name == "versions_active_key":
            raise key_race() from exc
        if exc.diag.constraint_name == "workspaces_name":
            raise name_race() from exc
        raise
    except psycopg.DataError as exc:
        # The service refuses NULs naming the field; this is the net under it, so that a
        # path it missed still answers `validation`, never `internal`.
        if "NUL" not in str(exc):
            raise
        raise ValidationError("A value contains a NUL character; remove it.") from exc
    except (pg_errors.SerializationFailure, pg_errors.DeadlockDetected, PoolTimeout) as exc:
        raise Retryable("The database was busy with other writers; try again.") from exc
    except psycopg.OperationalError as exc:
        raise Retryable(
            "The connection to PostgreSQL failed; try again. If this was a write, it may or "
            "may not have been applied: pass an idempotency_key to retry safely.",
            maybe_applied=True,
        ) from exc


class PostgresSession(SqlSession, IndexedWords, CachedVectors):
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
