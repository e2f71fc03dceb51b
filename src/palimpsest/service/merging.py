"""merge: keep one memory and retire others that say the same thing as superseded by it.

The review queue's consolidation (duplicates.py finds the groups): each memory merged
away goes through revise's own step for `status` superseded with `superseded_by`, so its
event, its `supersedes` link, the withdrawal of its open disputes, its history, `as_of`
and `revert` are revise's. All of them in one transaction under one operation id, one
event per retired memory; any refusal leaves everything as it was.

Who may merge away a memory is who may rule against it in a dispute: its owner, anyone
on an ownerless one, else an editor or owner of the workspace, whose `because` stands as
the override's reason (recorded in the event as `override_reason`). The kept memory is
not changed: tags and links of the retired ones stay on them, reachable from the kept
one through its `supersedes` links (moving them would write a version of the kept memory
its owner did not ask for, and a retirement undone by `revert` would leave them doubled).
"""

from __future__ import annotations

from typing import Any

from ..domain.errors import Conflict, Forbidden, ValidationError
from ..domain.model import RULE_KINDS, Memory
from ..revise import Unmatched, parse_changes, refuse_repeats
from ..screening import gate
from ..store import StoreReader, StoreWriter
from .answers import MergeAnswer, Revised
from .base import id_list, memory_id_arg
from .memories import MemoryOps, _Target
from .queueing import queued_on_replica
from .roles import check_write

MAX_MERGED = 100  # memories retired by one merge: a group, not a notebook


class MergeOps(MemoryOps):
    @queued_on_replica("merge")
    def merge(
        self,
        *,
        keep: str,
        ids: list[str] | str,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> MergeAnswer:
        """Keep `keep`; retire each of `ids` as superseded by it, giving `because` (required:
        refused as any missing field is, by the service, for every adapter alike)."""
        check_write("merge", self.role)
        keep = memory_id_arg(keep, "keep")
        refuse_repeats(ids, "ids")
        merged = id_list(ids, "ids")
        if not merged:
            raise ValidationError("`ids` names the memories to retire: at least one.", field="ids")
        if len(merged) > MAX_MERGED:
            raise ValidationError(
                f"`ids` takes at most {MAX_MERGED} memories per merge.", field="ids"
            )
        for memory_id in merged:
            memory_id_arg(memory_id, "ids")
        if keep in merged:
            raise ValidationError(
                f"{gate.shown_reference(keep)} is the memory kept: leave it out of `ids`, "
                "which are the ones retired.",
                field="ids",
            )
        if not isinstance(because, str) or not because.strip():
            raise ValidationError(
                "`because` is required: one sentence saying why these say the same thing, "
                "kept in each retired memory's history.",
                field="because",
            )
        because = gate.screen("because", because.strip())
        request = {"keep": keep, "ids": merged, "because": because}

        def body(tx: StoreWriter, now: str, op_id: str) -> MergeAnswer:
            kept = self._kept(tx, keep, now)
            targets = [self._merged_away(tx, memory_id, keep, because) for memory_id in merged]
            results: list[Revised] = []
            for target in targets:
                try:
                    results.append(self._revise_one(tx, target, now, op_id, dry_run))
                except Unmatched as exc:  # checked above: only a key or a status raced here
                    raise Conflict(f"Refused: {exc.reason}.", field="ids") from None
            now_kept = tx.get_memory(kept.id)  # a dispute with it withdrawn touched it
            version = now_kept.version if now_kept is not None else kept.version
            return {"id": kept.id, "version": version, "superseded": results}

        return self._write("merge", request, idempotency_key, dry_run, body)

    def _kept(self, tx: StoreReader, keep: str, now: str) -> Memory:
        kept = self._get(tx, keep, field="keep")
        if kept.status != "active" or kept.expired(now):
            state = kept.status if kept.status != "active" else "expired"
            raise ValidationError(
                f"{kept.id} is {state}: the memory kept must be active. Reactivate it with "
                "revise (status active) first, or keep another one.",
                field="keep",
            )
        return kept

    def _merged_away(self, tx: StoreReader, memory_id: str, keep: str, because: str) -> _Target:
        """The revise target that retires `memory_id` as superseded by `keep`, refused
        (nothing is written yet) when it is not active or not the caller's to retire."""
        memory = self._get(tx, memory_id, field="ids")
        if memory.status != "active":
            already = f" by {memory.superseded_by}" if memory.superseded_by else ""
            raise Conflict(
                f"{memory.id} is {memory.status}{already} already: only active memories are "
                "merged. Leave it out of `ids`.",
                field="ids",
            )
        changes: dict[str, Any] = {"status": "superseded", "superseded_by": keep, "note": because}
        if memory.kind in RULE_KINDS:
            changes["because"] = because  # retiring a rule weakens it: its reason is kept
        if memory.owner not in (None, self.actor):
            if not self.may_override:
                raise Forbidden(
                    f"{memory.id} belongs to {memory.owner}; only an editor or owner of the "
                    "workspace may merge it away. Ask one to merge, or leave it out of `ids`.",
                    field="ids",
                )
            changes |= {"override_reason": because, "override_confirm": True}
        return _Target(memory, parse_changes(changes), None, memory_id)
