"""Disputes: two memories that contradict each other, as a review queue (DESIGN §2).

`dispute(action=...)` is the one entry point the adapters call: open a dispute between
two active memories, list the disputes, rule on one (which holds, why, on what evidence:
the other retires as superseded by it), or undo a ruling. Every step writes one event
per memory it touches (both, each one version up) and a new version of the dispute, in
one transaction. Forgetting a memory of an open dispute withdraws the dispute (an event
on the other memory), and erases the dispute's texts: they may quote what was forgotten.
A memory retired by any other path than a ruling withdraws its open disputes the same way
(withdrawals.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typing_extensions import Unpack

from ..domain.errors import Conflict, NotFound, ValidationError
from ..domain.ids import new_id
from ..domain.model import Dispute, Link, Memory, Ruling
from ..revise import Step, Unmatched, refuse_repeats
from ..revise.dispute import (
    check_disputable,
    check_holder,
    check_may_retire,
    check_open,
    check_reopenable,
    check_undoable,
    loser_of,
    losing,
    refuse_open_twice,
    restoring,
    touched,
)
from ..screening import gate
from ..store import StoreReader, StoreWriter
from .answers import DisputeAnswer, DisputeShown, MemoryLine
from .base import MAX_ID, MAX_LIMIT, ServiceBase, id_list, memory_id_arg, refuse_nul
from .queueing import queued_on_replica
from .requests import DisputeRequest

# Per action: the parameters it needs, and those it may take besides.
ACTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "open": (frozenset({"ids", "reason"}), frozenset()),
    "list": (frozenset(), frozenset({"ids", "include_closed", "limit"})),
    "rule": (frozenset({"dispute", "holds", "reason"}), frozenset({"evidence", "because"})),
    "undo": (frozenset({"dispute", "reason"}), frozenset()),
}
WRITE_OPTIONS = frozenset({"idempotency_key", "dry_run"})
SHOWN_TEXT = 300  # a listed memory's text is cut here: enough to rule, inspect has the rest
LISTED = 20  # disputes a list shows unless `limit` says otherwise


class DisputeOps(ServiceBase):
    @queued_on_replica("dispute")
    def dispute(self, *, action: str, **given: Unpack[DisputeRequest]) -> DisputeAnswer:
        """Open, list, rule on or undo a dispute; `given` as the action takes it (ACTIONS)."""
        action, (needs, takes) = _action(action)
        allowed = needs | takes | (WRITE_OPTIONS if action != "list" else frozenset())
        present = {k: v for k, v in given.items() if v is not None and v is not False}
        for name in sorted(set(present) - allowed):
            listed = ", ".join(f"`{n}`" for n in sorted(needs | takes)) or "no other parameter"
            raise ValidationError(
                f"`{name}` does not go with action {action!r}, which takes {listed}.", field=name
            )
        for name in sorted(needs - set(present)):
            raise ValidationError(f"Action {action!r} needs `{name}`.", field=name)
        call: dict[str, Callable[..., DisputeAnswer]] = {
            "open": self.open_dispute,
            "list": self.list_disputes,
            "rule": self.rule_dispute,
            "undo": self.undo_ruling,
        }
        return call[action](**present)

    # -- open --------------------------------------------------------------------------

    def open_dispute(
        self,
        *,
        ids: list[str],
        reason: str,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> DisputeAnswer:
        """Open a dispute between two active memories: both stay in recall, flagged."""
        refuse_repeats(ids, "ids")
        pair = id_list(ids, "ids")
        if len(pair) != 2:
            raise ValidationError("`ids` names the two memories that contradict.", field="ids")
        reason = _text("reason", reason)
        request = {"action": "open", "ids": sorted(pair), "reason": reason}

        def body(tx: StoreWriter, now: str, op_id: str) -> DisputeAnswer:
            memories = [self._get(tx, memory_id, field="ids") for memory_id in pair]
            check_disputable(memories)
            first, second = sorted(pair)
            refuse_open_twice(_open_between(tx, first, second))
            dispute = Dispute(new_id("dp"), self.workspace, (first, second), reason, now,
                              self.actor)  # fmt: skip
            steps = [
                touched(m, "dispute.open", reason, {"dispute": dispute.id, "with": other.id})
                for m, other in ((memories[0], memories[1]), (memories[1], memories[0]))
            ]
            return self._dispute_step(tx, dispute, steps, now, op_id)

        return self._write("dispute", request, idempotency_key, dry_run, body)

    # -- list --------------------------------------------------------------------------

    def list_disputes(
        self, *, ids: list[str] | None = None, include_closed: bool = False, limit: int = LISTED
    ) -> DisputeAnswer:
        """The open disputes (and ruled and withdrawn ones with `include_closed`), oldest
        first, each with the memories it names; only those naming one of `ids` if given.
        At most `limit`; `more` counts those left out."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"`limit` must be from 1 to {MAX_LIMIT}.", field="limit")
        if not isinstance(include_closed, bool):
            raise ValidationError("`include_closed` must be true or false.", field="include_closed")
        statuses = () if include_closed else ("open",)
        named = id_list(ids, "ids")
        with self.store.read(self.workspace) as tx:
            for memory_id in named:  # a forgotten memory's closed disputes stay listable
                if tx.get_memory(memory_id) is None and tx.get_tombstone(memory_id) is None:
                    self._get(tx, memory_id, field="ids")  # not_found, naming it
            if named:
                found = {d.id: d for m in named for d in tx.disputes(m, statuses)}
                disputes = list(found.values())
            else:
                disputes = tx.disputes(statuses=statuses)
            disputes.sort(key=lambda d: (d.opened_at, d.id))
            listed: DisputeAnswer = {"disputes": [dispute_view(tx, d) for d in disputes[:limit]]}
            if len(disputes) > limit:
                listed["more"] = len(disputes) - limit
            return listed

    # -- rule --------------------------------------------------------------------------

    def rule_dispute(
        self,
        *,
        dispute: str,
        holds: str,
        reason: str,
        evidence: str | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> DisputeAnswer:
        """Rule that `holds` holds: the other memory retires as superseded by it."""
        dispute_id = _dispute_id(dispute)
        holds = memory_id_arg(holds, "holds")
        reason = _text("reason", reason)
        if evidence is not None:
            evidence = _text("evidence", evidence)
            gate.screen_record([("reason", reason), ("evidence", evidence)])
        if because is not None:
            because = _text("because", because, limit_name="because")
        request = {"action": "rule", "dispute": dispute_id, "holds": holds, "reason": reason,
                   "evidence": evidence, "because": because}  # fmt: skip

        def body(tx: StoreWriter, now: str, op_id: str) -> DisputeAnswer:
            current = _find(tx, dispute_id)
            check_open(current)
            loser_id = loser_of(current, holds)
            holder = self._get(tx, holds, field="holds")
            check_holder(holder)
            loser = self._get(tx, loser_id, field="dispute")
            check_may_retire(loser, actor=self.actor, may_override=self.may_override)
            data: dict[str, Any] = {"dispute": current.id, "holds": holds, "loses": loser.id}
            data |= {"evidence": evidence} if evidence is not None else {}
            data |= {"because": because} if because is not None else {}
            lost = losing(loser, holds, current.id, data, reason=reason, because=because)
            # A loser found retired already stays as it was: no status, no link.
            retired = lost.new.version if lost.new.status != loser.status else None
            linked = retired is not None and self._link_once(tx, holds, loser.id, now)
            ruling = Ruling(holds, loser.id, reason, evidence, now, self.actor, retired, linked)
            ruled = current.replace(status="ruled", ruling=ruling, version=current.version + 1)
            steps = [lost, touched(holder, "dispute.rule", reason, data)]
            answer = self._dispute_step(tx, ruled, steps, now, op_id)
            # Name the loser as superseded only when the ruling made it so.
            answer["holds"] = holds
            if retired is not None:
                answer["superseded"] = loser.id
            else:
                answer["loses"] = loser.id
            return answer

        return self._write("dispute", request, idempotency_key, dry_run, body)

    def _link_once(self, tx: StoreWriter, holds: str, loses: str, now: str) -> bool:
        """Link `holds` as superseding `loses` unless they are linked so already."""
        if any(ln.type == "supersedes" and ln.target_id == loses for ln in tx.links(holds)):
            return False
        tx.add_link(Link(new_id("ln"), self.workspace, holds, loses, "supersedes", now,
                         self.actor))  # fmt: skip
        return True

    # -- undo --------------------------------------------------------------------------

    def undo_ruling(
        self,
        *,
        dispute: str,
        reason: str,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> DisputeAnswer:
        """Take a ruling back: the loser as it was before it, the dispute open again."""
        dispute_id = _dispute_id(dispute)
        reason = _text("reason", reason)
        request = {"action": "undo", "dispute": dispute_id, "reason": reason}

        def body(tx: StoreWriter, now: str, op_id: str) -> DisputeAnswer:
            current = _find(tx, dispute_id)
            check_undoable(current)
            ruling = current.ruling
            assert ruling is not None
            refuse_open_twice(_open_between(tx, *current.memory_ids), field="dispute")
            holder = self._get(tx, ruling.holds, field="dispute")
            loser = self._get(tx, ruling.loses, field="dispute")
            check_may_retire(loser, actor=self.actor, may_override=self.may_override)
            data = {"dispute": current.id, "holds": ruling.holds, "loses": loser.id}
            before = _version_before(tx, loser.id, ruling.retired_version)
            back = restoring(loser, before, ruling.holds, data, reason=reason,
                             retired_version=ruling.retired_version)  # fmt: skip
            check_reopenable([holder, back.new])
            try:
                self._check_key(tx, loser, back.new)
            except Unmatched as exc:
                raise Conflict(f"The ruling cannot be undone: {exc.reason}.",
                               field="dispute") from None  # fmt: skip
            if ruling.linked:
                self._unlink(tx, ruling.holds, loser.id)
            reopened = current.replace(status="open", ruling=None, version=current.version + 1)
            steps = [back, touched(holder, "dispute.undo", reason, data)]
            return self._dispute_step(tx, reopened, steps, now, op_id)

        return self._write("dispute", request, idempotency_key, dry_run, body)

    def _unlink(self, tx: StoreWriter, holds: str, loses: str) -> None:
        for link in tx.links(holds):
            if (link.source_id, link.target_id, link.type) == (holds, loses, "supersedes"):
                tx.remove_link(link.id)

    # -- shared ------------------------------------------------------------------------

    def _dispute_step(
        self, tx: StoreWriter, dispute: Dispute, steps: list[Step], now: str, op_id: str
    ) -> DisputeAnswer:
        """Write each memory's step, then the dispute's new version (current from the last
        of those events): one answer naming what changed."""
        results = [self._write_step(tx, step, op_id, now) for step in steps]
        tx.put_dispute(dispute, results[-1]["seq"])
        return {"id": dispute.id, "status": dispute.status, "results": results}


def dispute_view(tx: StoreReader, dispute: Dispute) -> DisputeShown:
    """A dispute with each memory it names (id, kind, status, the start of its text)."""
    body: DisputeShown = {
        "id": dispute.id,
        "status": dispute.status,
        "version": dispute.version,
        "memories": [_memory_line(tx, memory_id) for memory_id in dispute.memory_ids],
        "reason": dispute.reason,
        "opened_at": dispute.opened_at,
        "opened_by": dispute.opened_by,
    }
    if dispute.ruling is not None:
        body["ruling"] = dispute.ruling.to_dict()
    return body


def disputes_of(tx: StoreReader, memory_id: str) -> list[DisputeShown]:
    """Every dispute naming `memory_id`, open or closed, for inspect."""
    return [dispute_view(tx, d) for d in tx.disputes(memory_id)]


def _memory_line(tx: StoreReader, memory_id: str) -> MemoryLine:
    memory = tx.get_memory(memory_id)
    if memory is None:
        return {"id": memory_id, "forgotten": True}
    text = memory.text if len(memory.text) <= SHOWN_TEXT else memory.text[:SHOWN_TEXT] + "…"
    return {"id": memory.id, "kind": memory.kind, "status": memory.status, "text": text}


def _open_between(tx: StoreReader, first: str, second: str) -> Dispute | None:
    return next((d for d in tx.disputes(first, ("open",)) if second in d.memory_ids), None)


def _find(tx: StoreReader, dispute_id: str) -> Dispute:
    found = tx.get_dispute(dispute_id)
    if found is None:
        raise NotFound(
            f"No dispute {gate.shown_reference(dispute_id)} in this workspace; "
            "dispute list shows them.",
            field="dispute",
        )
    return found


def _version_before(tx: StoreReader, memory_id: str, version: int | None) -> Memory | None:
    """The memory as it was just before its version `version` (None: scrubbed, or none)."""
    if version is None:
        return None
    versions = {v.version: v.memory for v in tx.memory_versions(memory_id)}
    return versions.get(version - 1)


def _action(action: Any) -> tuple[str, tuple[frozenset[str], frozenset[str]]]:
    chosen = action.strip().lower() if isinstance(action, str) else None
    if chosen not in ACTIONS:
        raise ValidationError(f"`action` must be one of {', '.join(ACTIONS)}.", field="action")
    return chosen, ACTIONS[chosen]


def _text(name: str, value: Any, limit_name: str = "note") -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"`{name}` must be a non-empty string: one sentence.", field=name)
    return gate.screen(name, value.strip(), limit_name=limit_name)


def _dispute_id(value: Any) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID:
        raise ValidationError("`dispute` must be a dispute id (dp_...).", field="dispute")
    return refuse_nul("dispute", value)
