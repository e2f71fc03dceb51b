"""Rows of dispute_versions to disputes and back, the same for every SQL store."""

from __future__ import annotations

from typing import Any

from ..domain.model import Dispute, Ruling
from .rows import Row

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
