"""A memory leaving `active` other than by a ruling (revise retires or supersedes it,
remember supersedes it, forget erases it) cannot stand against another: its open disputes
are withdrawn in the same transaction. The retiring event names them (`withdraws`), and
the other memory of each gets a `dispute.withdraw` event naming it and the status it left
for. Retiring settles a dispute as a ruling would, so only whoever may rule against the
memory may retire it while a dispute is open.

Every memory step is written through `ServiceBase._write_step`, which calls `step_written`
here for each step that changes an existing memory other than a dispute's own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..domain.model import Dispute, Memory
from ..revise import Step
from ..revise.dispute import caught_up, check_may_withdraw, touched
from ..store import StoreWriter
from .answers import Step as StepAnswer
from .answers import Withdrawn

if TYPE_CHECKING:
    from .base import ServiceBase


def step_written(
    service: ServiceBase, tx: StoreWriter, step: Step, op_id: str, now: str
) -> StepAnswer:
    """Write `step` of an existing memory (read again as it is now), withdrawing the open
    disputes it leaves; the answer lists them in `disputes_withdrawn`."""
    assert step.old is not None
    old = step.old
    step = caught_up(step, tx.get_memory(old.id))
    leaves = old.status == "active" and step.new.status != "active"
    found = tx.disputes(old.id, ("open",)) if leaves else []
    if found:
        check_may_withdraw(old, found[0], actor=service.actor, may_override=service.may_override)
        step = replace(step, data={**step.data, "withdraws": [d.id for d in found]})
    result = service._write_version(tx, step, op_id, now)
    why = {"with_status": step.new.status}
    withdrawn = [_withdraw(service, tx, d, step.new, why, now, op_id) for d in found]
    if withdrawn:
        result["disputes_withdrawn"] = withdrawn
    return result


def withdraw_disputes(
    service: ServiceBase, tx: StoreWriter, memory: Memory, now: str, op_id: str
) -> list[Withdrawn]:
    """`memory` is being forgotten: each open dispute naming it is withdrawn, as an event
    on the other memory (whose flag goes). Called by forget before the memory's scrub,
    which then erases the texts of every dispute naming it."""
    return [_withdraw(service, tx, d, memory, {}, now, op_id)
            for d in tx.disputes(memory.id, ("open",))]  # fmt: skip


def _withdraw(
    service: ServiceBase,
    tx: StoreWriter,
    dispute: Dispute,
    leaving: Memory,
    why: dict[str, Any],
    now: str,
    op_id: str,
) -> Withdrawn:
    """Withdraw `dispute`, which `leaving` leaves: an event on the other memory says so."""
    other = tx.get_memory(dispute.other(leaving.id))
    assert other is not None  # a forget or a retirement withdraws its disputes first
    data = {"dispute": dispute.id, "with": leaving.id, **why}
    result = service._write_version(tx, touched(other, "dispute.withdraw", None, data), op_id, now)
    tx.put_dispute(dispute.replace(status="withdrawn", version=dispute.version + 1),
                   result["seq"])  # fmt: skip
    return {"id": result["id"], "version": result["version"], "seq": result["seq"],
            "dispute": dispute.id}  # fmt: skip
