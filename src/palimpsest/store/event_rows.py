"""The event log, the same SQL on both stores: one sequence for the whole store."""

from __future__ import annotations

import json

from ..domain.model import Event
from .rows import event_from_row
from .session_base import SessionBase
from .values import DayCount, EventFilter


class EventRows(SessionBase):
    """The events' part of a store session."""

    def append_event(self, event: Event) -> int:
        row = self._row(
            "INSERT INTO events(workspace, op_id, at, actor, op, target_type, target_id, "
            "notebook_id, version, fields, note, data, key_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (self.workspace, event.op_id, event.at, event.actor, event.op, event.target_type,
             event.target_id, event.notebook_id, event.version, json.dumps(list(event.fields)),
             event.note, json.dumps(event.data), event.key_id or self.key_id),
        )  # fmt: skip
        assert row is not None
        return int(row["seq"])

    def events(self, query: EventFilter) -> list[Event]:
        where, args = ["workspace = ?"], [self.workspace]
        for condition, value in (
            ("target_id = ?", query.target_id),
            ("actor = ?", query.actor),
            ("at >= ?", query.since),
            ("at <= ?", query.until),
        ):
            if value is not None:
                where.append(condition)
                args.append(value)
        if query.notebook_id is not None:
            where.append("(notebook_id = ? OR target_id = ?)")
            args.extend([query.notebook_id, query.notebook_id])
        rows = self._rows(
            f"SELECT * FROM (SELECT * FROM events WHERE {' AND '.join(where)} "
            "ORDER BY seq DESC LIMIT ?) AS recent ORDER BY seq",
            [*args, query.limit],
        )
        return [event_from_row(row) for row in rows]

    def event_days(self, notebook_id: str, since: str) -> list[DayCount]:
        # Times are RFC 3339 in UTC with a four-digit year: the first ten characters are
        # the day, on both stores, with no date functions to tell apart.
        rows = self._rows(
            "SELECT substr(at, 1, 10) AS day, op, count(*) AS n FROM events "
            "WHERE workspace = ? AND (notebook_id = ? OR target_id = ?) AND at >= ? "
            "GROUP BY substr(at, 1, 10), op ORDER BY day, op",
            (self.workspace, notebook_id, notebook_id, since),
        )
        return [DayCount(row["day"], row["op"], int(row["n"])) for row in rows]

    def seq_at(self, time: str) -> int:
        row = self._row(
            "SELECT max(seq) AS seq FROM events WHERE workspace = ? AND at <= ?",
            (self.workspace, time),
        )
        return int(row["seq"] or 0) if row else 0

    def last_event(self) -> Event | None:
        row = self._row(
            "SELECT * FROM events WHERE workspace = ? ORDER BY seq DESC LIMIT 1", (self.workspace,)
        )
        return event_from_row(row) if row else None
