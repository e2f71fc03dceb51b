"""Rows of dispute_versions to disputes and back, the same for every SQL store."""

from __future__ import annotations

from typing import Any

from ..model import Dispute, Ruling
from .rows import Row

# What a forget of either memory erases from every version of a dispute.
DISPUTE_TEXT_COLUMNS = ("reason", "ruling_reason", "evidence")
# What a dispute event may hold as text beside its note (a ruling's evidence and because).
DISPUTE_EVENT_TEXTS = ("evidence", "because")


def dispute_columns(d: Dispute) -> dict[str, Any]:
    ruling = d.ruling
    return {
        "dispute_id": d.id,
        "version": d.version,
        "first_id": d.memory_ids[0],
        "second_id": d.memory_ids[1],
        "status": d.status,
        "reason": d.reason,
        "opened_at": d.opened_at,
        "opened_by": d.opened_by,
        "holds": ruling.holds if ruling else None,
        "ruling_reason": ruling.reason if ruling else None,
        "evidence": ruling.evidence if ruling else None,
        "ruled_at": ruling.at if ruling else None,
        "ruled_by": ruling.actor if ruling else None,
        "retired_version": ruling.retired_version if ruling else None,
        "linked": int(ruling.linked) if ruling else 0,
    }


def dispute_from_row(row: Row) -> Dispute:
    pair = (row["first_id"], row["second_id"])
    ruling = None
    if row["holds"] is not None:
        loses = pair[1] if row["holds"] == pair[0] else pair[0]
        ruling = Ruling(
            holds=row["holds"],
            loses=loses,
            reason=row["ruling_reason"],
            evidence=row["evidence"],
            at=row["ruled_at"],
            actor=row["ruled_by"],
            retired_version=row["retired_version"],
            linked=bool(row["linked"]),
        )
    return Dispute(
        id=row["dispute_id"],
        workspace=row["workspace"],
        memory_ids=pair,
        reason=row["reason"],
        opened_at=row["opened_at"],
        opened_by=row["opened_by"],
        version=row["version"],
        status=row["status"],
        ruling=ruling,
    )


# The operations of a dispute's events (one per memory it touches, per step).
DISPUTE_OPS = ("dispute.open", "dispute.rule", "dispute.undo", "dispute.withdraw")
