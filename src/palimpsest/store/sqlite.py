"""The embedded store: one SQLite file in WAL mode, full text with FTS5 (BM25).

One writer at a time (`BEGIN IMMEDIATE`), one connection per thread. `secure_delete` is
always on, so forgotten content is overwritten with zeros in the file rather than left in
free pages; the FTS index is merged after a forget so no segment keeps the words.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..domain.errors import PalimpsestError, Retryable, ValidationError
from . import Found, Rewrite, SearchQuery, bm25
from .migrations import migrations, refuse_newer, statements
from .rows import FOUND_COLUMNS, Row, found_from_row
from .session import SqlSession, key_race, name_race
from .terms import index_text

# numpy, and the modules that search with it (vectors, the term index), are imported where
# they are first used: a process that never searches (most commands, `palimpsest serve`
# until its first recall) never loads them.
if TYPE_CHECKING:
    from .term_index import Passed, Positions, Ranked, TermIndex, TermView
    from .vector_cache import Table, VectorCache
    from .vector_search import Vectors

BUSY_TIMEOUT_MS = 15_000
# How long a scrub waits for other processes' readers to let go of the WAL before it
# answers "pending" (a checkpoint that truncates must wait for every reader).
SCRUB_WAIT_MS = 1_000
# How many of the best full-text matches are scored against the filters before widening,
# and how many of the newest matches are ranked before all of them are.
CANDIDATES = 500
WINDOW = 4_000
# Migrations after whose SQL every version is indexed anew by store/terms.py's rules, and
# after which every version's term counts are written (bm25.py).
REINDEX_AFTER = frozenset({5, 11})
COUNT_AFTER = frozenset({12})
# Vectors: below this many in a workspace every search is exact; from it on, the
# unfiltered question goes through the cache (store/vector_cache.py): the CANDIDATE_VECTORS
# nearest by their signs are ranked by their int8 copies, and the RESCORED best of those
# are scored exactly under the filters (both widened 8 times while too few pass).
EXACT_BELOW = 20_000
CANDIDATE_VECTORS = 4_000
RESCORED = 100
LOAD_CHUNK = 5_000  # vectors read at a time when a cache is built


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
            _made_private(path)
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
                _refuse_foreign(conn, self.path)
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

    scrubs_in_place = True

    def scrub(self, workspace: str | None = None) -> bool:
        """Fold the WAL back into the file and truncate it, so no side file keeps old pages.

        Every forget committed before the checkpoint is then finished, in any workspace of
        the file, and its pending mark goes.
        """
        conn = self._connection()
        newest = conn.execute("SELECT max(id) FROM scrub_pending").fetchone()[0]
        if not self._checkpoint(conn):
            return False
        if newest is not None:
            try:
                conn.execute("DELETE FROM scrub_pending WHERE id <= ?", (newest,))
            except sqlite3.OperationalError:
                return True  # busy: the marks stay, and the next scrub clears them
            self._checkpoint(conn)  # the WAL is left empty, as after any scrub
        return True

    def _finish_pending(self) -> None:
        conn = self._connection()
        if conn.execute("SELECT 1 FROM scrub_pending LIMIT 1").fetchone() is not None:
            self.scrub()

    @staticmethod
    def _checkpoint(conn: sqlite3.Connection) -> bool:
        conn.execute(f"PRAGMA busy_timeout = {SCRUB_WAIT_MS}")
        try:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return bool(busy == 0)

    def rewrite(self) -> Rewrite:
        """SQLite erases in place (secure_delete and the checkpoint): finish what waits."""
        started = time.monotonic()
        done = self.scrub()
        with self.read("") as tx:  # the marks are store-wide, whatever the workspace
            left = tx.conn.execute("SELECT count(*) FROM scrub_pending").fetchone()[0]
        return Rewrite({"wal": round(time.monotonic() - started, 4)}, 0 if done else int(left))

    def close(self) -> None:
        with self._lock:
            for conn in self._connections.values():
                conn.close()
            self._connections.clear()
        self._local = threading.local()


def _made_private(path: Path) -> None:
    """Create the store's directory (0700) and file (0600) where missing, and take back a
    store file others could read: it holds every workspace's text, users and key hashes.
    SQLite gives its -wal and -shm files the mode of the store file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    if not hasattr(os, "getuid"):
        return  # Windows: files are private to their owner by the profile's ACLs
    try:
        real = path.resolve()  # SQLite follows a link to the store, and keeps -wal beside it
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
        return  # SQLite's own error says more
    for file in (real, real.with_name(real.name + "-wal"), real.with_name(real.name + "-shm")):
        _tighten(file)


