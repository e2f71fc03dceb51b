"""Looking back and undoing: revert, forget, inspect and history."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..domain.errors import NotFound, ValidationError
from ..domain.model import Memory, Tombstone
from ..domain.views import text_diff
from ..revise import (
    Unmatched,
    changed_fields,
    check_expected_version,
    diff,
    notebook_plan,
    refuse_repeats,
    reverted,
    version_target,
)
from ..screening import gate
from ..store import EventFilter, StoreReader, StoreWriter
from .answers import (
    EventShown,
    ForgetAnswer,
    Forgotten,
    HistoryAnswer,
    InspectAnswer,
    RevertAnswer,
    Revised,
    revised,
)
from .base import check_version_arg, id_list, memory_id_arg, parse_time_arg, refuse_nul
from .checks import here, stale_by_evidence
from .disputes import disputes_of
from .guard import SEEN_PREFIX, GuardOps
from .notebooks import NotebookOps
from .pending import queued_view, waiting_writes
from .queueing import queued_on_replica
from .roles import check_forget, check_revert
from .settings import freshness_days
from .shown import (
    event_view,
    link_view,
    mark_disputed,
    mark_stale,
    memory_view,
    notebook_line,
    notebook_view,
    tombstone_view,
    version_views,
)
from .withdrawals import withdraw_disputes


class Reasons(NamedTuple):
    """Why a revert is made: `because` (the reason a rule may be weakened) and `note`."""

    because: str | None
    note: str | None


class HistoryOps(NotebookOps, GuardOps):  # forget reaches notebooks, kept commands
    @queued_on_replica("revert")
    def revert(
        self,
        *,
        id: str | None = None,
        version: int | None = None,
        notebook: str | None = None,
        as_of: str | None = None,
        because: str | None = None,
        note: str | None = None,
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> RevertAnswer:
        """Set a memory back to version N, or a notebook back to a past time, as new events,
        each keeping `note` (why), else `because`; refused as a conflict if the memory is no
        longer at `expected_version`."""
        if (id is None) == (notebook is None):
            raise ValidationError(
                "Pass `id` with `version`, or `notebook` with `as_of`.", field="id"
            )
        if id is not None and (version is None or as_of is not None):
            raise ValidationError("Reverting a memory takes `version`.", field="version")
        if notebook is not None and (as_of is None or version is not None):
            raise ValidationError("Reverting a notebook takes `as_of`.", field="as_of")
        check_version_arg(version)
        if expected_version is not None:
            if id is None:
                raise ValidationError(
                    "`expected_version` goes with `id`.", field="expected_version"
                )
            check_version_arg(expected_version, "expected_version")
        for name, value in (("because", because), ("note", note)):
            if value is not None:
                if not isinstance(value, str):
                    raise ValidationError(f"`{name}` must be a string.", field=name)
                gate.screen(name, value)
        as_of_t = parse_time_arg(as_of, "as_of")
        request = {
            "id": id,
            "version": version,
            "notebook": notebook,
            "as_of": as_of_t,
            "because": because,
        }
        if note is not None:  # a request made before revert took a note hashes as it did
            request["note"] = note
        if expected_version is not None:  # and one before it took a version, as it did
            request["expected_version"] = expected_version
        why = Reasons(because, note)

        def body(tx: StoreWriter, now: str, op_id: str) -> RevertAnswer:
            if id is not None:
                assert version is not None
                check_expected_version(self._get(tx, id), expected_version)
                return {"results": [self._revert_memory(tx, id, version, why, now, op_id)]}
            assert notebook is not None and as_of_t is not None
            nb = self._find_notebook(tx, notebook)
            return self._revert_notebook(tx, nb.id, as_of_t, why, now, op_id)

        answer = self._write("revert", request, idempotency_key, dry_run, body)
        if not dry_run:
            for item in answer["results"]:
                item.pop("diff", None)
        return answer

    def _revert_notebook(
        self, tx: StoreWriter, notebook_id: str, as_of: str, why: Reasons, now: str,
        op_id: str,
    ) -> RevertAnswer:  # fmt: skip
        """Each memory of the notebook back to its content and status at `as_of`."""
        seq = tx.seq_at(as_of)
        ids = {m.id for m in tx.memories_at(None, notebook_id)}
        ids |= {m.id for m in tx.memories_at(seq, notebook_id)}
        pasts = []
        for memory_id in sorted(ids):
            current = tx.get_memory(memory_id)
            if current is not None:
                then = [v.memory for v in tx.memory_versions(memory_id) if v.seq <= seq]
                pasts.append((current, then))
        lasts = {then[-1].notebook_id for _, then in pasts if then and then[-1] is not None}
        forgotten = {nb for nb in lasts if tx.get_notebook_tombstone(nb) is not None}
        plans, skipped = notebook_plan(pasts, as_of, forgotten)
        results = [
            self._apply_revert(tx, current, target, why, now, op_id, {"as_of": as_of})
            for current, target in plans
        ]
        answer: RevertAnswer = {"results": results}
        if skipped:
            answer["skipped"] = [{"id": s["id"], "reason": s["reason"]} for s in skipped]
        return answer

    def _revert_memory(
        self,
        tx: StoreWriter,
        memory_id: str,
        version: int,
        why: Reasons,
        now: str,
        op_id: str,
    ) -> Revised:
        current = self._get(tx, memory_id)
        check_revert(self.role, self.actor, current)  # before what its versions say
        versions = {v.version: v.memory for v in tx.memory_versions(memory_id)}
        target = version_target(current, versions, version)
        return self._apply_revert(tx, current, target, why, now, op_id, {"to_version": version})

    def _apply_revert(
        self,
        tx: StoreWriter,
        current: Memory,
        target: Memory,
        why: Reasons,
        now: str,
        op_id: str,
        data: dict[str, Any],
    ) -> Revised:
        check_revert(self.role, self.actor, current)
        # Who owns a memory is not part of what it says: a revert leaves it as it is now.
        step = reverted(current, target.replace(owner=current.owner), why.because, data, why.note)
        if step is None:
            return {"id": current.id, "version": current.version, "unchanged": True}
        try:
            self._check_key(tx, current, step.new)
        except Unmatched as exc:
            raise ValidationError(f"Refused: {exc.reason}.", field="key") from None
        result = revised(self._write_step(tx, step, op_id, now))
        result["changed"] = changed_fields(current, step.new)
        result["diff"] = diff(current, step.new)  # shown by a dry run only
        return result

    def forget(
        self,
        *,
        id: str | None = None,
        ids: list[str] | None = None,
        version: int | None = None,
        notebook: str | None = None,
        field: str | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        expected_version: int | None = None,
    ) -> ForgetAnswer:
        """Remove a memory (or one version of it), or a notebook's field (or the empty
        notebook), for good, leaving only a tombstone. With `expected_version` (one `id`),
        a memory changed since it was read is a conflict: a person confirms erasing what
        they were shown, not a version written meanwhile."""
        if notebook is not None and (id, ids, version) != (None, None, None):
            raise ValidationError(
                "Pass `notebook` (with `field`) or `id`/`ids`, not both.", field="notebook"
            )
        if notebook is None and field is not None:
            raise ValidationError("`field` names a field of the `notebook` given.", field="field")
        refuse_repeats(ids, "ids")  # as revise does: a slip, or two meant
        targets = id_list([id], "id") if id is not None else id_list(ids, "ids")
        if notebook is None and ((id is None) == (ids is None) or not targets):
            raise ValidationError("Pass `id` (or `ids`) of the memories to forget.", field="id")
        if not because or not isinstance(because, str):
            raise ValidationError(
                "`because` is required: say why this must not stay on disk. Forget is "
                "irreversible; to change or retire a memory, use revise.",
                field="because",
            )
        gate.screen("because", because)
        if notebook is not None:
            return self._forget_notebook(notebook, field, because, idempotency_key, dry_run)
        if targets and all(t.startswith(SEEN_PREFIX) for t in targets) and version is None:
            return self.forget_seen(
                targets, dry_run=dry_run
            )  # commands the guard kept (service/guard.py)
        if version is not None and len(targets) != 1:
            raise ValidationError(
                "`version` scrubs one version of one memory: pass one `id`.", field="version"
            )
        check_version_arg(version)
        request = {"ids": targets, "version": version, "because": because}
        if expected_version is not None:  # a request made before it hashes as it did
            check_version_arg(expected_version)
            if id is None or version is not None:
                raise ValidationError(
                    "`expected_version` goes with one `id`, forgotten whole.",
                    field="expected_version",
                )
            request["expected_version"] = expected_version

        def body(tx: StoreWriter, now: str, op_id: str) -> ForgetAnswer:
            results: list[Forgotten] = []
            for memory_id in targets:
                if tx.get_memory(memory_id) is None and tx.get_tombstone(memory_id) is not None:
                    results.append(self._forget_again(tx, memory_id))
                    continue
                memory = self._get(tx, memory_id)
                check_forget(self.role, self.actor, memory.owner)
                check_expected_version(memory, expected_version)
                if version is not None:
                    held = _held_fields(tx, memory_id, version) if dry_run else None
                    results.append(self._forget_version(tx, memory, version, because, now, op_id))
                    if held is not None and not results[-1].get("unchanged"):
                        # names and counts only: never the content itself
                        results[-1]["would_erase"] = {"versions": 1, "fields": held}
                    continue
                erased = _held_fields(tx, memory_id) if dry_run else None
                withdrawn = withdraw_disputes(self, tx, memory, now, op_id)  # texts go below
                seq = self._event(tx, "forget", op_id, now, memory, note=because)
                tx.forget_memory(Tombstone(memory_id, now, self.actor, because), seq)
                results.append({"id": memory_id, "forgotten": True, "versions": memory.version})
                if withdrawn:
                    results[-1]["disputes_withdrawn"] = withdrawn
                if erased is not None:  # names and counts only: never the content itself
                    results[-1]["would_erase"] = {"versions": memory.version, "fields": erased}
            return {"results": results}

        answer = self._write("forget", request, idempotency_key, dry_run, body)
        for item in answer["results"]:
            if item.pop("resumes_scrub", False):
                item["scrub_finished"] = answer.get("scrub_pending") is False
        return answer

    def _forget_again(self, tx: StoreReader, memory_id: str) -> Forgotten:
        """A forgotten id again: finish its scrub if one waits and this store can finish it.

        That is the retry of a client whose forget was cut off (a crash between commit and
        cleanup). Otherwise the id is gone, and says so.
        """
        tombstone = tx.get_tombstone(memory_id)
        assert tombstone is not None
        pending = any(p.target_id == memory_id for p in tx.pending_scrubs())
        if pending and self.store.scrubs_in_place:
            return {"id": memory_id, "forgotten": True, "unchanged": True, "resumes_scrub": True}
        later = (
            " Its bytes stay in the database's files until `palimpsest scrub` rewrites them."
            if pending
            else ""
        )
        raise NotFound(
            f"Memory {memory_id} was forgotten at {tombstone.forgotten_at}; only its "
            f"tombstone remains.{later}",
            field="id",
        )

    def _forget_version(
        self, tx: StoreWriter, memory: Memory, version: int, because: str, now: str, op_id: str
    ) -> Forgotten:
        if version == memory.version:
            raise ValidationError(
                f"Version {version} is the current one of {memory.id}. Revise it first (so a "
                "clean version is current), then forget this version; or forget the memory.",
                field="version",
            )
        if not 1 <= version < memory.version:
            raise NotFound(f"{memory.id} has no version {version}.", field="version")
        scrubbed = {v.version for v in tx.memory_versions(memory.id) if v.memory is None}
        if version in scrubbed:
            return {"id": memory.id, "version": version, "forgotten": True, "unchanged": True}
        self._event(tx, "forget_version", op_id, now, memory, note=because,
                    data={"version": version})  # fmt: skip
        tx.forget_version(memory.id, version)
        return {"id": memory.id, "version": version, "forgotten": True}

    def inspect(self, *, id: str | None = None, notebook: str | None = None) -> InspectAnswer:
        """One memory whole (versions, links), or one notebook with all its memories."""
        if (id is None) == (notebook is None):
            raise ValidationError("Pass `id` (a memory) or `notebook`.", field="id")
        with self.store.read(self.workspace) as tx:
            at = self.clock()
            if notebook is not None:
                if isinstance(notebook, str):
                    refuse_nul("notebook", notebook)
                gone = tx.get_notebook_tombstone(notebook) if isinstance(notebook, str) else None
                if gone is not None and tx.get_notebook(notebook) is None:
                    return {"tombstone": tombstone_view(gone)}
                nb = self._find_notebook(tx, notebook)
                memories = tx.memories_at(None, nb.id)
                return {
                    "notebook": notebook_view(nb),
                    "memories": [notebook_line(m) for m in memories],
                    "links": [link_view(link) for link in tx.links(nb.id)],
                }
            id = memory_id_arg(id)
            tombstone = tx.get_tombstone(id)
            if tombstone is not None:
                return {"tombstone": tombstone_view(tombstone)}
            memory = self._get(tx, id)
            shown = memory_view(memory, self._notebooks(tx), at, freshness_days(tx))
            mark_disputed([shown], tx.disputed_with([id]))
            mark_stale([shown], stale_by_evidence(here(tx, self.places), [memory]))
            answer: InspectAnswer = {
                "memory": shown,
                "versions": version_views(tx.memory_versions(id)),
                "links": [link_view(link) for link in tx.links(id)],
                "disputes": disputes_of(tx, id),
            }
        pending = [queued_view(w) for w in waiting_writes(self.store, self.workspace)
                   if w.target_id == id]  # fmt: skip
        if pending:
            answer["pending"] = pending
        self._record_served("inspect", {"id": id}, [(id, memory.version, None)])
        return answer

    def history(
        self,
        *,
        id: str | None = None,
        notebook: str | None = None,
        actor: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 100,
        diff_from: int | None = None,
        diff_to: int | None = None,
    ) -> HistoryAnswer:
        """Events by memory, notebook, actor or time; or the diff between two versions."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
            raise ValidationError("`limit` must be from 1 to 1000.", field="limit")
        with self.store.read(self.workspace) as tx:
            if diff_from is not None or diff_to is not None:
                return self._version_diff(tx, id, diff_from, diff_to)
            nb_id = self._find_notebook(tx, notebook).id if notebook is not None else None
            if id is not None and not (tx.get_memory(memory_id_arg(id)) or tx.get_tombstone(id)):
                self._get(tx, id)
            query = EventFilter(
                target_id=id,
                notebook_id=nb_id,
                actor=refuse_nul("actor", actor) if isinstance(actor, str) else actor,
                since=parse_time_arg(since, "since"),
                until=parse_time_arg(until, "until"),
                limit=limit,
            )
            events = tx.events(query)
            versions: dict[str, dict[int, Memory | None]] = {}
            views: list[EventShown] = []
            for event in events:
                changes = None
                if event.target_type == "memory" and event.version is not None:
                    if event.target_id not in versions:
                        versions[event.target_id] = {
                            v.version: v.memory for v in tx.memory_versions(event.target_id)
                        }
                    known = versions[event.target_id]
                    if known.get(event.version) is not None:
                        changes = diff(known.get(event.version - 1), known[event.version])
                views.append(event_view(event, changes))
        return {"events": views}

    def _version_diff(
        self, tx: StoreReader, id: str | None, old: int | None, new: int | None
    ) -> HistoryAnswer:
        if id is None or old is None or new is None:
            raise ValidationError(
                "A diff takes `id`, `diff_from` and `diff_to`.", field="diff_from"
            )
        current = self._get(tx, id)
        versions = {v.version: v.memory for v in tx.memory_versions(id)}
        for number, name in ((old, "diff_from"), (new, "diff_to")):
            if number not in versions:
                raise NotFound(f"{id} has versions 1 to {current.version}.", field=name)
            if versions[number] is None:
                raise ValidationError(f"Version {number} of {id} was forgotten.", field=name)
        before, after = versions[old], versions[new]
        assert before is not None and after is not None
        return {
            "id": id,
            "from": old,
            "to": new,
            "changes": diff(before, after),
            "text_diff": text_diff(before.text, after.text, f"v{old}", f"v{new}"),
        }


# The fields whose values a forget erases, as a dry run names them.
_CONTENT_FIELDS = ("title", "key", "text", "why", "falsifier", "source", "tags", "anchors",
                   "check", "bindings", "status_note")  # fmt: skip


def _held_fields(tx: StoreReader, memory_id: str, version: int | None = None) -> list[str]:
    """The content fields that hold a value in any version still on disk (or in `version`)."""
    versions = [
        v.memory
        for v in tx.memory_versions(memory_id)
        if v.memory is not None and version in (None, v.version)
    ]
    return [name for name in _CONTENT_FIELDS if any(getattr(m, name) for m in versions)]
