"""Vectors for recall by meaning, the same SQL on both stores: at most one per version in
memory_vectors, tagged with its model. How a vector is written and read, and how the
nearest are found, is each backend's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..domain.errors import InternalError
from ..domain.model import Memory
from .rows import memory_from_row
from .session_base import SessionBase
from .values import SearchQuery

if TYPE_CHECKING:  # numpy is imported where a vector is read (see sqlite_vectors.py)
    from .vector_search import Vectors


class VectorRows(SessionBase):
    """The vectors' part of a store session."""

    def nearest(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Memory, float]]:
        return self._read_found(self.nearest_found(vector, query, model))

    def put_vector(self, memory_id: str, seq: int, vector: Vectors, model: str) -> None:
        row = self._row(
            "SELECT rowid FROM memory_versions WHERE memory_id = ? AND from_seq = ? "
            "AND workspace = ?",
            (memory_id, seq, self.workspace),
        )
        if row is None:
            raise InternalError(f"no version of {memory_id} was written by event {seq}")
        self._put_vector_row(int(row["rowid"]), vector, model)

    def _put_vector_row(self, rowid: int, vector: Vectors, model: str) -> None:
        self._run(
            "INSERT INTO memory_vectors(version_rowid, workspace, model, vector) "
            f"VALUES (?, ?, ?, {self.VECTOR_IN}) ON CONFLICT (version_rowid) DO UPDATE "
            "SET model = excluded.model, vector = excluded.vector",
            (rowid, self.workspace, model, self._vector_value(vector)),
        )

    def vector_of(self, memory_id: str, version: int, model: str) -> Vectors | None:
        row = self._row(
            f"SELECT {self.VECTOR_OUT} AS vector FROM memory_vectors mv "
            "JOIN memory_versions v ON v.rowid = mv.version_rowid "
            "WHERE v.memory_id = ? AND v.version = ? AND v.workspace = ? AND mv.model = ?",
            (memory_id, version, self.workspace, model),
        )
        return None if row is None else self._vector_from(row["vector"])

    def current_vectors(self, model: str, notebook_id: str | None = None) -> dict[str, Vectors]:
        where, args = "", [self.workspace, model]
        if notebook_id is not None:
            where, args = " AND v.notebook_id = ?", [*args, notebook_id]
        rows = self._rows(
            f"SELECT v.memory_id AS memory_id, {self.VECTOR_OUT} AS vector "
            "FROM memory_versions v JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
            "WHERE v.workspace = ? AND v.to_seq IS NULL AND v.scrubbed = 0 "
            f"AND v.status = 'active' AND mv.model = ?{where}",
            args,
        )
        return {row["memory_id"]: self._vector_from(row["vector"]) for row in rows}

    _STALE = (
        "FROM memory_versions v LEFT JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
        "WHERE v.workspace = ? AND v.scrubbed = 0 AND (mv.model IS NULL OR mv.model <> ?)"
    )

    def stale_vector_count(self, model: str) -> int:
        row = self._row(f"SELECT count(*) AS n {self._STALE}", (self.workspace, model))
        return int(row["n"]) if row else 0

    def stale_vectors(self, model: str, limit: int) -> list[Memory]:
        rows = self._rows(
            f"SELECT v.* {self._STALE} ORDER BY v.rowid LIMIT ?", (self.workspace, model, limit)
        )
        return [memory_from_row(row) for row in rows]

    def reindexed_vectors(self, vectors: list[tuple[Memory, Vectors]], model: str) -> None:
        for memory, vector in vectors:
            row = self._row(
                "SELECT rowid FROM memory_versions WHERE memory_id = ? AND version = ? "
                "AND workspace = ? AND scrubbed = 0",
                (memory.id, memory.version, self.workspace),
            )
            if row is not None:  # forgotten meanwhile: nothing to index
                self._put_vector_row(int(row["rowid"]), vector, model)
        self._next_vector_generation()

    def vector_generation(self) -> int:
        """Changes whenever vectors change other than by a new version (reindex, forget)."""
        row = self._row(
            "SELECT generation FROM vector_generations WHERE workspace = ?", (self.workspace,)
        )
        return int(row["generation"]) if row else 0

    def _next_vector_generation(self) -> None:
        self._run(
            "INSERT INTO vector_generations(workspace, generation) VALUES (?, 1) "
            "ON CONFLICT (workspace) DO UPDATE SET generation = vector_generations.generation + 1",
            (self.workspace,),
        )
