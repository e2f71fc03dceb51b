"""Disputes, the same SQL on both stores: one row of dispute_versions per version of a
dispute, current over a span of events, and rows to disputes and back."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..domain.model import Dispute, Ruling
from .rows import Row
from .session_base import SessionBase, current_at, marks

# What a forget of either memory erases from every version of a dispute.
DISPUTE_TEXT_COLUMNS = ("reason", "ruling_reason", "evidence")
# What a dispute event may hold as text beside its note (a ruling's evidence and because).
DISPUTE_EVENT_TEXTS = ("evidence", "because")


# Columns of dispute_versions and the fields they hold, read and written by one table.
_DISPUTE_FIELDS = {
    "dispute_id": "id",
    "version": "version",
    "status": "status",
    "reason": "reason",
    "opened_at": "opened_at",
    "opened_by": "opened_by",
}
_RULING_FIELDS = {
    "holds": "holds",
    "ruling_reason": "reason",
    "evidence": "evidence",
    "ruled_at": "at",
    "ruled_by": "actor",
    "retired_version": "retired_version",
}


def dispute_columns(d: Dispute) -> dict[str, Any]:
    ruling = d.ruling
    return {
        **{column: getattr(d, name) for column, name in _DISPUTE_FIELDS.items()},
        **{column: getattr(ruling, name, None) for column, name in _RULING_FIELDS.items()},
        "first_id": d.memory_ids[0],
        "second_id": d.memory_ids[1],
        "linked": int(ruling.linked) if ruling else 0,
    }


def dispute_from_row(row: Row) -> Dispute:
    pair = (row["first_id"], row["second_id"])
    ruling = None
    if row["holds"] is not None:
        ruled = {name: row[column] for column, name in _RULING_FIELDS.items()}
        loses = pair[1] if row["holds"] == pair[0] else pair[0]
        ruling = Ruling(**ruled, loses=loses, linked=bool(row["linked"]))
    opened = {name: row[column] for column, name in _DISPUTE_FIELDS.items()}
    return Dispute(**opened, workspace=row["workspace"], memory_ids=pair, ruling=ruling)


# The operations of a dispute's events (one per memory it touches, per step).
DISPUTE_OPS = ("dispute.open", "dispute.rule", "dispute.undo", "dispute.withdraw")


class DisputeRows(SessionBase):
    """The disputes' part of a store session (the rules are in service/disputes.py)."""

    def put_dispute(self, dispute: Dispute, seq: int) -> None:
        """Make `dispute` the current state, as the version written by event `seq`."""
        self._run(
            "UPDATE dispute_versions SET to_seq = ? WHERE dispute_id = ? AND workspace = ? "
            "AND to_seq IS NULL",
            (seq, dispute.id, self.workspace),
        )
        columns = dispute_columns(dispute)
        self._run(
            f"INSERT INTO dispute_versions(workspace, from_seq, {', '.join(columns)}) "
            f"VALUES (?, ?, {marks(columns)})",
            (self.workspace, seq, *columns.values()),
        )

    def get_dispute(self, dispute_id: str) -> Dispute | None:
        found = self._disputes("v.dispute_id = ?", [dispute_id], None)
        return found[0] if found else None

    def disputes(
        self,
        memory_id: str | None = None,
        statuses: tuple[str, ...] = (),
        at_seq: int | None = None,
    ) -> list[Dispute]:
        """The disputes (as they stood at event `at_seq`; None: now) naming `memory_id`."""
        where, args = ["1 = 1"], []
        if memory_id is not None:
            where.append("(v.first_id = ? OR v.second_id = ?)")
            args += [memory_id, memory_id]
        if statuses:
            where.append(f"v.status IN ({marks(statuses)})")
            args += list(statuses)
        return self._disputes(" AND ".join(where), args, at_seq)

    def disputed_with(
        self, memory_ids: Iterable[str], at_seq: int | None = None
    ) -> dict[str, list[str]]:
        """For each of `memory_ids` in an open dispute (at `at_seq`), the other memories.

        A forgotten memory is absent from every past state, so a dispute naming one is
        left out at every time (now, it is withdrawn anyway)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        listed = marks(ids)
        condition = (
            f"v.status = 'open' AND (v.first_id IN ({listed}) OR v.second_id IN ({listed})) "
            "AND NOT EXISTS (SELECT 1 FROM memories f WHERE f.id IN (v.first_id, v.second_id) "
            "AND f.forgotten_at IS NOT NULL)"
        )
        named: dict[str, list[str]] = {}
        for dispute in self._disputes(condition, [*ids, *ids], at_seq):
            for memory_id in dispute.memory_ids:
                if memory_id in ids:
                    named.setdefault(memory_id, []).append(dispute.other(memory_id))
        return {memory_id: sorted(others) for memory_id, others in named.items()}

    def _disputes(self, condition: str, params: list[Any], at_seq: int | None) -> list[Dispute]:
        span, span_args = current_at(at_seq)
        rows = self._rows(
            f"SELECT * FROM dispute_versions v WHERE v.workspace = ? AND {span} AND {condition} "
            "ORDER BY v.dispute_id",
            (self.workspace, *span_args, *params),
        )
        return [dispute_from_row(row) for row in rows]

    def _forget_disputes(self, memory_id: str) -> None:
        """A forgotten memory leaves no text in a dispute: the reason, the ruling's reason
        and evidence of every version of each dispute naming it go, from the dispute and
        from its events on the other memory too (they may quote what was forgotten). The
        ids, times and actors stay, as a tombstone's do."""
        rows = self._rows(
            "SELECT DISTINCT dispute_id, first_id, second_id FROM dispute_versions "
            "WHERE workspace = ? AND (first_id = ? OR second_id = ?)",
            (self.workspace, memory_id, memory_id),
        )
        erased = ", ".join(f"{column} = NULL" for column in DISPUTE_TEXT_COLUMNS)
        for row in rows:
            self._run(
                f"UPDATE dispute_versions SET {erased}, scrubbed = 1 "
                "WHERE workspace = ? AND dispute_id = ?",
                (self.workspace, row["dispute_id"]),
            )
            events = self._rows(
                "SELECT seq, data FROM events WHERE workspace = ? AND target_id IN (?, ?) "
                f"AND op IN ({marks(DISPUTE_OPS)})",
                (self.workspace, row["first_id"], row["second_id"], *DISPUTE_OPS),
            )
            for event in events:
                data = json.loads(event["data"])
                if data.get("dispute") == row["dispute_id"]:
                    kept = {k: v for k, v in data.items() if k not in DISPUTE_EVENT_TEXTS}
                    self._run(
                        "UPDATE events SET note = NULL, data = ? WHERE seq = ?",
                        (json.dumps(kept), event["seq"]),
                    )