def _tighten(file: Path) -> None:
    """Make `file` 600 if it is a regular file of ours, reading and changing one inode: a
    link planted in a shared folder (`x.db-wal` to your home) is not followed, and a folder
    or device (`--db /dev/null` as root) is left as it is. Another user's file that anyone
    may write (planted in /tmp before the store was first used) is refused: SQLite would
    write this memory into it. (Another's file closed to others is a shared store's.)"""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return  # missing, a link, or not ours to open: SQLite's own error says more
    try:
        status = os.fstat(fd)
        regular, ours = stat.S_ISREG(status.st_mode), status.st_uid == os.getuid()
        if regular and ours and status.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        elif regular and not ours and status.st_mode & 0o002:
            raise ValidationError(
                f"{file} belongs to another user and anyone may write to it: Palimpsest "
                "keeps no memory in it. Remove it, or pass --db a path of your own."
            )
    except OSError:
        pass
    finally:
        os.close(fd)


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """A database with tables but no schema version belongs to another program."""
    if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
        raise ValidationError(
            f"{path} is a SQLite database of another program (it has tables, but no "
            "Palimpsest schema), and was left as it was; pass --db a new file or a "
            "Palimpsest store."
        )


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


class SqliteSession(SqlSession):
    """A workspace-bound view of the store inside one transaction."""

    UNINDEXED: ClassVar[str] = "+"

    def __init__(
        self,
        conn: sqlite3.Connection,
        workspace: str,
        vector_caches: dict[tuple[str, str], VectorCache] | None = None,
        term_indexes: dict[str, TermIndex] | None = None,  # none for a write: its rows are not in
        *,
        writing: bool = False,
    ):
        super().__init__(workspace)
        self.conn = conn
        self._vector_caches = vector_caches
        self._term_indexes = term_indexes
        # A write session sees its own uncommitted rows, which a rollback may undo: it
        # fills a cache only from the state committed before it began (`_committed`).
        self._writing = writing
        self._committed: tuple[int, int] = (0, 0)  # (last event, vector generation)
        self._fts_written = False  # whether full text changed in this transaction

    def note_committed_state(self) -> None:
        """Called as the write transaction begins, before it writes anything."""
        self._committed = (self._last_seq(), self.vector_generation())

    def _last_seq(self) -> int:
        last = self._row("SELECT max(seq) AS seq FROM events")
        return int(last["seq"] or 0) if last else 0

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        return self.conn.execute(sql, tuple(params)).fetchall()

    def _run(self, sql: str, params: Iterable[Any] = ()) -> None:
        self.conn.execute(sql, tuple(params))

    def _cursor(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Row]:
        return iter(self.conn.execute(sql, tuple(params)))

    def _tag_condition(self) -> str:
        return "EXISTS (SELECT 1 FROM json_each(v.tags) WHERE json_each.value = ?)"

    # -- vectors: float32 blobs, ranked in numpy --------------------------------------

    def _vector_value(self, vector: Vectors) -> Any:
        return vector.astype("<f4", copy=False).tobytes()

    def _vector_from(self, value: Any) -> Vectors:
        import numpy as np

        return np.frombuffer(value, dtype="<f4").astype(np.float32)

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

    # -- full text: a contentless FTS5 table of store/terms.py's terms, kept by hand -----

    # Each workspace has a table of its own, so that BM25's counts (how many versions hold a
    # word, how long they are) are its own: a shared table would let a score tell how
    # common a word is in other workspaces. `default`'s is memory_fts, made by migrations;
    # another's is made by its first write.

    @property
    def _fts_table(self) -> str:
        return fts_table(self.workspace)

    def ensure_workspace(self) -> None:
        super().ensure_workspace()
        make_fts_table(self.conn, self._fts_table)

    def _has_fts_table(self) -> bool:
        return has_table(self.conn, self._fts_table)

    def _search_values(self, columns: dict[str, Any]) -> dict[str, Any]:
        return bm25.stored_counts(columns)

    def _indexed(self, rowid: int, columns: Row) -> None:
        self._fts("insert", rowid, columns)

    def _reindexed(self, row: Row) -> None:
        self._fts("insert", row["rowid"], row)

    def _unindexed(self, row: Row) -> None:
        # A contentless table deletes by the terms it was given: the same function makes them.
        self._fts("delete", row["rowid"], row)
        self._run(
            "UPDATE memory_versions SET search_counts = NULL, search_length = NULL WHERE rowid = ?",
            (row["rowid"],),
        )

    def count_terms(self) -> None:
        """Write every version's term counts (a migration's last step, as `reindex`)."""
        for row in self.versions_with_content():
            counted = bm25.stored_counts(row)
            self._run(
                "UPDATE memory_versions SET search_counts = ?, search_length = ? WHERE rowid = ?",
                (counted["search_counts"], counted["search_length"], row["rowid"]),
            )

    def _after_scrub(self) -> None:
        # Deleted words linger in older segments until they are merged: merge them all now,
        # in every workspace's table (a scrub finishes the forgets of all of them).
        for table in fts_tables(self.conn):
            self._run(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    def _fts(self, action: str, rowid: int, values: Row) -> None:
        # The row's own workspace: a migration's reindex walks every workspace at once.
        # (`keys()`: `in` on a sqlite3.Row looks among its values)
        workspace = values["workspace"] if "workspace" in values.keys() else self.workspace  # noqa: SIM118
        table = fts_table(workspace)
        if workspace != self.workspace:
            make_fts_table(self.conn, table)
        self._fts_written = True
        command = "" if action == "insert" else f"{table}, "
        head = "" if action == "insert" else "'delete', "
        self._run(
            f"INSERT INTO {table}({command}rowid, {', '.join(_FTS_COLUMNS)}) "
            f"VALUES ({head}?, {', '.join('?' for _ in _FTS_COLUMNS)})",
            (rowid, *(index_text(values[c]) for c in _SEARCHED), values["notebook_id"]),
        )

    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]:
        where, args = self.filters(query)
        terms = query.terms()
        if query.notebook_ids == ():
            return []
        if not terms:
            return self.recent(where, args, query.limit)
        if not self._has_fts_table():  # a workspace nothing was ever written to
            return []
        index = self._term_view() if query.notebook_ids is None and not query.tags else None
        if index is not None:
            stats = index.stats(terms)
            pool = self._indexed_pool(index, query, where, args, terms, stats)
            return self._ranked_words(pool, query, stats)
        # FTS5's best DEPTH (memories holding every word first, any word fills the rest),
        # re-ranked by bm25.py.
        depth = max(query.limit, bm25.DEPTH)
        stats = self._search_stats(terms)
        held = [stats.holding[term] for term in terms]
        passes: list[list[Found]] = []
        for joiner in (" AND ", " OR ")[: 2 if len(terms) > 1 else 1]:
            match = _match_expression(joiner.join(f'"{t}"' for t in terms), query)
            most = min(held) if joiner == " AND " else sum(held)  # matches at most
            rows = self._best(match, where, args, query.limit, depth, most)
            passes.append([found_from_row(row) for row in rows])
            if len(passes[0]) >= query.limit:
                break
        found = bm25.pooled(passes[0], passes[1] if len(passes) > 1 else [], depth)
        # Their counts read once, for the pool alone (in the ranking query SQLite computed
        # them for every candidate it sorted).
        counted = {m.found.rowid: m for m in self._version_matches(
            [f"v.rowid IN ({', '.join('?' * len(found))})"], [f.rowid for f in found], terms
        )} if found else {}  # fmt: skip
        pool = [counted[f.rowid] for f in found]
        return self._ranked_words(pool, query, stats)

    # -- full text ranked on the term index (store/term_index.py) ---------------------

    def _term_view(self) -> TermView | None:
        """The workspace's term index as this transaction sees it, brought up to its last
        event; None where FTS5 ranks instead: in a write transaction (its own rows are not
        in the index) or when another thread moved the index past this snapshot."""
        if self._term_indexes is None:
            return None
        from .term_index import view_at

        seq, generation = self._last_seq(), self.vector_generation()
        return view_at(self._term_indexes, self.workspace, seq, generation,
                       self._counted_between)  # fmt: skip

    def _counted_between(self, after: int, upto: int) -> Iterator[tuple[int, str, int | None]]:
        """The term counts of the versions filed after event `after` up to `upto`."""
        rows = self.conn.execute(
            "SELECT rowid, search_counts, search_length FROM memory_versions "
            "WHERE workspace = ? AND from_seq > ? AND from_seq <= ? "
            "AND search_counts IS NOT NULL ORDER BY rowid",
            (self.workspace, after, upto),
        )
        return ((int(row[0]), row[1], row[2]) for row in rows)

    def _indexed_pool(
        self,
        index: TermView,
        query: SearchQuery,
        where: list[str],
        args: list[Any],
        terms: list[str],
        stats: bm25.Stats,
    ) -> list[bm25.Match]:
        """What FTS5's passes give `search_found` (the best DEPTH matches passing the
        filters, those holding every term first, with their counts), from the index."""
        depth = max(query.limit, bm25.DEPTH)
        passes: list[list[Passed]] = []
        for every in (True, False)[: 2 if len(terms) > 1 else 1]:
            matching = index.matching(terms, every)
            passes.append(self._best_indexed(index, matching, terms, stats, where, args,
                                             query.limit, depth))  # fmt: skip
            if len(passes[0]) >= query.limit:
                break
        return index.pooled(passes[0], passes[1] if len(passes) > 1 else [], depth, terms)

    def _best_indexed(
        self,
        index: TermView,
        matching: Positions,
        terms: list[str],
        stats: bm25.Stats,
        where: list[str],
        args: list[Any],
        limit: int,
        depth: int,
    ) -> list[Passed]:
        """`_best` on the index: the newest WINDOW matches, their CANDIDATES best checked
        against the filters, then wider while fewer than `limit` pass."""
        window = matching[-WINDOW:]
        tries: list[tuple[Positions, int | None]] = [(window, CANDIDATES)]
        if len(window) > CANDIDATES:
            tries.append((window, None))
        if len(matching) > WINDOW:
            tries.append((matching, None))
        best: list[Passed] = []
        for rows, cap in tries:
            best = self._passing(index.ranked(rows, terms, stats, cap), where, args, depth)
            if len(best) >= limit:
                break
        return best

    def _passing(
        self, leaders: Ranked, where: list[str], args: list[Any], depth: int
    ) -> list[Passed]:
        """The best `depth` of `leaders` that pass the filters, asked of SQL a few at a
        time."""
        passed: list[tuple[float, int, Row]] = []  # (score, row, its columns)
        start = 0
        while start < len(leaders.rows) and len(passed) < depth:
            # Leaders left for later rank below these (newest first on a tie, as by seq).
            end = start + 2 * depth
            rowids = leaders.rowids[start:end].tolist()
            rows = self._rows(
                f"SELECT {FOUND_COLUMNS}, v.from_seq AS seq FROM json_each(?) AS c "
                f"CROSS JOIN memory_versions v ON v.rowid = c.value WHERE {' AND '.join(where)}",
                [json.dumps(rowids), *args],
            )
            by_rowid = {int(row["rowid"]): row for row in rows}
            scores, rows_in_index = leaders.scores[start:end], leaders.rows[start:end]
            chunk = zip(scores.tolist(), rows_in_index.tolist(), rowids, strict=True)
            passed += [(score, row, by_rowid[rowid]) for score, row, rowid in chunk
                       if rowid in by_rowid]  # fmt: skip
            start = end
        from .term_index import Passed

        passed.sort(key=lambda leader: (-leader[0], -int(leader[2]["seq"])))
        return [Passed(found_from_row(columns), int(columns["seq"]), row)
                for _, row, columns in passed[:depth]]  # fmt: skip

    def _version_matches(
        self, where: list[str], args: list[Any], terms: list[str]
    ) -> list[bm25.Match]:
        columns, paths = _counted(terms)
        sql = f"SELECT {FOUND_COLUMNS}, {columns} FROM memory_versions v "
        rows = self._rows(sql + f"WHERE {' AND '.join(where)}", [*paths, *args])
        return bm25.found_matches(rows, terms)

    def _search_stats(self, terms: list[str]) -> bm25.Stats:
        """The workspace's figures for BM25, as FTS5 keeps them: its count of rows and
        their total length (the table's averages record), and each term's matches."""
        table = self._fts_table
        if self._fts_written:  # FTS5 saves the record when a savepoint opens, else at commit
            self._run("SAVEPOINT fts_totals")
            self._run("RELEASE fts_totals")
        held = "".join(
            f", (SELECT count(*) FROM {table} WHERE {table} MATCH ?) AS d{i}"
            for i in range(len(terms))
        )
        searched = " ".join(_SEARCHED)
        row = self._row(
            f"SELECT (SELECT block FROM {table}_data WHERE id = 1) AS block{held}",
            [f'{{{searched}}} : "{term}"' for term in terms],
        )
        assert row is not None  # a SELECT of subqueries: always one row
        versions, *lengths = (_varints(row["block"]) if row["block"] else []) or [0]  # none yet
        holding = {term: int(row[f"d{i}"]) for i, term in enumerate(terms)}
        return bm25.Stats(versions, sum(lengths), holding)

    def _best(
        self, match: str, where: list[str], args: list[Any], limit: int, depth: int, most: int
    ) -> list[Row]:
        """Up to `depth` of the best matches passing the filters, widening the search only
        while fewer than `limit` pass (`most`: how many rows can match, at most).

        BM25 must score every match it ranks, so words found in very many memories would
        cost a scan: the first passes rank the newest WINDOW matches only, and of those
        score the CANDIDATES best against the filters. A pass that comes back short and
        did not cover every match is followed by a wider one.
        """
        start = self._window_start(match) if most > WINDOW else None
        rows = self._matches(match, where, args, depth, CANDIDATES, start)
        if len(rows) >= limit:
            return rows  # the common case: the window's best passed (no count needed)
        passes: list[tuple[int | None, int | None]] = []
        if most > CANDIDATES and self._count(match, start, CANDIDATES + 1) > CANDIDATES:
            passes.append((None, start))
        if start is not None:
            passes.append((None, None))
        for cap, lowest in passes:
            rows = self._matches(match, where, args, depth, cap, lowest)
            if len(rows) >= limit:
                break
        return rows

    def _window_start(self, match: str) -> int | None:
        """The rowid below which matches fall outside the newest WINDOW, if there are more."""
        row = self._row(
            f"SELECT rowid FROM {self._fts_table} WHERE {self._fts_table} MATCH ? "
            "ORDER BY rowid DESC "
            "LIMIT 1 OFFSET ?",
            (match, WINDOW),
        )
        return None if row is None else int(row["rowid"])

    def _count(self, match: str, lowest: int | None, most: int) -> int:
        row = self._row(
            f"SELECT count(*) AS n FROM (SELECT 1 FROM {self._fts_table} "
            f"WHERE {self._fts_table} MATCH ? "
            "AND rowid > ? LIMIT ?)",
            (match, lowest or 0, most),
        )
        return int(row["n"]) if row else 0

    def _matches(
        self,
        match: str,
        where: list[str],
        args: list[Any],
        limit: int,
        cap: int | None,
        lowest: int | None,
    ) -> list[Row]:
        table = self._fts_table
        candidates = f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? AND rowid > ?"
        if cap is not None:
            candidates += f" ORDER BY rank LIMIT {cap}"
        sql = (
            f"SELECT {FOUND_COLUMNS} FROM ({candidates}) c "
            f"JOIN memory_versions v ON v.rowid = c.rowid WHERE {' AND '.join(where)} "
            "ORDER BY c.rank, v.from_seq DESC LIMIT ?"
        )
        return self._rows(sql, [match, lowest or 0, *args, limit])


