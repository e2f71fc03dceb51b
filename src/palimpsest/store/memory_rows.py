"""Memories and their versions, the same SQL on both stores: one row per version in
memory_versions, current over a span of events (from_seq up to to_seq), and a forget that
scrubs every version of a memory and the content of its events."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..domain.model import Memory, MemoryVersion, Tombstone, now_utc
from .rows import CONTENT_COLUMNS, Row, memory_columns, memory_from_row
from .session_base import SessionBase, current_at, marks
from .values import PendingScrub


class MemoryRows(SessionBase):
    """The memories' part of a store session."""

    def _versions(self, condition: str, params: Iterable[Any]) -> list[Memory]:
        rows = self._rows(
            f"SELECT * FROM memory_versions v WHERE {condition} "
            f"AND {self.UNINDEXED}v.workspace = ? AND v.scrubbed = 0 ORDER BY v.memory_id",
            (*params, self.workspace),
        )
        return [memory_from_row(row) for row in rows]

    def get_memory(self, memory_id: str) -> Memory | None:
        found = self._versions("v.memory_id = ? AND v.to_seq IS NULL", (memory_id,))
        return found[0] if found else None

    def get_tombstone(self, memory_id: str) -> Tombstone | None:
        row = self._row(
            "SELECT * FROM memories WHERE id = ? AND workspace = ? AND forgotten_at IS NOT NULL",
            (memory_id, self.workspace),
        )
        if row is None:
            return None
        return Tombstone(row["id"], row["forgotten_at"], row["forgotten_by"], row["forget_reason"])

    def memory_versions(self, memory_id: str) -> list[MemoryVersion]:
        rows = self._rows(
            "SELECT v.*, e.at AS event_at, e.actor AS event_actor, e.op AS event_op "
            "FROM memory_versions v JOIN events e ON e.seq = v.from_seq "
            f"WHERE v.memory_id = ? AND {self.UNINDEXED}v.workspace = ? ORDER BY v.version",
            (memory_id, self.workspace),
        )
        return [
            MemoryVersion(
                version=row["version"],
                seq=row["from_seq"],
                at=row["event_at"],
                actor=row["event_actor"],
                op=row["event_op"],
                memory=None if row["scrubbed"] else memory_from_row(row),
            )
            for row in rows
        ]

    def memory_at(self, memory_id: str, seq: int) -> Memory | None:
        span, span_args = current_at(seq)
        found = self._versions(f"v.memory_id = ? AND {span}", (memory_id, *span_args))
        return found[0] if found else None

    def memories_at(self, seq: int | None, notebook_id: str | None = None) -> list[Memory]:
        span, span_args = current_at(seq)
        if notebook_id is None:
            return self._versions(span, span_args)
        return self._versions(f"{span} AND v.notebook_id = ?", (*span_args, notebook_id))

    def all_versions(self) -> Iterator[Memory]:
        rows = self._cursor(
            "SELECT * FROM memory_versions WHERE workspace = ? AND scrubbed = 0 ORDER BY rowid",
            (self.workspace,),
        )
        return (memory_from_row(row) for row in rows)

    def find_by_text(self, notebook_id: str, norm_text: str) -> list[Memory]:
        return self._versions(
            "v.notebook_id = ? AND v.norm_text = ? AND v.to_seq IS NULL", (notebook_id, norm_text)
        )

    def key_holder(self, notebook_id: str, key: str) -> Memory | None:
        found = self._versions(
            "v.notebook_id = ? AND v.key = ? AND v.status = 'active' AND v.to_seq IS NULL",
            (notebook_id, key),
        )
        return found[0] if found else None

    def memories_with_key(self, key: str, at_seq: int | None) -> list[Memory]:
        span, span_args = current_at(at_seq)
        rows = self._rows(  # by (workspace, key): no notebook narrows this lookup
            f"SELECT * FROM memory_versions v WHERE v.workspace = ? AND v.key = ? AND {span} "
            "AND v.scrubbed = 0 ORDER BY v.memory_id LIMIT 50",
            (self.workspace, key, *span_args),
        )
        return [memory_from_row(row) for row in rows]

    def put_memory(self, memory: Memory, seq: int) -> None:
        self._run(
            "INSERT INTO memories(id, workspace) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (memory.id, self.workspace),
        )
        self._run(
            "UPDATE memory_versions SET to_seq = ? WHERE memory_id = ? AND to_seq IS NULL",
            (seq, memory.id),
        )
        columns = memory_columns(memory)
        stored = {**columns, **self._search_values(columns)}
        inserted = self._row(
            f"INSERT INTO memory_versions(memory_id, version, workspace, from_seq, "
            f"{', '.join(stored)}) VALUES (?, ?, ?, ?, {marks(stored)}) RETURNING rowid",
            (memory.id, memory.version, self.workspace, seq, *stored.values()),
        )
        assert inserted is not None
        self._indexed(int(inserted["rowid"]), stored)

    def forget_memory(self, tombstone: Tombstone, seq: int) -> None:
        rows = self._rows(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND workspace = ? AND scrubbed = 0",
            (tombstone.id, self.workspace),
        )
        for row in rows:
            self._scrub(row)
        self._run(
            "UPDATE memory_versions SET to_seq = ? WHERE memory_id = ? AND to_seq IS NULL",
            (seq, tombstone.id),
        )
        self._run(
            "UPDATE events SET note = NULL, data = '{}', fields = '[]' "
            "WHERE target_id = ? AND seq < ?",
            (tombstone.id, seq),
        )
        self._run(
            "UPDATE memories SET forgotten_at = ?, forgotten_by = ?, forget_reason = ? "
            "WHERE id = ?",
            (tombstone.forgotten_at, tombstone.actor, tombstone.reason, tombstone.id),
        )
        self._drop_responses_naming(tombstone.id)
        self._forget_disputes(tombstone.id)
        self._mark_pending(tombstone.id, tombstone.forgotten_at)
        self._after_scrub()

    def forget_version(self, memory_id: str, version: int) -> None:
        row = self._row(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND version = ? AND workspace = ?",
            (memory_id, version, self.workspace),
        )
        if row is None or row["scrubbed"]:
            return
        self._scrub(row)
        self._run(
            "UPDATE events SET note = NULL, data = '{}' WHERE target_id = ? AND version = ?",
            (memory_id, version),
        )
        self._mark_pending(memory_id, now_utc())
        self._after_scrub()

    def _mark_pending(self, target_id: str, at: str) -> None:
        """Note, in the forget's own transaction, that bytes may linger until the scrub."""
        self._run(
            "INSERT INTO scrub_pending(workspace, target_id, at) VALUES (?, ?, ?)",
            (self.workspace, target_id, at),
        )

    def pending_scrubs(self) -> list[PendingScrub]:
        rows = self._rows(
            "SELECT target_id, min(at) AS at FROM scrub_pending WHERE workspace = ? "
            "GROUP BY target_id ORDER BY min(at), target_id",
            (self.workspace,),
        )
        return [PendingScrub(row["target_id"], row["at"]) for row in rows]

    def _scrub(self, row: Row) -> None:
        self._unindexed(row)
        self._run("DELETE FROM memory_vectors WHERE version_rowid = ?", (row["rowid"],))
        self._next_vector_generation()
        assignments = ", ".join(f"{c} = NULL" for c in CONTENT_COLUMNS)
        self._run(
            f"UPDATE memory_versions SET {assignments}, scrubbed = 1 WHERE rowid = ?",
            (row["rowid"],),
        )
