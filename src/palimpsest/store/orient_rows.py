"""What orient, usefulness and the session hooks read and keep, alike on both stores.

Usefulness marks are events (op `feedback`) that make no version: they are counted from
the events through a partial index, so a forget, which empties its events' data, takes its
marks with it. Agent sessions are the hooks' bookkeeping in a table of their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..domain.model import Event, Memory
from . import AgentSession
from .rows import Row, event_from_row, memory_from_row

FEEDBACK_OP = "feedback"
FEEDBACK_VALUES = ("helped", "noise")


class OrientRows:
    """Mixed into a store session; `_rows` and `_run` are the backend's."""

    workspace: str

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        raise NotImplementedError

    def _run(self, sql: str, params: Iterable[Any] = ()) -> None:
        raise NotImplementedError

    # -- usefulness ------------------------------------------------------------------------

    def feedback_counts(self, memory_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        rows = self._rows(
            "SELECT target_id, data FROM events WHERE workspace = ? AND op = 'feedback' "
            f"AND target_id IN ({', '.join('?' for _ in ids)})",
            (self.workspace, *ids),
        )
        return _counted(rows)

    def all_feedback_counts(self) -> dict[str, tuple[int, int]]:
        rows = self._rows(
            "SELECT target_id, data FROM events WHERE workspace = ? AND op = 'feedback'",
            (self.workspace,),
        )
        return _counted(rows)

    # -- what orient reads -------------------------------------------------------------------

    def unverified_since(
        self, notebook_ids: tuple[str, ...] | None, cutoffs: dict[str, str], limit: int
    ) -> list[Memory]:
        if not cutoffs:
            return []
        ages = " OR ".join(
            "(v.kind = ? AND coalesce(v.verified_at, v.recorded_at) < ?)" for _ in cutoffs
        )
        args = [value for kind, cutoff in cutoffs.items() for value in (kind, cutoff)]
        return self._least_checked(f"({ages})", args, notebook_ids, limit)

    def with_evidence(self, notebook_ids: tuple[str, ...] | None, limit: int) -> list[Memory]:
        evidence = (
            "(v.anchors <> '[]' OR (v.check_json IS NOT NULL "
            "AND v.kind NOT IN ('rule', 'orientation')))"
        )
        return self._least_checked(evidence, [], notebook_ids, limit)

    def _least_checked(
        self, condition: str, args: list[Any], notebook_ids: tuple[str, ...] | None, limit: int
    ) -> list[Memory]:
        """Current active memories meeting `condition` in the notebooks named (None: all),
        the least recently verified (else recorded) first, at most `limit`."""
        if notebook_ids is not None and not notebook_ids:
            return []
        where = f"v.workspace = ? AND v.to_seq IS NULL AND v.status = 'active' AND {condition}"
        args = [self.workspace, *args]
        if notebook_ids is not None:
            where += f" AND v.notebook_id IN ({', '.join('?' for _ in notebook_ids)})"
            args += list(notebook_ids)
        rows = self._rows(
            f"SELECT v.* FROM memory_versions v WHERE {where} "
            "ORDER BY coalesce(v.verified_at, v.recorded_at), v.memory_id LIMIT ?",
            [*args, limit],
        )
        return [memory_from_row(row) for row in rows]

    def memory_events_after(self, seq: int, notebook_id: str | None, limit: int) -> list[Event]:
        where, args = "workspace = ? AND seq > ? AND target_type = 'memory'", [self.workspace, seq]
        if notebook_id is not None:
            where += " AND notebook_id = ?"
            args.append(notebook_id)
        rows = self._rows(
            f"SELECT * FROM events WHERE {where} ORDER BY seq LIMIT ?", [*args, limit]
        )
        return [event_from_row(row) for row in rows]

    # -- agent sessions ------------------------------------------------------------------------

    def agent_session(self, session_id: str) -> AgentSession | None:
        rows = self._rows(
            "SELECT * FROM agent_sessions WHERE workspace = ? AND session_id = ?",
            (self.workspace, session_id),
        )
        return _session(rows[0]) if rows else None

    def start_agent_session(self, session: AgentSession, prune_before: str) -> AgentSession:
        self._run(
            "DELETE FROM agent_sessions WHERE workspace = ? AND started_at < ?",
            (self.workspace, prune_before),
        )
        self._run(
            "INSERT INTO agent_sessions(workspace, session_id, notebook_id, started_seq, "
            "started_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (self.workspace, session.session_id, session.notebook_id, session.started_seq,
             session.started_at),
        )  # fmt: skip
        kept = self.agent_session(session.session_id)
        assert kept is not None
        return kept

    def mark_session_asked(self, session_id: str, at: str) -> bool:
        # One statement decides it: two hooks racing cannot both ask.
        rows = self._rows(
            "UPDATE agent_sessions SET asked_at = ? WHERE workspace = ? AND session_id = ? "
            "AND asked_at IS NULL RETURNING session_id",
            (at, self.workspace, session_id),
        )
        return bool(rows)


def _counted(rows: list[Row]) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = {}
    for row in rows:
        data = row["data"]
        mark = (json.loads(data) if isinstance(data, str) else data or {}).get("feedback")
        if mark in FEEDBACK_VALUES:  # a forgotten memory's events hold no data any more
            counts.setdefault(row["target_id"], [0, 0])[FEEDBACK_VALUES.index(mark)] += 1
    return {memory_id: (helped, noise) for memory_id, (helped, noise) in counts.items()}


def _session(row: Row) -> AgentSession:
    return AgentSession(
        session_id=row["session_id"],
        notebook_id=row["notebook_id"],
        started_seq=int(row["started_seq"]),
        started_at=row["started_at"],
        asked_at=row["asked_at"],
    )
