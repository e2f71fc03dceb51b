"""A replica's queue of writes for its server, the same SQL on both stores (docs/sync.md)."""

from __future__ import annotations

import json
from collections.abc import Collection

from .rows import Row
from .session_base import SessionBase, marks
from .values import QueuedWrite


class QueueRows(SessionBase):
    """The queue's part of a store session."""

    def queued_writes(self, states: Collection[str], limit: int = 1000) -> list[QueuedWrite]:
        """The writes in one of `states`, the oldest first."""
        chosen = sorted(states)
        rows = self._rows(
            f"SELECT * FROM replica_queue WHERE workspace = ? AND state IN ({marks(chosen)}) "
            "ORDER BY queued_at, id LIMIT ?",
            [self.workspace, *chosen, limit],
        )
        return [_queued(row) for row in rows]

    def queued_write(self, item_id: str) -> QueuedWrite | None:
        row = self._row(
            "SELECT * FROM replica_queue WHERE workspace = ? AND id = ?", (self.workspace, item_id)
        )
        return _queued(row) if row else None

    def queue_write(self, item: QueuedWrite) -> None:
        self.ensure_workspace()
        self._run(
            "INSERT INTO replica_queue(id, workspace, op, arguments, target_id, actor, "
            "queued_at, state, answer, done_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item.id, self.workspace, item.op, json.dumps(item.arguments), item.target_id,
             item.actor, item.queued_at, item.state, _dumped(item.answer), item.done_at),
        )  # fmt: skip

    def settle_queued(
        self, item_id: str, state: str, answer: dict[str, object] | None, at: str
    ) -> None:
        """Say how the server answered a queued write (or why a person dropped it). An
        accepted write keeps no arguments: the server holds it now, and a forget there must
        find its text nowhere here."""
        self._run(
            "UPDATE replica_queue SET state = ?, answer = ?, done_at = ?, arguments = "
            "CASE WHEN ? = 'accepted' THEN '{}' ELSE arguments END "
            "WHERE workspace = ? AND id = ?",
            (state, _dumped(answer), at, state, self.workspace, item_id),
        )

    def empty_queued(self, item_id: str) -> None:
        """Keep no arguments of a queued write (a memory it names was forgotten)."""
        self._run(
            "UPDATE replica_queue SET arguments = '{}' WHERE workspace = ? AND id = ?",
            (self.workspace, item_id),
        )


def _queued(row: Row) -> QueuedWrite:
    return QueuedWrite(
        id=row["id"],
        op=row["op"],
        arguments=json.loads(row["arguments"]),
        target_id=row["target_id"],
        actor=row["actor"],
        queued_at=row["queued_at"],
        state=row["state"],
        answer=json.loads(row["answer"]) if row["answer"] else None,
        done_at=row["done_at"],
    )


def _dumped(value: object) -> str | None:
    return json.dumps(value) if value is not None else None
