"""A SQLite session: the shared SQL (store/session.py) over one connection, with full text
(store/sqlite_search.py) and vectors (store/sqlite_vectors.py) of its own, and the FTS5
tables kept by hand as versions are written and scrubbed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from . import bm25
from .rows import Row
from .session import SqlSession
from .sqlite_fts import FTS_COLUMNS, SEARCHED, fts_table, fts_tables, make_fts_table
from .sqlite_search import SqliteWords
from .sqlite_vectors import SqliteVectors
from .terms import index_text

if TYPE_CHECKING:
    from .term_index import TermIndex
    from .vector_cache import VectorCache
    from .vector_search import Vectors


class SqliteSession(SqliteWords, SqliteVectors, SqlSession):
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

    # -- vectors: float32 blobs (ranked in numpy by sqlite_vectors.py) ---------------

    def _vector_value(self, vector: Vectors) -> Any:
        return vector.astype("<f4", copy=False).tobytes()

    def _vector_from(self, value: Any) -> Vectors:
        import numpy as np

        return np.frombuffer(value, dtype="<f4").astype(np.float32)

    # -- full text: a contentless FTS5 table of store/terms.py's terms, kept by hand -----

    def ensure_workspace(self) -> None:
        super().ensure_workspace()
        make_fts_table(self.conn, self._fts_table)

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
            f"INSERT INTO {table}({command}rowid, {', '.join(FTS_COLUMNS)}) "
            f"VALUES ({head}?, {', '.join('?' for _ in FTS_COLUMNS)})",
            (rowid, *(index_text(values[c]) for c in SEARCHED), values["notebook_id"]),
        )
