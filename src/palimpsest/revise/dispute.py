"""The rules of a dispute's steps, as pure functions (DESIGN section 2, disputes).

A dispute names two active memories said to contradict each other. Every step touches
both memories (a new version of each, with its event): opening flags them; a ruling keeps
one and retires the other as superseded by it; an undo puts the loser back as it was
before the ruling. Nothing here reads a store: the service passes the memories in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..domain.errors import Conflict, Forbidden, PalimpsestError, ValidationError
from ..domain.model import Dispute, Memory
from .decide import Step
from .policy import require_because
from .screen import screen_notes


def check_disputable(memories: list[Memory]) -> None:
    """Refuse a pair that cannot be disputed: one memory twice, or one no longer active."""
    if len({m.id for m in memories}) != len(memories):
        raise ValidationError(
            "A dispute is between two different memories: name two ids.", field="ids"
        )
    then = (": only active memories can be disputed (a retired one is already out of recall). "
            "Reactivate it with revise first if it should stand against the other.")  # fmt: skip
    _all_active(memories, ValidationError, "ids", then)


def _all_active(
    memories: list[Memory], refusal: type[PalimpsestError], field: str, then: str
) -> None:
    """Refuse (`refusal` on `field`) the first memory that is not active: its id and
    status, then what `then` says."""
    for memory in memories:
        if memory.status != "active":
            raise refusal(f"{memory.id} is {memory.status}{then}", field=field)


def refuse_open_twice(existing: Dispute | None, field: str = "ids") -> None:
    """At most one open dispute between two memories (an undo reopens one too)."""
    if existing is not None:
        raise Conflict(
            f"Dispute {existing.id} between these two memories is already open: rule on it "
            "(dispute list shows it).",
            field=field,
        )


def touched(memory: Memory, op: str, note: str | None, data: dict[str, Any]) -> Step:
    """A step that changes nothing of `memory` but its version: a dispute step touched it."""
    return Step(op, memory, memory.replace(version=memory.version + 1), note, data)


def caught_up(step: Step, current: Memory | None) -> Step:
    """`step` over the memory's `current` version when only dispute touches (a version
    number, nothing else) came between them in this operation: a batch that retires both
    memories of a dispute read the second before the first's withdrawal touched it."""
    old = step.old
    if current is None or old is None or current.version == old.version:
        return step
    if current.replace(version=old.version) != old:
        return step  # a real change came between: the store refuses the stale version
    return replace(step, old=current, new=step.new.replace(version=current.version + 1))


def check_open(dispute: Dispute) -> None:
    if dispute.status != "open":
        again = "undo the ruling" if dispute.status == "ruled" else "open a new dispute"
        raise Conflict(
            f"Dispute {dispute.id} is {dispute.status}, not open: only an open dispute can be "
            f"ruled on ({again} to dispute these memories again).",
            field="dispute",
        )


def loser_of(dispute: Dispute, holds: str) -> str:
    """The memory a ruling that `holds` holds retires: the other one of the dispute."""
    if holds not in dispute.memory_ids:
        first, second = dispute.memory_ids
        raise ValidationError(
            f"`holds` names one of the dispute's memories: {first} or {second}.", field="holds"
        )
    return dispute.other(holds)


def check_holder(holder: Memory) -> None:
    then = ", so it cannot be ruled to hold: reactivate it with revise first."
    _all_active([holder], ValidationError, "holds", then)


def check_may_retire(loser: Memory, *, actor: str, may_override: bool) -> None:
    """A ruling retires (or its undo reactivates) the loser: someone else's memory only by
    an actor who may override, the ruling's reason standing as the override's."""
    if loser.owner not in (None, actor) and not may_override:
        raise Forbidden(
            f"{loser.id} belongs to {loser.owner}; only an editor or owner of the workspace "
            "may rule against it. Ask one to rule, or leave the dispute open."
        )


def check_may_withdraw(
    leaving: Memory, dispute: Dispute, *, actor: str, may_override: bool
) -> None:
    """Retiring a disputed memory withdraws its dispute, which settles it as a ruling would:
    someone else's memory only by an actor who may rule against it."""
    if leaving.owner not in (None, actor) and not may_override:
        raise Forbidden(
            f"{leaving.id} belongs to {leaving.owner} and stands in the open dispute "
            f"{dispute.id}, which retiring it would settle: only an editor or owner of the "
            "workspace may. Ask one to rule on the dispute, or leave it open."
        )


def losing(loser: Memory, holds: str, dispute_id: str, data: dict[str, Any], *,
           reason: str, because: str | None) -> Step:  # fmt: skip
    """The loser's step in a ruling: retired as superseded by `holds` if it was active (a
    rule needs `because`, as any retirement of a rule does); else only touched."""
    if loser.status != "active":
        return touched(loser, "dispute.rule", reason, data)
    retired = loser.replace(
        status="superseded",
        status_note=f"lost dispute {dispute_id}",
        superseded_by=holds,
        version=loser.version + 1,
    )
    require_because(loser, retired, because)
    screen_notes(retired, note=reason, because=because)
    return Step("dispute.rule", loser, retired, reason, data)


def check_undoable(dispute: Dispute) -> None:
    if dispute.status != "ruled" or dispute.ruling is None:
        raise Conflict(
            f"Dispute {dispute.id} is {dispute.status}: only a ruling can be undone.",
            field="dispute",
        )


def check_reopenable(memories: list[Memory]) -> None:
    """An undo opens the dispute again: both its memories must be active to stand in it."""
    then = (" now, and an open dispute is between two active memories: reactivate it with "
            "revise first, or let the ruling stand.")  # fmt: skip
    _all_active(memories, Conflict, "dispute", then)


def restoring(loser: Memory, before: Memory | None, holds: str, data: dict[str, Any], *,
              reason: str, retired_version: int | None) -> Step:  # fmt: skip
    """The loser's step in an undo: back to its state before the ruling (`before`, None if
    that version was forgotten), refused if something else changed its status since."""
    if retired_version is None:  # the ruling found it retired already and left it so
        return touched(loser, "dispute.undo", reason, data)
    if (loser.status, loser.superseded_by) != ("superseded", holds):
        raise Conflict(
            f"{loser.id} changed status since the ruling (it is {loser.status} now), so the "
            "ruling cannot be undone as a whole: change it with revise instead.",
            field="dispute",
        )
    restored = loser.replace(
        status=before.status if before else "active",
        status_note=before.status_note if before else None,
        superseded_by=before.superseded_by if before else None,
        version=loser.version + 1,
    )
    return Step("dispute.undo", loser, restored, reason, data)
