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

Here: the pool, migrations, transactions and the driver's errors; a session's SQL is in
pg_session.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ..domain.errors import PalimpsestError, Retryable, ValidationError
from . import Rewrite, pg_rewrite, pg_vectors, shown
from .migrations import migrations, refuse_newer, statements
from .pg_session import PostgresSession
from .pg_vector_cache import VectorCaches
from .rows import Row
from .session_base import key_race, name_race
from .term_index import TermIndex

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

    commits_cheaply = False
    scrubs_in_place = False
    replicates = False

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