# As 005_search_terms.sql makes memory_fts, `default`'s.
FTS_SCHEMA = "text, title, why, tags_text, notebook_id, content = '', tokenize = 'ascii'"
RANK = "bm25(1.0, 0.6, 0.4, 0.4, 0.0)"


def fts_table(workspace: str) -> str:
    """The full-text table of `workspace` (a name SQL can take, whatever the id holds)."""
    if workspace == "default":
        return "memory_fts"
    return "memory_fts_" + hashlib.sha256(workspace.encode()).hexdigest()[:16]


def has_table(conn: sqlite3.Connection, table: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None
    )


def make_fts_table(conn: sqlite3.Connection, table: str) -> None:
    """Make `table` unless it exists (in the caller's transaction: a rollback undoes it)."""
    if has_table(conn, table):
        return
    conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({FTS_SCHEMA})")
    # Rank by BM25 weighting the text over title, why and tags; the notebook id counts nothing.
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('rank', '{RANK}')")


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        " AND (name = 'memory_fts' OR name LIKE 'memory\\_fts\\_%' ESCAPE '\\')"
    ).fetchall()
    return [row[0] for row in rows]


_SEARCHED = ("text", "title", "why", "tags_text")  # indexed as terms, weighted in that order
_FTS_COLUMNS = (*_SEARCHED, "notebook_id")  # the notebook id as it is, to filter by


