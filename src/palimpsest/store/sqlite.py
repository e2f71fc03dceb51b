"""The embedded store: one SQLite file in WAL mode, full text with FTS5 (BM25).

One writer at a time (`BEGIN IMMEDIATE`), one connection per thread. `secure_delete` is
always on, so forgotten content is overwritten with zeros in the file rather than left in
free pages; the FTS index is merged after a forget so no segment keeps the words.

Here: connections, migrations and transactions. The file's permissions are in
sqlite_files.py, the scrub in sqlite_scrub.py, a session's SQL in sqlite_session.py (full
text in sqlite_search.py and sqlite_fts.py, vectors in sqlite_vectors.py).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..domain.errors import PalimpsestError, Retryable, ValidationError
from . import sqlite_scrub
from .migrations import migrations, refuse_newer, statements
from .session_base import key_race, name_race
from .sqlite_files import made_private, refuse_foreign
from .sqlite_session import SqliteSession
from .values import Rewrite

# numpy, and the modules that search with it (vectors, the term index), are imported where
# they are first used: a process that never searches (most commands, `palimpsest serve`
# until its first recall) never loads them.
if TYPE_CHECKING:
    from .term_index import TermIndex
    from .vector_cache import VectorCache

BUSY_TIMEOUT_MS = 15_000
# Migrations after whose SQL every version is indexed anew by store/terms.py's rules, and
# after which every version's term counts are written (bm25.py).
REINDEX_AFTER = frozenset({5, 11})
COUNT_AFTER = frozenset({12})


class SqliteStore:
    def __init__(self, path: Path):
        self.path = path
        self.url = str(path)
        self._local = threading.local()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._lock = threading.Lock()
        self._vector_caches: dict[tuple[str, str], VectorCache] = {}
        self._term_indexes: dict[str, TermIndex] = {}
        try:
            made_private(path)
            with _translated():
                self._migrate()
                # A forget committed just before a crash may have left its bytes in the WAL.
                self._finish_pending()
        except PalimpsestError:
            self.close()
            raise
        except (OSError, sqlite3.DatabaseError) as exc:
            self.close()
            raise ValidationError(
                f"Cannot open {path} as a Palimpsest store ({exc}); pass --db a new or "
                "existing Palimpsest SQLite file."
            ) from None

    # -- connections -------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=15
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA secure_delete = ON")
            self._local.conn = conn
            with self._lock:
                # Threads come and go (worker pools); their connections must not pile up.
                for thread in [t for t in self._connections if not t.is_alive()]:
                    self._connections.pop(thread).close()
                self._connections[threading.current_thread()] = conn
        return conn

    def _migrate(self) -> None:
        """Bring the schema up to date; a store already there is opened without a lock."""
        conn = self._connection()
        newest = migrations("sqlite")[-1][0]
        if conn.execute("PRAGMA user_version").fetchone()[0] == newest:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            refuse_newer("sqlite", current)
            if current == 0:
                refuse_foreign(conn, self.path)
            for number, script in migrations("sqlite"):
                if number > current:
                    for statement in statements(script):
                        conn.execute(statement)
                    if number in REINDEX_AFTER:
                        SqliteSession(conn, "").reindex()
                    if number in COUNT_AFTER:
                        SqliteSession(conn, "").count_terms()
                    conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def schema_version(self) -> int:
        return int(self._connection().execute("PRAGMA user_version").fetchone()[0])

    # -- sessions ----------------------------------------------------------------------

    @contextmanager
    def read(self, workspace: str) -> Iterator[SqliteSession]:
        conn = self._connection()
        with _translated():
            conn.execute("BEGIN")
            try:
                yield SqliteSession(conn, workspace, self._vector_caches, self._term_indexes)
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def write(self, workspace: str) -> Iterator[SqliteSession]:
        conn = self._connection()
        with _translated():
            conn.execute("BEGIN IMMEDIATE")
            session = SqliteSession(conn, workspace, self._vector_caches, writing=True)
            session.note_committed_state()
            try:
                session.ensure_workspace()
                yield session
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if session.discarded:
                conn.execute("ROLLBACK")
            else:
                conn.execute("COMMIT")

    commits_cheaply = True
    scrubs_in_place = True
    replicates = True

    def scrub(self, workspace: str | None = None) -> bool:
        """Fold the WAL back into the file and truncate it (store/sqlite_scrub.py): every
        forget committed before, in any workspace of the file, is then finished."""
        return sqlite_scrub.scrubbed(self._connection(), BUSY_TIMEOUT_MS)

    def _finish_pending(self) -> None:
        if sqlite_scrub.any_pending(self._connection()):
            self.scrub()

    def rewrite(self) -> Rewrite:
        """SQLite erases in place (secure_delete and the checkpoint): finish what waits."""
        started = time.monotonic()
        done = self.scrub()
        left = 0 if done else sqlite_scrub.pending(self._connection())
        return Rewrite({"wal": round(time.monotonic() - started, 4)}, left)

    def close(self) -> None:
        with self._lock:
            for conn in self._connections.values():
                conn.close()
            self._connections.clear()
        self._local = threading.local()


@contextmanager
def _translated() -> Iterator[None]:
    """The one place where driver errors become Palimpsest errors."""
    try:
        yield
    except PalimpsestError:
        raise
    except sqlite3.IntegrityError as exc:
        # SQLite names the columns of a unique index, not the index: (notebook_id, key) is
        # only versions_active_key's.
        unique = exc.sqlite_errorname == "SQLITE_CONSTRAINT_UNIQUE"
        if unique and "memory_versions.notebook_id, memory_versions.key" in str(exc):
            raise key_race() from exc
        if unique and "workspaces.name" in str(exc):
            raise name_race() from exc
        raise
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorname.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            raise Retryable("The database is busy with another writer; try again.") from exc
        raise