def _match_expression(words: str, query: SearchQuery) -> str:
    """An FTS5 query: the words in the content columns, narrowed by notebook and tags.

    The SQL filters still check notebook and tags exactly; here they only shrink the set
    of matches to rank (a tag `deploying-tips` is the phrase "deploy tip" in the index; a
    tag with no terms, `++`, cannot shrink it).
    """
    parts = [f"{{text title why tags_text}} : ({words})"]
    if query.notebook_ids:
        parts.append("notebook_id : (" + " OR ".join(_phrase(n) for n in query.notebook_ids) + ")")
    tag_terms = (index_text(tag) for tag in query.tags)
    parts += [f"tags_text : {_phrase(terms)}" for terms in tag_terms if terms]
    return " AND ".join(parts)


def _phrase(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _counted(terms: list[str]) -> tuple[str, list[str]]:
    """What bm25.found_matches reads of version v, and the JSON paths it takes.

    The counts are JSON with keys outside ASCII escaped (東 is kept as \\u6771): SQLite
    3.40 finds such a key only by the escaped path, later releases by either, so such a
    term asks both."""
    columns: list[str] = []
    paths: list[str] = []
    for i, term in enumerate(terms):
        ways = dict.fromkeys([f'$."{term}"', "$." + json.dumps(term)])
        reads = ", ".join("json_extract(v.search_counts, ?)" for _ in ways)
        columns.append(f", coalesce({reads}, 0) AS tf{i}")
        paths += ways
    return f"v.from_seq AS seq, v.search_length AS length{''.join(columns)}", paths


def _varints(block: bytes) -> list[int]:
    """The numbers of an FTS5 record: SQLite's varints, most significant 7 bits first,
    the ninth byte whole."""
    numbers, at = [], 0
    while at < len(block):
        value = 0
        for i in range(9):
            byte = block[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        numbers.append(value)
    return numbers
